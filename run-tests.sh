#!/bin/bash
# The whole test suite: installs dependencies, builds, and runs every test
# through ctest: unit tests (no root) and kernel tests (root; each in a
# throwaway network namespace on this machine's kernel).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh --tests
scripts/build.sh
cd build
ctest --output-on-failure -j1 "$@"
