#!/bin/bash
# SIGTERM while watch applies 40,000 rules to a device that re-appeared:
# watch stops the apply at its next chunk and rolls it back (event
# interrupted), or had finished it; either way it exits 0 and the device
# holds all of the files' rules or none, never a part.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/watch_lib.sh"
make_ns
F=$TMP/site.yaml
{
  printf 'version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: htb, handle: "1:", default: "1:30"}\n'
  printf '    classes:\n      - {classid: "1:30", rate: 1mbit}\n    filters:\n'
  for p in 0 1 2 3 4 5 6 7 8 9; do
    for i in $(seq 0 3999); do
      echo "      - {parent: \"1:\", pref: $((10 + p)), protocol: ip, u32: {match: [{ip: {dst: 10.$p.$((i / 256)).$((i % 256))/32}}]}, classid: \"1:30\"}"
    done
  done
} >"$F"
start_watch --debounce 0 "$F"
wait_event started "" 60
ip -n "$NS" link del v0
wait_event device-gone v0
ip -n "$NS" link add v0 type veth peer name v1
wait_event device-appeared v0
sleep 0.2
stop_watch
N=$(t filter show dev v0 parent 1: | grep -c "flowid 1:30" || true)
echo "    $(grep -o '"event":"interrupted"[^}]*' "$EVENTS" || echo 'not interrupted: the apply was done first'); $N rules on v0"
[ "$N" = 0 ] || [ "$N" = 40000 ] && pass "all rules or none on v0 ($N)" || fail "$N of 40000 rules on v0 after SIGTERM"
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
