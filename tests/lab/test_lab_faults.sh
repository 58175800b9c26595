#!/bin/bash
# In the kernel lab: the fault-injection suite of tests/kernel/test_faults.sh
# (a refused step in the middle of an apply, a tiny receive buffer, SIGTERM
# and SIGKILL at several points, two writers, the device deleted mid-apply)
# with flower rules and gact verdicts, which this host's kernel lacks. The
# host runs it at 10k and 20k u32 rules; here each snapshot of 10k flower
# rules costs seconds of TCG, so the states snapshotted hold 2k (N), and the
# change that the signals interrupt is to 10k (BIG: 2k verdicts changed, 8k
# rules added), long enough that the first three SIGTERMs (0.075-0.6 s after
# the plan, scaled by 1.5) land while it is sent and are rolled back.
# (At N = BIG = 10k, scale 8, it took 323 s of the lab; now about 170 s.)
FAULT_KIND=flower FAULT_N=2000 FAULT_BIG=10000 FAULT_TIME_SCALE=1.5 source "$(dirname "$0")/../kernel/test_faults.sh"
