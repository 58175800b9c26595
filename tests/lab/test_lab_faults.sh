#!/bin/bash
# In the kernel lab: the fault-injection suite of tests/kernel/test_faults.sh
# (a refused step in the middle of 10k, a tiny receive buffer, SIGTERM and
# SIGKILL at several points, two writers, the device deleted mid-apply) with
# flower rules and gact verdicts, which this host's kernel lacks.
FAULT_KIND=flower FAULT_BIG=10000 FAULT_TIME_SCALE=8 source "$(dirname "$0")/../kernel/test_faults.sh"
