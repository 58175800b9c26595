#!/bin/bash
# Fault injection on the real kernel. After each fault the namespace's whole
# tc state (tc -j, counters aside) equals the state before the apply, or the
# state after a clean finish.
source "$(dirname "$0")/lib.sh"
GEN="python3 $(dirname "$0")/gen_u32.py"
export TCSYNC_RUN_DIR=$TMP/run
make_ns 4
t qdisc add dev v2 clsact
t filter add dev v2 ingress pref 1 protocol ip u32 match ip src 198.51.100.0/24 action mirred egress redirect dev v3
t qdisc add dev v0 root handle 9: tbf rate 1mbit burst 10kb limit 20kb
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 1 protocol ip u32 match ip src 192.0.2.0/24 action mirred egress redirect dev v0
snapshot >"$TMP/before.txt"

# 1. A step the kernel refuses in the middle of a 10k-step apply: rolled back.
$GEN 10000 5000 >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "$TMP/bad.yaml:5010:9: error: kernel rejected add of v0 filter u32 1: pref 105 protocol ip handle ::1"
expect_contains "the kernel is as it was before this apply"
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/before.txt" "$TMP/now.txt" "10k apply with a refused step 5000: state as before"

# 2. A tiny receive buffer (4 KiB asked): no ACK lost, the apply is whole.
$GEN 10000 >"$TMP/good.yaml"
TCSYNC_NL_RCVBUF=4096 expect_rc 0 ts apply "$TMP/good.yaml"
TCSYNC_NL_RCVBUF=4096 expect_rc 0 ts diff "$TMP/good.yaml"
n=$(t filter show dev v0 parent 1: | grep -c 'flowid 1:10')
[ "$n" = 10000 ] && pass "10000 rules in the kernel with a 4 KiB receive buffer" || fail "$n rules (want 10000)"
snapshot >"$TMP/good-state.txt"

# 3. SIGTERM at several points of a 20k-rule change: exit 143 and the state
# found, or exit 0 and the whole new state.
$GEN 20000 - 1:20 >"$TMP/other.yaml"
for delay in 0.05 0.2 0.4 0.7 1.0; do
  rc=0
  "$TCSYNC" --netns "$NS" apply "$TMP/other.yaml" >"$TMP/term.out" 2>&1 &  # not via ts(): $! must be tcsync
  pid=$!
  sleep $delay
  kill -TERM $pid 2>/dev/null || true
  wait $pid || rc=$?
  snapshot >"$TMP/now.txt"
  if [ $rc = 143 ]; then
    expect_same_file "$TMP/good-state.txt" "$TMP/now.txt" "SIGTERM after ${delay}s: exit 143, state as before" ||
      grep -v '^[-+~] ' "$TMP/term.out"
  elif [ $rc = 0 ]; then
    expect_rc 0 ts diff "$TMP/other.yaml"
    ts apply "$TMP/good.yaml" >/dev/null
  else
    fail "SIGTERM after ${delay}s: exit $rc"; cat "$TMP/term.out"
  fi
done

# 4. SIGKILL at several points: the kernel holds a part; the next apply converges.
for delay in 0.1 0.3 0.6; do
  "$TCSYNC" --netns "$NS" apply "$TMP/other.yaml" >/dev/null 2>&1 &
  pid=$!
  sleep $delay
  kill -KILL $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  expect_rc 0 ts apply "$TMP/good.yaml"
  expect_rc 0 ts diff "$TMP/good.yaml"
done
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/good-state.txt" "$TMP/now.txt" "after SIGKILLs, apply converged to the same state"

# 5. Two writers: a held lock is named, and --wait queues behind it.
ino=$(stat -L -c %i /run/netns/"$NS")
mkdir -p "$TMP/run"
flock "$TMP/run/netns-$ino.lock" sleep 2 &
holder=$!
sleep 0.3
expect_rc 1 ts apply "$TMP/other.yaml"
expect_contains "another tcsync is changing this network namespace"
start=$(date +%s.%N)
expect_rc 0 ts apply --wait "$TMP/other.yaml"
waited=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
python3 -c "import sys; sys.exit(0 if $waited >= 1.0 else 1)" && pass "--wait queued ${waited}s behind the holder" || fail "--wait returned after ${waited}s"
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
timeout 60 "$TCSYNC" --netns "$NS" apply "$TMP/other.yaml" >"$TMP/gone.out" 2>&1 &
pid=$!
sleep 0.2
ip -n "$NS" link del v0
wait $pid || rc=$?
case $rc in
  0) pass "device deleted after the apply finished (exit 0)";;
  1) grep -q "error" "$TMP/gone.out" && pass "device deleted during apply: exit 1 with an error" || fail "exit 1 without an error";;
  *) fail "device deleted during apply: exit $rc"; cat "$TMP/gone.out";;
esac
OUT=$(t filter show dev v2 ingress)
expect_contains "match c6336400/ffffff00 at 12"
finish
