#!/bin/bash
# tcsync watch never fights: a "fighter" changes one owned htb class every
# 100 ms. watch repairs it until the repair count reaches the limit (5
# within 60 s by default), reports a conflict within the bound, then leaves
# the class alone (no more repairs) while its CPU time stays small (read
# from /proc/PID/stat over 10 s). SIGHUP clears the conflict: the class is
# repaired again once the fighter stops.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/watch_lib.sh"
make_ns
F=$TMP/site.yaml
cat >"$F" <<'YAML'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:10", rate: 10mbit, ceil: 20mbit}
      - {classid: "1:30", rate: 1mbit, ceil: 20mbit}
    filters:
      - {parent: "1:", pref: 10, protocol: ip, u32: {match: [{ip: {dport: 22}}]}, classid: "1:10"}
YAML
start_watch "$F"
wait_event started "" 5
snapshot >"$TMP/before.json"

fighter() {
  local r=5
  while :; do
    tc -n "$NS" class change dev v0 parent 1: classid 1:10 htb rate ${r}mbit ceil 20mbit 2>/dev/null
    r=$((r == 5 ? 7 : 5))
    sleep 0.1
  done
}
fighter &
FIGHTER=$!
T0=$(date +%s%N)
# Bound: 5 repairs, each at most --max-delay (1 s) after the fighter's
# first change since the last one, plus the re-plan: about 6 s; 15 s allowed.
wait_event conflict v0 15 'class htb 1:10'
echo "    conflict after $((($(date +%s%N) - T0) / 1000000)) ms: $EV"
REPAIRS=$(count_events repaired)
[ "$REPAIRS" -ge 4 ] && [ "$REPAIRS" -le 5 ] && pass "$REPAIRS repairs before the conflict" || fail "$REPAIRS repairs before the conflict (want 4-5)"

T1=$(cpu_ticks "$WPID")
sleep 10
T2=$(cpu_ticks "$WPID")
HZ=$(getconf CLK_TCK)
echo "    watch CPU over 10 s of fighting after the conflict: $((T2 - T1)) ticks (1/$HZ s)"
# 5% of one core over 10 s: a re-plan per --max-delay is all it may do.
[ $((T2 - T1)) -le $((HZ / 2)) ] && pass "CPU bounded ($((T2 - T1)) ticks <= $((HZ / 2)))" || fail "CPU $((T2 - T1)) ticks over 10 s"
[ "$(count_events repaired)" = "$REPAIRS" ] && pass "no repair after the conflict" || fail "repairs went on after the conflict"
[ "$(count_events conflict)" = 1 ] && pass "one conflict event" || fail "$(count_events conflict) conflict events"

kill "$FIGHTER"; wait "$FIGHTER" 2>/dev/null || true; FIGHTER=""
echo "# SIGHUP re-reads the files and clears the conflict: the class is repaired"
kill -HUP "$WPID"
wait_event conflicts-cleared "" 5
# (repaired if the fighter's last change was still pending, else applied)
wait_event 'repaired|applied' v0 5
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j after SIGHUP equals the files' state"

stop_watch
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
