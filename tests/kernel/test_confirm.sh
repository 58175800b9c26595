#!/bin/bash
# apply --confirm SECONDS: not confirmed -> the state before comes back (tc -j
# identical); confirmed -> the applied state stays; the applier killed with
# SIGKILL right after applying -> the revert still happens (the reverter is
# a separate process, no child of the applier).
source "$(dirname "$0")/lib.sh"
make_ns
export TCSYNC_RUN_DIR=$TMP/run  # pending files of this test only
base() {
  cat <<YAML
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:10", rate: $1, ceil: 20mbit}
      - {classid: "1:30", rate: 1mbit, ceil: 20mbit}
    filters:
      - {parent: "1:", pref: 10, protocol: ip, u32: {match: [{ip: {dport: 22}}]}, classid: "1:10"}
YAML
}
base 10mbit >"$TMP/a.yaml"
# b: another rate, a class more, and a device (v2) that had nothing before.
# (No new u32 list: the kernel numbers its tables anew each time, so tc -j
# of a re-made list differs in its handles.)
{ base 15mbit | sed 's|^    filters:|      - {classid: "1:20", rate: 2mbit}\n    filters:|'
  echo '  v2:'; echo '    qdiscs: [{kind: htb, handle: "2:"}]'; } >"$TMP/b.yaml"
ip -n "$NS" link add v2 type veth peer name v3
ip -n "$NS" link set v2 up
ip -n "$NS" link set v3 up
# to_a: the state a.yaml makes, and nothing on v2 (a does not declare it).
to_a() {
  expect_rc 0 ts apply "$TMP/a.yaml"
  t qdisc del dev v2 root 2>/dev/null || true
}
to_a
snapshot >"$TMP/a.json"
expect_rc 0 ts apply "$TMP/b.yaml"
snapshot >"$TMP/b.json"
to_a

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

echo "# not confirmed: the state before comes back"
expect_rc 0 ts apply --confirm 6 "$TMP/b.yaml"
expect_contains "confirm\` within 6 s"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/b.json" "$TMP/now.json" "right after apply --confirm: the new state"
expect_rc 1 ts apply --confirm 2 "$TMP/a.yaml"
expect_contains "an apply --confirm is pending"
wait_state "$TMP/a.json" 12 && pass "after the deadline: tc -j equals the state before" || { fail "not reverted"; cat "$TMP"/run/*.log; }
expect_rc 0 ts diff "$TMP/a.yaml"
expect_rc 1 ts confirm
expect_contains "nothing to confirm"
# --format json: one line on stdout whatever the outcome.
rc=0; ts --format json confirm >"$TMP/confirm1.json" 2>/dev/null || rc=$?
[ "$rc" = 1 ] && pass "json: nothing pending, rc 1" || fail "json: nothing pending, rc $rc"
expect_json_valid "$SCHEMAS/confirm.schema.json" "$TMP/confirm1.json" '"result":"nothing-pending"'

echo "# confirmed in time: the new state stays"
expect_rc 0 ts apply --confirm 2 "$TMP/b.yaml"
expect_rc 0 ts confirm
expect_contains "confirmed"
sleep 3
snapshot >"$TMP/now.json"
expect_same_file "$TMP/b.json" "$TMP/now.json" "after the deadline, confirmed: the new state"
to_a

echo "# the applier killed with SIGKILL once its changes are in (mid-apply or right after): the revert still happens"
# The reverter is started before the first request; the applier is killed
# once the kernel shows its first changes (on a loaded machine the apply may
# have ended by then; the revert must come either way).
# c: b and 4000 rules more, so that the apply takes a while.
{ cat "$TMP/b.yaml" | sed '/^  v2:/,$d'
  for i in $(seq 4000); do
    echo "      - {parent: \"1:\", pref: 30, protocol: ip, u32: {match: [{ip: {dst: 10.1.$((i / 256)).$((i % 256))/32}}]}, classid: \"1:30\"}"
  done
  sed -n '/^  v2:/,$p' "$TMP/b.yaml"; } >"$TMP/c.yaml"
"$TCSYNC" --netns "$NS" apply --confirm 4 "$TMP/c.yaml" >"$TMP/apply.out" 2>&1 &
APPLIER=$!
REVERTER=""
for i in $(seq 200); do
  REVERTER=$(pgrep -f "revert-pending --deadline-ms .* $TMP/run/" || true)
  [ -n "$REVERTER" ] && break
  sleep 0.02
done
# Killed once the first changes are in (class 1:20 comes before the rules).
for i in $(seq 250); do
  t class show dev v0 classid 1:20 | grep -c . >/dev/null && break
  sleep 0.02
done
kill -KILL "$APPLIER" 2>/dev/null && echo "    applier killed while running" || echo "    applier had already exited"
echo "    at the kill: $(t class show dev v0 | grep -c .) classes on v0, $(t filter show dev v0 parent 1: pref 30 | grep -c 'flowid 1:30') of 4000 rules"
t class show dev v0 classid 1:20 | grep -c . >/dev/null && pass "the apply had changed the kernel when killed" || fail "nothing applied before the kill"
wait "$APPLIER" 2>/dev/null || true
[ -n "$REVERTER" ] || { echo "    applier output:"; head -20 "$TMP/apply.out" | sed "s/^/    /"; }
[ -n "$REVERTER" ] && pass "a reverter is running (pid $REVERTER)" || fail "no reverter process"
[ -n "$REVERTER" ] && [ "$(ps -o ppid= -p "$REVERTER" | tr -d ' ')" != "$APPLIER" ] && pass "the reverter is not the applier's child" || fail "the reverter's parent"
wait_state "$TMP/a.json" 10 && pass "after the deadline: tc -j equals the state before" || { fail "not reverted after SIGKILL"; cat "$TMP"/run/*.log; }
ls "$TMP/run" | grep -c pending.yaml >/dev/null && fail "a pending file is left" || pass "no pending file left"

# A pending file whose reverter was killed (a unit's cgroup stopped, say):
# nothing holds it, so it blocks nothing. confirm says no reverter ran; a
# new --confirm replaces it.
PENDING=$TMP/run/netns-$(stat -L -c %i "/run/netns/$NS").pending.yaml
cp "$TMP/a.yaml" "$PENDING" 2>/dev/null || echo "version: 1" >"$PENDING"
rc=0; ts --format json confirm >"$TMP/confirm2.json" 2>"$TMP/confirm2.err" || rc=$?
[ "$rc" = 0 ] && pass "json: confirmed with no reverter, rc 0" || fail "json: rc $rc"
OUT=$(cat "$TMP/confirm2.err")
expect_contains "no reverter was running"
expect_json_valid "$SCHEMAS/confirm.schema.json" "$TMP/confirm2.json" '"reverter_was_running":false'
echo "version: 1" >"$PENDING"
base 12mbit >"$TMP/c.yaml"
expect_rc 0 ts apply --confirm 5 "$TMP/c.yaml"  # short: its reverter ends soon after the confirm
expect_contains "left by a reverter that no longer runs: removed"
rc=0; ts --format json confirm >"$TMP/confirm3.json" 2>/dev/null || rc=$?
[ "$rc" = 0 ] && pass "json: confirmed, rc 0" || fail "json: confirmed, rc $rc"
expect_json_valid "$SCHEMAS/confirm.schema.json" "$TMP/confirm3.json" '"reverter_was_running":true'
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
