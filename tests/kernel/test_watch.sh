#!/bin/bash
# tcsync watch on the host kernel (htb + u32): the first apply, a device that
# appears later, a link flap, a device deleted and re-created, a foreign
# filter and a foreign class change (reported with diff's words, repaired),
# a deleted, a changed and a foreign rule of a declared u32 list repaired
# from the event alone (targeted: -v says so, and never "full re-plan"),
# a typo saved into the file (file-error at FILE:LINE:COL, kernel kept), a
# valid edit (applied), SIGTERM (exit 0). tc -j is the reference throughout.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/watch_lib.sh"
make_ns

site() {  # site RATE: the watched file, with class 1:10 at RATE
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
      - {parent: "1:", pref: 11, protocol: ip, u32: {match: [{ip: {dst: 192.0.2.0/24}}]}, classid: "1:10"}
  v2:
    qdiscs:
      - {kind: htb, handle: "2:"}
    classes:
      - {classid: "2:1", rate: 5mbit}
YAML
}
mkdir "$TMP/etc"
F=$TMP/etc/site.yaml
site 10mbit >"$F"

echo "# start: v0 applied, v2 not there yet"
start_watch -v "$F"
wait_event device-missing v2
wait_event applied v0 5 '"cause":"start"'
wait_event started
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"
snapshot >"$TMP/v0.json"

echo "# a device appearing after watch started gets its state"
ip -n "$NS" link add v2 type veth peer name v3
wait_event device-appeared v2
wait_event applied v2 5 '"cause":"appeared"'
OUT=$(t class show dev v2)
expect_contains "class htb 2:1 root prio 0 rate 5Mbit"
expect_rc 0 ts diff "$F"
snapshot >"$TMP/all.json"

echo "# link flap: state as before, nothing to repair (quiet)"
ip -n "$NS" link set v0 down
ip -n "$NS" link set v0 up
sleep 0.5  # past the debounce: a re-plan would have happened by now
snapshot >"$TMP/flap.json"
expect_same_file "$TMP/all.json" "$TMP/flap.json" "tc -j after a link flap equals before"
[ "$(count_events drift)" = 0 ] && pass "a flap that changes nothing is quiet" || fail "a flap gave drift events"

echo "# v0 deleted and re-created: its state again"
ip -n "$NS" link del v0
wait_event device-gone v0
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up
wait_event applied v0 5 '"cause":"appeared"'
snapshot >"$TMP/recreated.json"
expect_same_file "$TMP/all.json" "$TMP/recreated.json" "tc -j after re-creating v0 equals before"

echo "# a foreign u32 filter on an owned device: reported, removed"
t filter add dev v0 parent 1: pref 20 protocol ip u32 match ip dport 80 0xffff classid 1:30
wait_event drift v0 5 'pref 20'
expect_contains_ev() { [[ $EV == *"$1"* ]] && pass "event has: $1" || fail "event lacks: $1 ($EV)"; }
expect_contains_ev '"- v0: filters u32 1: pref 20 protocol ip (all 1)  (not in the file)"'
wait_event repaired v0
OUT=$(t filter show dev v0 parent 1:)
grep -q "pref 20" <<<"$OUT" && fail "the foreign filter is still there" || pass "the foreign filter is gone"
snapshot >"$TMP/foreign.json"
expect_same_file "$TMP/all.json" "$TMP/foreign.json" "tc -j after the repair equals before"

