#!/bin/bash
# The whole test suite: installs dependencies, builds, and runs every test
# through ctest: unit tests (no root) and kernel tests (root; each in a
# throwaway network namespace on this machine's kernel).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --tests
scripts/build.sh
cd build
if [ $# -gt 0 ]; then exec ctest --output-on-failure "$@"; fi
# Host tests one at a time (some time signals and device deletions, and
# would race a busy neighbour); then the lab's guests, one vCPU each, two
# side by side: the machine has two cores and the lab is most of the time.
rc=0
ctest --output-on-failure -j1 -LE lab || rc=1
ctest --output-on-failure -j2 -L lab || rc=1
exit $rc
