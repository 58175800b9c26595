#!/bin/bash
# The flower bench in the kernel lab (the host kernel has no flower):
#   LAB_MEM=2048 LAB_TIMEOUT=3000 bash tests/lab/run-in-lab.sh bench/lab_flower.sh TCSYNC [SETS...]
# TCG emulation: only the tcsync/tc ratios mean anything.
set -euo pipefail
TCSYNC=$(realpath "$1"); shift
SETS=${*:-flower:10k}
python3 "$(dirname "$0")/run.py" --runs "${RUNS:-3}" --scenarios "${SCENARIOS:-apply,noop,dump}" "$TCSYNC" $SETS
