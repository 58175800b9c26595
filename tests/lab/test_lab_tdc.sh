#!/bin/bash
# In the kernel lab: a representative subset of the kernel's own tc selftests
# (tdc, tests/tdc/ci-cases.txt), each case's state -> tcsync dump -> flush ->
# apply -> the same tc -j state, diff in sync, a second dump identical
# (docs/tdc.md). Every listed case must pass; the whole corpus is
# tests/tdc/run_tdc.py.
set -euo pipefail
TCSYNC=$(realpath "${1:?usage: $0 path/to/tcsync}")
TDC=$(cd "$(dirname "$0")/../tdc" && pwd)
exec python3 "$TDC/tdc_roundtrip.py" "$TCSYNC" --cases "$TDC/ci-cases.txt" --expect-pass
