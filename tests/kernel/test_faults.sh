#!/bin/bash
# Fault injection on the real kernel. After each fault the namespace's whole
# tc state (tc -j, counters aside) equals the state before the apply, or the
# state after a clean finish.
# FAULT_KIND picks the rules: u32 (htb root, classid; this host's kernel) or
# flower (clsact ingress, gact; tests/lab/test_lab_faults.sh runs it there).
HERE=$(dirname "${BASH_SOURCE[0]}")
source "$HERE/lib.sh"
KIND=${FAULT_KIND:-u32}
# The lab's emulated CPU is about 10x slower: fewer rules (N for the refused
# step and the small receive buffer, BIG for the signal and lock scenarios),
# and signal delays scaled so they still land mid-apply.
N=${FAULT_N:-10000}  # a multiple of 2000: the refused step is the first of its pref
BIG=${FAULT_BIG:-20000}
SCALE=${FAULT_TIME_SCALE:-1}
later() { awk -v d="$1" -v s="$SCALE" 'BEGIN { print d * s }'; }
# Action indexes are the kernel's numbering, not state a file declares.
export TC_SNAPSHOT_DROP=index
# Starts an apply of FILE in the background ($pid; output in $TMP/run.out)
# and returns once it has planned, i.e. is about to send.
start_apply() {
  "$TCSYNC" --netns "$NS" -v apply "$1" >"$TMP/run.out" 2>&1 &  # not via ts(): $! must be tcsync
  pid=$!
  for _ in $(seq 6000); do
    grep -q "plan of" "$TMP/run.out" 2>/dev/null && return
    kill -0 $pid 2>/dev/null || return
    sleep 0.01
  done
}
GEN="python3 $HERE/gen_$KIND.py"
case $KIND in
  u32)
    BAD_STEP="kernel rejected add of v0 filter u32 1: pref $((100 + N / 2000)) protocol ip handle ::1"
    count_rules() { t filter show dev v0 parent 1: | grep -c 'flowid 1:10'; };;
  flower)
    BAD_STEP="kernel rejected add of v0 filter flower ingress pref $((100 + N / 2000)) protocol ip handle 0x1"
    count_rules() { t filter show dev v0 ingress | grep -c 'action order 1: gact action drop'; };;
esac
export TCSYNC_RUN_DIR=$TMP/run
make_ns 4
t qdisc add dev v2 clsact
t filter add dev v2 ingress pref 1 protocol ip u32 match ip src 198.51.100.0/24 action mirred egress redirect dev v3
t qdisc add dev v0 root handle 9: tbf rate 1mbit burst 10kb limit 20kb
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 1 protocol ip u32 match ip src 192.0.2.0/24 action mirred egress redirect dev v0
snapshot >"$TMP/before.txt"

# 1. A step the kernel refuses in the middle of an N-step apply: rolled back.
$GEN "$N" $((N / 2)) >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
# The kernel names the refused attribute (indev): the error is at its value,
# the rule's line a note.
bad_line=$(grep -n nosuch0 "$TMP/bad.yaml" | head -1 | cut -d: -f1)
bad_col=$(awk -v l="$bad_line" 'NR == l { print index($0, "nosuch0") }' "$TMP/bad.yaml")
expect_contains "$TMP/bad.yaml:$bad_line:$bad_col: error: $BAD_STEP: indev: "
expect_contains "$TMP/bad.yaml:$bad_line:9: note: in this object"
expect_contains "the kernel is as it was before this apply"
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/before.txt" "$TMP/now.txt" "$N-step apply with a refused step $((N / 2)): state as before"

# 2. A tiny receive buffer (4 KiB asked): no ACK lost, the apply is whole.
$GEN "$N" >"$TMP/good.yaml"
TCSYNC_NL_RCVBUF=4096 expect_rc 0 ts apply "$TMP/good.yaml"
TCSYNC_NL_RCVBUF=4096 expect_rc 0 ts diff "$TMP/good.yaml"
n=$(count_rules)
[ "$n" = "$N" ] && pass "$N rules in the kernel with a 4 KiB receive buffer" || fail "$n rules (want $N)"
snapshot >"$TMP/good-state.txt"

