#!/bin/bash
# packaging/systemd: `systemd-analyze verify` accepts the units (the
# installed package's units are verified again, with their man pages, by
# test_deb.sh), and they say what the package promises.
set -euo pipefail
SRC=${1:?usage: $0 SOURCE_DIR}
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing (apt-get install systemd)"; exit 77; }
U=$SRC/packaging/systemd
fails=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fails=$((fails + 1)); fi; }
out=$(systemd-analyze verify --man=no "$U/tcsync.service" "$U/tcsync.path" "$U/tcsync-watch.service" "$U/tcsync-stats.service" \
      "$U/tcsync-stats.timer" 2>&1) && rc=0 || rc=$?
check "systemd-analyze verify passes" '[ "$rc" = 0 ] && [ -z "$out" ]'
[ -n "$out" ] && echo "$out" | sed 's/^/    /'
check "after network-online.target" 'grep -qx "After=network-online.target" "$U/tcsync.service" && grep -qx "Wants=network-online.target" "$U/tcsync.service"'
check "applies every /etc/tcsync/*.yaml in one run" 'grep -q "^ExecStart=.*tcsync .*apply .*/etc/tcsync/\*.yaml" "$U/tcsync.service"'
check "runs only when a file is there" 'grep -qx "ConditionPathExistsGlob=/etc/tcsync/\*.yaml" "$U/tcsync.service"'
check "the path unit watches /etc/tcsync and starts tcsync.service" 'grep -qx "PathChanged=/etc/tcsync" "$U/tcsync.path" && grep -qx "Unit=tcsync.service" "$U/tcsync.path"'
# A oneshot that stays active would not be started again by the path unit.
check "the service can be started again (no RemainAfterExit)" '! grep -q "^RemainAfterExit=yes" "$U/tcsync.service"'
W=$U/tcsync-watch.service
check "watch: Type=notify with a watchdog" 'grep -qx "Type=notify" "$W" && grep -q "^WatchdogSec=" "$W"'
check "watch: watches every /etc/tcsync/*.yaml" 'grep -q "^ExecStart=.*tcsync .*watch /etc/tcsync/\*.yaml" "$W"'
check "watch: reload is SIGHUP (re-read the files, clear conflicts)" 'grep -qx "ExecReload=/bin/kill -HUP \$MAINPID" "$W"'
# The same hardening as the oneshot unit, line for line.
for h in CapabilityBoundingSet AmbientCapabilities NoNewPrivileges ProtectSystem ProtectHome PrivateTmp PrivateDevices \
         PrivateMounts ProtectControlGroups ProtectKernelModules ProtectKernelTunables ProtectKernelLogs ProtectClock \
         ProtectHostname ProtectProc ProcSubset RestrictAddressFamilies IPAddressDeny RestrictNamespaces \
         RestrictSUIDSGID RestrictRealtime LockPersonality MemoryDenyWriteExecute SystemCallArchitectures \
         SystemCallFilter SystemCallErrorNumber UMask RuntimeDirectory RuntimeDirectoryMode; do
  check "watch: $h as tcsync.service" '[ "$(grep "^$h=" "$W")" = "$(grep "^$h=" "$U/tcsync.service")" ]'
done
# The run directory (locks, a pending --confirm revert) is root's alone.
check "the run directory is 0700" 'grep -qx "RuntimeDirectoryMode=0700" "$U/tcsync.service"'
# Every shipped service at most 2.0 (the old units: 4.4, 4.4 and 4.0).
for s in tcsync.service tcsync-watch.service tcsync-stats.service; do
  score=$(systemd-analyze security --offline=true --no-pager "$U/$s" 2>/dev/null |
          sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
  check "$s: systemd-analyze security ${score:-?} <= 2.0" '[ -n "$score" ] && awk "BEGIN { exit !($score <= 2.0) }"'
done
# The drop-in for --netns and eBPF users adds what those need, and the
# units take it.
D=$U/netns-ebpf.conf
check "drop-in: CAP_SYS_ADMIN and CAP_BPF, a network namespace may be joined, bpf() allowed" \
  'grep -qx "CapabilityBoundingSet=CAP_NET_ADMIN CAP_SYS_ADMIN CAP_BPF" "$D" && grep -qx "RestrictNamespaces=net" "$D" && grep -qx "SystemCallFilter=bpf" "$D"'
dd=$(mktemp -d)
cp "$U/tcsync.service" "$dd/" && mkdir "$dd/tcsync.service.d" && cp "$D" "$dd/tcsync.service.d/"
out=$(systemd-analyze verify --man=no "$dd/tcsync.service" 2>&1) && rc=0 || rc=$?
check "drop-in: systemd-analyze verify passes with it" '[ "$rc" = 0 ] && [ -z "$out" ]'
[ -n "$out" ] && echo "$out" | sed 's/^/    /'
rm -rf "$dd"
# tcsync-stats: counters for node_exporter's textfile collector.
S=$U/tcsync-stats.service
check "stats writes Prometheus text atomically into node_exporter's textfile directory" \
  'grep -q "^ExecStart=.*tcsync .*stats --format prometheus --output /var/lib/prometheus/node-exporter/tcsync.prom" "$S"'
check "stats names objects by /etc/tcsync/*.yaml, and works without a file" \
  'grep -q "^ExecStart=.*set -- /etc/tcsync/\*.yaml; \[ -e \"\$1\" \] || set --;" "$S"'
check "stats is skipped without node_exporter's directory, and may write only there" \
  'grep -qx "ConditionPathIsDirectory=/var/lib/prometheus/node-exporter" "$S" && grep -qx "ReadWritePaths=/var/lib/prometheus/node-exporter" "$S" && grep -qx "ProtectSystem=strict" "$S"'
check "stats keeps no CAP_NET_ADMIN (it only reads tc state)" '! grep -q "CAP_NET_ADMIN" "$S"'
check "the timer starts tcsync-stats.service every 15 s" \
  'grep -qx "Unit=tcsync-stats.service" "$U/tcsync-stats.timer" && grep -qx "OnUnitActiveSec=15s" "$U/tcsync-stats.timer" && grep -qx "WantedBy=timers.target" "$U/tcsync-stats.timer"'
# The glob line, run by sh as systemd would: a file present, and none.
d=$(mktemp -d)
line=$(sed -n 's/^ExecStart=\/bin\/sh -c .\(.*\).$/\1/p' "$S" | sed 's#/etc/tcsync#'"$d"'#; s#exec /usr/sbin/tcsync#echo#')
check "no file: stats of every device" '[ "$(sh -c "$line")" = "--color never stats --format prometheus --output /var/lib/prometheus/node-exporter/tcsync.prom" ]'
touch "$d/a.yaml" "$d/b.yaml"
check "files: stats of those files" '[ "$(sh -c "$line")" = "--color never stats --format prometheus --output /var/lib/prometheus/node-exporter/tcsync.prom $d/a.yaml $d/b.yaml" ]'
rm -rf "$d"
[ "$fails" = 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
