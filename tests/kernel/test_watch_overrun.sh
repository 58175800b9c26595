#!/bin/bash
# tcsync watch when the kernel drops events (ENOBUFS on the monitor socket):
# with a tiny receive buffer, 2000 foreign u32 rules added by one `tc -b` on
# a declared device overflow it; watch reports one resync (not one per lost
# event), plans the device and removes them: tc -j equals the files' state.
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
      - {classid: "1:30", rate: 1mbit, ceil: 20mbit}
YAML
start_watch --rcvbuf 4096 "$F"
wait_event started "" 5
snapshot >"$TMP/before.json"
for i in $(seq 2000); do
  echo "filter add dev v0 parent 1: pref 20 protocol ip u32 match ip dst 10.0.$((i / 256)).$((i % 256))/32 classid 1:30"
done >"$TMP/foreign.tc"
# Watch is stopped while tc adds them, so the 4 KiB buffer overflows for
# sure (a quiet machine drains it as fast as tc writes).
kill -STOP "$WPID"
expect_rc 0 tc -n "$NS" -b "$TMP/foreign.tc"
kill -CONT "$WPID"
wait_event resync "" 10
wait_event repaired v0 20 '"cause":"resync"'
sleep 0.5
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j after the resync equals the files' state"
R=$(count_events resync)
# One for the burst; the repair's own echo (2000 deletes, grouped: one
# request) may overflow once more.
[ "$R" -ge 1 ] && [ "$R" -le 3 ] && pass "$R resync event(s) for 2000 lost events" || fail "$R resync events"
expect_rc 0 ts diff "$F"
stop_watch
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