# 3. SIGTERM at several points of a 20k-rule change (BIG): exit 143 and the
# state found, or the whole new state (exit 0, or 143 when the signal came
# after the last step was acknowledged).
$GEN "$BIG" - b >"$TMP/other.yaml"
# (Delays computed before: a process started between the plan and the
# signal would add its own start-up time on a busy machine.)
for delay in $(for d in 0.05 0.2 0.4 0.7 1.0; do later $d; done); do
  rc=0
  start_apply "$TMP/other.yaml"
  sleep "$delay"
  kill -TERM $pid 2>/dev/null || true
  wait $pid || rc=$?
  snapshot >"$TMP/now.txt"
  if [ $rc = 143 ] && ! cmp -s "$TMP/good-state.txt" "$TMP/now.txt" && ts diff "$TMP/other.yaml" >/dev/null; then
    # The signal came after every step was in and acknowledged (verify by
    # echo made that tail short, so a late delay can land there): the
    # whole new state, nothing half-done.
    pass "SIGTERM ${delay}s: after the last step: the whole new state"
    ts apply "$TMP/good.yaml" >/dev/null
  elif [ $rc = 143 ]; then
    expect_same_file "$TMP/good-state.txt" "$TMP/now.txt" "SIGTERM ${delay}s into sending: exit 143, state as before" ||
      grep -v '^[-+~] ' "$TMP/run.out"
  elif [ $rc = 0 ]; then
    expect_rc 0 ts diff "$TMP/other.yaml"
    ts apply "$TMP/good.yaml" >/dev/null
  else
    fail "SIGTERM ${delay}s into sending: exit $rc"; grep -v '^[-+~] ' "$TMP/run.out"
  fi
done

# 4. SIGKILL at several points: the kernel holds a part; the next apply converges.
for delay in $(for d in 0.1 0.3 0.6; do later $d; done); do
  start_apply "$TMP/other.yaml"
  sleep "$delay"
  kill -KILL $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  expect_rc 0 ts apply "$TMP/good.yaml"
  expect_rc 0 ts diff "$TMP/good.yaml"
done
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/good-state.txt" "$TMP/now.txt" "after SIGKILLs, apply converged to the same state"

# 5. Two writers: a held lock is named, and --wait queues behind it. The
# holder keeps the lock until told to let go, however slow the machine.
ino=$(stat -L -c %i /run/netns/"$NS")
mkdir -p "$TMP/run"
LOCK=$TMP/run/netns-$ino.lock
touch "$TMP/hold"
(exec 9>>"$LOCK"; ofd_lock 9; while [ -e "$TMP/hold" ]; do sleep 0.1; done) &
holder=$!
until [ -e "$LOCK" ] && ofd_locked "$LOCK"; do sleep 0.1; done
expect_rc 1 ts apply "$TMP/other.yaml"
expect_contains "another tcsync is changing this network namespace"
"$TCSYNC" --netns "$NS" apply --wait "$TMP/other.yaml" >"$TMP/wait.out" 2>&1 &
waiter=$!
sleep "$(later 1)"
if kill -0 $waiter 2>/dev/null; then pass "--wait queues while the lock is held"; else fail "--wait did not wait"; cat "$TMP/wait.out"; fi
rm "$TMP/hold"
rc=0; wait $waiter || rc=$?
[ $rc = 0 ] && pass "--wait applied once the holder let go" || { fail "--wait: exit $rc"; cat "$TMP/wait.out"; }
wait $holder
# Two concurrent applies with --wait: both finish, the later one wins, in sync.
ts apply --wait "$TMP/good.yaml" >/dev/null 2>&1 & a=$!
ts apply --wait "$TMP/other.yaml" >/dev/null 2>&1 & b=$!
ra=0; rb=0; wait $a || ra=$?; wait $b || rb=$?
[ $ra = 0 ] && [ $rb = 0 ] && pass "two concurrent applies both succeeded" || fail "concurrent applies: rc $ra and $rb"
if ts diff "$TMP/good.yaml" >/dev/null 2>&1 || ts diff "$TMP/other.yaml" >/dev/null 2>&1; then
  pass "the namespace equals one of the two files"; else fail "the namespace equals neither file"; fi

# 6. The device disappears during an apply (v0, and its peer v1 with it): an
# error, not a hang or a crash; the device the file does not name is untouched.
ts apply "$TMP/good.yaml" >/dev/null 2>&1
rc=0
timeout "$(later 60)" "$TCSYNC" --netns "$NS" apply "$TMP/other.yaml" >"$TMP/gone.out" 2>&1 &
pid=$!
sleep "$(later 0.2)"
ip -n "$NS" link del v0
wait $pid || rc=$?
case $rc in
  0) pass "device deleted after the apply finished (exit 0)";;
  1) grep -q "error" "$TMP/gone.out" && pass "device deleted during apply: exit 1 with an error" || { cat "$TMP/gone.out"; fail "exit 1 without an error"; };;
  *) fail "device deleted during apply: exit $rc"; cat "$TMP/gone.out";;
esac
OUT=$(t filter show dev v2 ingress)
expect_contains "match c6336400/ffffff00 at 12"
finish
