#!/bin/bash
# tcsync watch speaks systemd's notify protocol (Type=notify): READY=1 after
# the first apply, STATUS= lines, WATCHDOG=1 at half of WATCHDOG_USEC from
# the event loop while idle, STOPPING=1 on SIGTERM. A datagram socket of
# the test's own stands in for systemd's NOTIFY_SOCKET.
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
SOCK=$TMP/notify
python3 - "$SOCK" "$TMP/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.2)
end = time.time() + 8
with open(sys.argv[2], "w") as log:
    while time.time() < end:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            continue
        log.write("%.3f %s\n" % (time.time(), msg.replace("\n", " ")))
        log.flush()
        if "STOPPING=1" in msg:
            break
PY
LISTENER=$!
for i in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.05; done
# A watchdog of 400 ms: watch must ping every 200 ms with nothing happening.
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=400000 start_watch "$F"
wait_event started "" 5
sleep 2
stop_watch
wait "$LISTENER" || true
sed 's/^/    /' "$TMP/notify.log" | head -5
OUT=$(cat "$TMP/notify.log")
expect_contains "READY=1"
expect_contains "STATUS=watching 1 devices; 0 repairs; 0 conflicts"
expect_contains "STOPPING=1"
W=$(grep -c "WATCHDOG=1" "$TMP/notify.log" || true)
# 2 s idle at one ping per 200 ms: about 10; allow for a loaded machine.
[ "$W" -ge 5 ] && [ "$W" -le 14 ] && pass "$W watchdog pings in ~2 s idle" || fail "$W watchdog pings in ~2 s idle (want 5-14)"
# READY only after the first apply: the state is there when it comes.
if python3 - "$TMP/notify.log" "$EVENTS" <<'PY'
import datetime, json, sys
ready = next(float(l.split()[0]) for l in open(sys.argv[1]) if "READY=1" in l)
applied = next(json.loads(l) for l in open(sys.argv[2]) if '"event":"applied"' in l)
t = datetime.datetime.strptime(applied["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
sys.exit(0 if t <= ready + 0.001 else 1)
PY
then pass "READY=1 after the first apply's event"; else fail "READY=1 before the first apply was done"; fi
OUT=$(t qdisc show dev v0)
expect_contains "qdisc htb 1: root"
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
