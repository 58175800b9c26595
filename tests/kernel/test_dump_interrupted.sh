#!/bin/bash
# A dump the kernel flags interrupted (NLM_F_DUMP_INTR: its objects changed
# while it ran) is read again, never trusted (kernel/dumper.h kDumpTries).
# 6.18 flags the link dump when links come and go during it (tc's own dumps
# carry no such flag, whatever changes meanwhile): links are added and
# deleted in a loop while diff and dump read 300 links and 600 u32 rules;
# each run sees the same state, the plan stays empty, and -v says that
# interrupted dumps were read again.
source "$(dirname "$0")/lib.sh"
make_ns
CHURN=""
trap '[ -z "$CHURN" ] || kill "$CHURN" 2>/dev/null; cleanup' EXIT INT TERM
for i in $(seq 150); do echo "link add a$i type veth peer name b$i"; done >"$TMP/links.batch"
ip -n "$NS" -b "$TMP/links.batch"
{ printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", default: "1:30"}]\n'
  printf '    classes: [{classid: "1:30", rate: 10mbit}]\n    filters:\n'
  for i in $(seq 600); do
    echo "      - {parent: \"1:\", pref: 30, protocol: ip, u32: {match: [{ip: {dst: 10.1.$((i / 256)).$((i % 256))/32}}]}, classid: \"1:30\"}"
  done; } >"$TMP/f.yaml"
expect_rc 0 ts apply "$TMP/f.yaml"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/quiet.yaml"

( while :; do
    ip -n "$NS" link add c0 type veth peer name d0 2>/dev/null || exit 0
    ip -n "$NS" link del c0 2>/dev/null || exit 0
  done ) &
CHURN=$!
seen=0 bad=0
for run in $(seq 30); do
  rc=0
  "$TCSYNC" --netns "$NS" -v diff "$TMP/f.yaml" >"$TMP/diff.out" 2>"$TMP/diff.err" || rc=$?
  [ "$rc" = 0 ] && grep -q 'in sync' "$TMP/diff.out" || { bad=$((bad + 1)); cat "$TMP/diff.out" "$TMP/diff.err" | head -5; }
  rc=0
  "$TCSYNC" --netns "$NS" -v dump >"$TMP/dump.yaml" 2>"$TMP/dump.err" || rc=$?
  [ "$rc" = 0 ] && cmp -s "$TMP/quiet.yaml" "$TMP/dump.yaml" || { bad=$((bad + 1)); head -5 "$TMP/dump.err"; diff "$TMP/quiet.yaml" "$TMP/dump.yaml" | head -10; }
  grep -h "read again" "$TMP/diff.err" "$TMP/dump.err" | head -1 || true
  grep -q 'read again' "$TMP/diff.err" "$TMP/dump.err" && seen=$((seen + 1))
  [ "$seen" -ge 3 ] && [ "$run" -ge 10 ] && break
done
kill "$CHURN" 2>/dev/null || true
wait "$CHURN" 2>/dev/null || true
CHURN=""
[ "$bad" = 0 ] && pass "$run runs of diff and dump under link churn: every plan empty, every dump the same" ||
  fail "$bad runs differed"
[ "$seen" -gt 0 ] && pass "$seen runs read an interrupted dump again (-v)" ||
  fail "no interrupted dump seen in $run runs (the churn did not hit a dump)"
finish
