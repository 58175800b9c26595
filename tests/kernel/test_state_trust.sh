#!/bin/bash
# What tcsync keeps between runs is root's alone (kernel/run_dir.h,
# cli/confirm.h): an unprivileged user (nobody) cannot take the namespace's
# lock, delay or read a pending --confirm revert, or make root write through
# a link it planted (the run directory, the lock, the pending state, the
# revert's log, stats --output).
source "$(dirname "$0")/lib.sh"
make_ns
# Reachable by nobody down to the run directory, as /run is.
chmod 755 "$TMP"
export TCSYNC_RUN_DIR=$TMP/run
INO=$(stat -L -c %i "/run/netns/$NS")
LOCK=$TCSYNC_RUN_DIR/netns-$INO.lock
PENDING=$TCSYNC_RUN_DIR/netns-$INO.pending.yaml
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
htb() { printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", default: "1:%s"}]\n' "$1"; }
htb 30 >"$TMP/a.yaml"
htb 40 >"$TMP/b.yaml"
expect_rc 0 ts apply "$TMP/a.yaml"
snapshot >"$TMP/a.json"

echo "# the run directory and the lock are root's and private"
[ "$(stat -c '%U %a' "$TCSYNC_RUN_DIR")" = "root 700" ] && pass "run directory root 0700" ||
  fail "run directory is $(stat -c '%U %a' "$TCSYNC_RUN_DIR")"
[ "$(stat -c '%U %a' "$LOCK")" = "root 600" ] && pass "lock root 0600" || fail "lock is $(stat -c '%U %a' "$LOCK")"

echo "# nobody cannot take the lock (flock or an OFD lock), so apply is not stopped"
nobody flock -x "$LOCK" -c 'sleep 6' 2>/dev/null &
HOLDER=$!
expect_rc 1 nobody /usr/bin/python3 -c "
import fcntl, struct, sys
fd = open(sys.argv[1], 'rb')  # a read lock is enough to block a writer
fcntl.fcntl(fd, 37, struct.pack('hhqqi', fcntl.F_RDLCK, 0, 0, 0, 0))  # F_OFD_SETLK
" "$LOCK"
sleep 0.3
expect_rc 0 timeout 5 "$TCSYNC" --netns "$NS" apply "$TMP/b.yaml"
expect_not_contains "another tcsync is changing"
kill "$HOLDER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true
expect_rc 0 ts apply "$TMP/a.yaml"

echo "# nobody cannot read a pending --confirm state, nor delay its revert"
expect_rc 0 ts apply --confirm 3 "$TMP/b.yaml"
[ "$(stat -c '%U %a' "$PENDING")" = "root 600" ] && pass "pending state root 0600" ||
  fail "pending state is $(stat -c '%U %a' "$PENDING" 2>&1)"
expect_rc 1 nobody cat "$PENDING"
# Holding the namespace's lock past the deadline would make the revert wait.
nobody flock -x "$LOCK" -c 'sleep 12' 2>/dev/null &
HOLDER=$!
nobody flock -x "$PENDING" -c 'sleep 12' 2>/dev/null &
HOLDER2=$!
START=$(date +%s)
reverted=no
for i in $(seq 40); do
  snapshot >"$TMP/now.json"
  cmp -s "$TMP/a.json" "$TMP/now.json" && { reverted=yes; break; }
  sleep 0.2
done
[ "$reverted" = yes ] && pass "reverted on time ($(($(date +%s) - START)) s after arming for 3 s)" ||
  { fail "not reverted within 8 s"; cat "$TCSYNC_RUN_DIR"/*.log 2>/dev/null; }
kill "$HOLDER" "$HOLDER2" 2>/dev/null || true
wait "$HOLDER" "$HOLDER2" 2>/dev/null || true
[ "$(stat -c '%U %a' "$TCSYNC_RUN_DIR/netns-$INO.pending.log")" = "root 600" ] && pass "revert log root 0600" ||
  fail "revert log is $(stat -c '%U %a' "$TCSYNC_RUN_DIR/netns-$INO.pending.log" 2>&1)"

echo "# a run directory nobody controls is refused, and root writes through none of its links"
mkdir "$TMP/pub" && chown 65534:65534 "$TMP/pub"
echo precious >"$TMP/victim"
mkdir "$TMP/victim-dir"
# (a) the run directory itself a link
nobody ln -s "$TMP/victim-dir" "$TMP/pub/run-link"
expect_rc 1 env TCSYNC_RUN_DIR="$TMP/pub/run-link" "$TCSYNC" --netns "$NS" apply "$TMP/b.yaml"
expect_contains "it is a symlink or not a directory"
[ -z "$(ls -A "$TMP/victim-dir")" ] && pass "nothing written into the link's target" || fail "wrote into $TMP/victim-dir"
# (b) nobody's directory, with links at the lock, pending and log names
nobody mkdir "$TMP/pub/run"
for f in lock pending.yaml pending.yaml.tmp pending.log; do nobody ln -s "$TMP/victim" "$TMP/pub/run/netns-$INO.$f"; done
expect_rc 1 env TCSYNC_RUN_DIR="$TMP/pub/run" "$TCSYNC" --netns "$NS" apply --confirm 2 "$TMP/b.yaml"
expect_contains "refusing the run directory $TMP/pub/run: it belongs to uid 65534"
expect_rc 1 env TCSYNC_RUN_DIR="$TMP/pub/run" "$TCSYNC" --netns "$NS" confirm
expect_contains "refusing the run directory"
[ "$(cat "$TMP/victim")" = precious ] && pass "the lock, pending and log links were not written through" ||
  fail "victim overwritten: $(head -c 80 "$TMP/victim")"
# (c) root's, but writable by a group
mkdir -m 775 "$TMP/grp"
expect_rc 1 env TCSYNC_RUN_DIR="$TMP/grp" "$TCSYNC" --netns "$NS" apply "$TMP/b.yaml"
expect_contains "it is writable by group or others (mode 775)"
# (d) root's own directory with a link in it (O_NOFOLLOW, not only the directory check)
mkdir -m 700 "$TMP/rootrun"
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/rootrun/netns-$INO.lock"
expect_rc 1 env TCSYNC_RUN_DIR="$TMP/rootrun" "$TCSYNC" --netns "$NS" apply "$TMP/b.yaml"
expect_contains "refusing $TMP/rootrun/netns-$INO.lock: it is a symlink"
[ "$(cat "$TMP/victim")" = precious ] && pass "the lock link in root's directory was not followed" || fail "victim overwritten"
# (e) an older tcsync's 0755 directory of root's: narrowed to 0700
mkdir -m 755 "$TMP/oldrun"
expect_rc 0 env TCSYNC_RUN_DIR="$TMP/oldrun" "$TCSYNC" --netns "$NS" apply "$TMP/a.yaml"
[ "$(stat -c %a "$TMP/oldrun")" = 700 ] && pass "a 0755 run directory of root's is narrowed to 0700" ||
  fail "mode $(stat -c %a "$TMP/oldrun")"

echo "# stats --output into a directory of another user (a textfile collector's): no link followed"
mkdir "$TMP/prom" && chown 65534:65534 "$TMP/prom"
echo precious >"$TMP/victim2"
nobody ln -s "$TMP/victim2" "$TMP/prom/tcsync.prom"
# The temporary's name once was .<base>.tmp.<pid>: links at the next pids.
nobody /usr/bin/python3 -c "
import os, sys
last = int(open('/proc/sys/kernel/ns_last_pid').read())
for p in range(last + 1, last + 2000):
    os.symlink(sys.argv[1], sys.argv[2] + '/.tcsync.prom.tmp.%d' % p)
" "$TMP/victim2" "$TMP/prom"
expect_rc 0 ts stats --format prometheus --output "$TMP/prom/tcsync.prom"
[ "$(cat "$TMP/victim2")" = precious ] && pass "stats --output wrote through no link" ||
  fail "victim overwritten by stats: $(head -c 80 "$TMP/victim2")"
[ -f "$TMP/prom/tcsync.prom" ] && [ ! -L "$TMP/prom/tcsync.prom" ] && pass "the link at the target was replaced by the file" ||
  fail "tcsync.prom is not a regular file"
[ "$(stat -c '%U %a' "$TMP/prom/tcsync.prom")" = "root 644" ] && pass "tcsync.prom root 0644 (readable by the collector)" ||
  fail "tcsync.prom is $(stat -c '%U %a' "$TMP/prom/tcsync.prom")"
grep -q '^tcsync_' "$TMP/prom/tcsync.prom" && pass "tcsync.prom holds the exposition" || fail "tcsync.prom content"
[ "$(find "$TMP/prom" -name '.tcsync.prom.tmp.*' -type f | wc -l)" = 0 ] && pass "no temporary left" || fail "a temporary is left"
finish
