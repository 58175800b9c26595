#!/bin/bash
# Inside the kernel lab: run tdc cases through tcsync (tdc_roundtrip.py).
# usage (from the host): tests/lab/run-in-lab.sh tests/tdc/lab-job.sh TCSYNC [ARGS...]
set -euo pipefail
tcsync=$1; shift
exec python3 "$(dirname "$0")/tdc_roundtrip.py" "$tcsync" "$@"
