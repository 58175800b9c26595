#!/bin/bash
# apply --confirm's way back is never lost nor misdirected (cli/confirm.h):
# two applies with --confirm back to back (the second queued with --wait)
# keep the first way back, the second refused with a clear message; a
# namespace deleted and made again under the same name before the deadline
# is left alone (the reverter holds the namespace it was armed in, not its
# name).
source "$(dirname "$0")/lib.sh"
make_ns
export TCSYNC_RUN_DIR=$TMP/run
htb() { printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", default: "1:%s"}]\n' "$1"; }
htb 30 >"$TMP/a.yaml"
htb 40 >"$TMP/b.yaml"
htb 50 >"$TMP/c.yaml"
# Many rules, so that the first apply holds the lock a while.
{ htb 40; echo '    filters:'
  for i in $(seq 3000); do
    echo "      - {parent: \"1:\", pref: 30, protocol: ip, u32: {match: [{ip: {dst: 10.1.$((i / 256)).$((i % 256))/32}}]}, classid: \"1:40\"}"
  done; } >"$TMP/big.yaml"
expect_rc 0 ts apply "$TMP/a.yaml"
snapshot >"$TMP/a.json"

# wait_state FILE SECONDS: until the snapshot equals FILE (or the time is up).
wait_state() {
  local end=$(($(date +%s) + $2))
  while [ "$(date +%s)" -le "$end" ]; do
    snapshot >"$TMP/now.json"
    cmp -s "$1" "$TMP/now.json" && return 0
    sleep 0.2
  done
  return 1
}

echo "# two apply --confirm back to back: one applies and keeps its way back, the other is refused"
# Both queue (--wait) on the namespace's lock: a long apply (3000 rules)
# and a short one 0.1 s later, then two short ones at once. Whichever gets
# the lock first applies; the other then finds its pending file (locked
# before it had a name) and is refused. The old code could find it before
# the reverter held it, take it for stale and delete it: both applied, and
# a way back was lost.
for try in 1 2 3 4 5 6 7 8 9 10; do
  first=$TMP/big.yaml pause=0.1
  [ "$try" -gt 2 ] && first=$TMP/b.yaml pause=0
  "$TCSYNC" --netns "$NS" apply --wait --confirm 2 "$first" >"$TMP/first.out" 2>&1 &
  FIRST=$!
  sleep "$pause"
  r2=0; "$TCSYNC" --netns "$NS" apply --wait --confirm 2 "$TMP/c.yaml" >"$TMP/second.out" 2>&1 || r2=$?
  r1=0; wait "$FIRST" || r1=$?
  if [ "$r1$r2" = 01 ] && grep -q "an apply --confirm is pending in this namespace" "$TMP/second.out"; then
    pass "try $try: the first applied, the second refused (an apply --confirm is pending)"
  elif [ "$r1$r2" = 10 ] && grep -q "an apply --confirm is pending in this namespace" "$TMP/first.out"; then
    pass "try $try: the second was first to the lock and applied, the first refused (an apply --confirm is pending)"
  else
    fail "try $try: exit codes $r1 and $r2 (want one 0, one 1 refused as pending)"; cat "$TMP/first.out" "$TMP/second.out" | sed 's/^/    /'
  fi
  wait_state "$TMP/a.json" 12 && pass "try $try: the state before both came back" ||
    { fail "try $try: not back to the state before both"; cat "$TCSYNC_RUN_DIR"/*.log; }
  # The reverter is done once its files are gone.
  for i in $(seq 50); do ls "$TCSYNC_RUN_DIR" | grep -q 'pending.yaml' || break; sleep 0.1; done
done

echo "# a namespace re-created under the same name is left alone by the revert"
OLD_INO=$(stat -L -c %i "/run/netns/$NS")
expect_rc 0 ts apply --confirm 3 "$TMP/b.yaml"
ip netns del "$NS"
make_ns
t qdisc add dev v0 root handle 7: htb default 7
snapshot >"$TMP/new.json"
sleep 5
LOG=$TCSYNC_RUN_DIR/netns-$OLD_INO.pending.log
for i in $(seq 50); do grep -q 'applied\|nothing to do\|error' "$LOG" 2>/dev/null && break; sleep 0.2; done
grep -q 'not confirmed by the deadline' "$LOG" && pass "the reverter reverted (in the namespace it was armed in)" ||
  { fail "no revert in the log"; cat "$LOG"; }
snapshot >"$TMP/now.json"
expect_same_file "$TMP/new.json" "$TMP/now.json" "the new namespace of the same name is untouched"
expect_rc 1 ts confirm
expect_contains "nothing to confirm"
finish