echo "# targeted repair (from the event, no dump): a deleted, a changed, a foreign rule of a declared list"
targeted() { grep -c "tcsync: watch: v0: targeted: .* steps" "$TMP/watch.err" || true; }
full_replans() { grep -c "tcsync: watch: v0: full re-plan" "$TMP/watch.err" || true; }
sleep 0.5  # the verifying re-plan after the last repair: v0 in sync again
H=$(t filter show dev v0 parent 1: pref 10 | sed -n 's/.* fh \(8[0-9a-f]*::1\) .*/\1/p' | head -1)
[ -n "$H" ] && pass "pref 10's rule ::1 is $H in the kernel" || fail "no kernel handle for pref 10's rule ::1"
N0=$(targeted) F0=$(full_replans)
t filter del dev v0 parent 1: pref 10 protocol ip handle "$H" u32
wait_event drift v0 5 'pref 10'
expect_contains_ev "\"+ v0: filter u32 1: pref 10 protocol ip handle ::1  [$F:10:9]\""
wait_event repaired v0
t filter replace dev v0 parent 1: pref 10 protocol ip handle "$H" u32 match ip dport 22 0xffff classid 1:30
wait_event drift v0 5 'pref 10'
expect_contains_ev '"~ v0: filter u32 1: pref 10 protocol ip handle ::1  (classid 1:30 -> 1:10)'
wait_event repaired v0
t filter add dev v0 parent 1: pref 10 protocol ip u32 match ip dport 80 0xffff classid 1:30
wait_event drift v0 5 'pref 10'
expect_contains_ev '"- v0: filter u32 1: pref 10 protocol ip handle ::800  (not in the file)"'
wait_event repaired v0
sleep 0.3  # the repairs' own echoes: settled quietly
[ "$(targeted)" = $((N0 + 3)) ] && pass "three targeted repairs (-v)" || fail "targeted repairs: $(targeted), expected $((N0 + 3)); stderr: $(tail -5 "$TMP/watch.err")"
[ "$(full_replans)" = "$F0" ] && pass "no full re-plan for them" || fail "a full re-plan: $(grep 'full re-plan' "$TMP/watch.err" | tail -3)"
snapshot >"$TMP/targeted.json"
expect_same_file "$TMP/all.json" "$TMP/targeted.json" "tc -j after the targeted repairs equals before"
expect_rc 0 ts diff "$F"

echo "# a foreign change to an owned class: the same words as diff, repaired"
t class change dev v0 parent 1: classid 1:10 htb rate 5mbit ceil 20mbit
wait_event drift v0 5 '1:10'
expect_contains_ev '(rate 5mbit -> 10mbit)'
wait_event repaired v0
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"

echo "# another tcsync holds the namespace's lock: watch says busy, then repairs when it is free"
LOCK=${TCSYNC_RUN_DIR:-/run/tcsync}/netns-$(stat -L -c %i "/run/netns/$NS").lock
mkdir -p "$(dirname "$LOCK")"
exec 9>>"$LOCK"
ofd_lock 9
t class change dev v0 parent 1: classid 1:10 htb rate 6mbit ceil 20mbit
wait_event busy "" 5
exec 9>&-
wait_event repaired v0 5
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"

echo "# a typo saved into the watched file: file-error with FILE:LINE:COL, kernel unchanged"
site 10mbit | sed 's/rate: 1mbit, ceil/rate: 1mbit,, ceil/' >"$F"
wait_event file-error "" 5 "$F:8:"
[[ $EV =~ site\.yaml:[0-9]+:[0-9]+:\ error ]] && pass "file-error names FILE:LINE:COL" || fail "file-error without FILE:LINE:COL: $EV"
sleep 0.3
snapshot >"$TMP/typo.json"
expect_same_file "$TMP/all.json" "$TMP/typo.json" "tc -j after the typo equals before"

echo "# a valid edit (written elsewhere and renamed over, as editors do): applied"
site 12mbit >"$TMP/etc/.site.yaml.new"
mv "$TMP/etc/.site.yaml.new" "$F"
wait_event file-reloaded
wait_event applied v0 5 'rate 10mbit -> 12mbit'
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 12Mbit ceil 20Mbit"
expect_rc 0 ts diff "$F"
expect_contains "in sync"

echo "# tcsync apply by hand between events: watch holds no lock while idle"
expect_rc 0 ts apply "$F"
expect_contains "in sync"

stop_watch
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
