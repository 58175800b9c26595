#!/bin/bash
# tcsync import fails where `tc -b` fails, at the same line (issue #38):
# each file of import_corpus/refused has one line `tc -b` refuses. The test
# runs `tc -b` in a fresh namespace, takes the failing line from tc's own
# "Command failed FILE:LINE", and asserts that import exits 1 with its first
# error at FILE:LINE and nothing on stdout. Each file of
# import_corpus/accepted `tc -b` takes whole: import exits 0, and its file
# applied makes the state `tc -b` made (tc_snapshot.py), with diff in sync
# (#37: tc's spellings such as `flowid 10`, handles the kernel picks).
source "$(dirname "$0")/lib.sh"
CORPUS=$(cd "$(dirname "$0")/import_corpus" && pwd)

# Both namespaces afresh: each file starts from devices with no tc state.
fresh() {
  ip netns del "$NS" 2>/dev/null || true
  [ -z "$REF" ] || ip netns del "$REF" 2>/dev/null || true
  make_ns
  make_ref_ns
}

n=0
for f in "$CORPUS"/refused/*.tc; do
  name=refused/$(basename "$f")
  fresh
  # tc reports the line as FILE:LINE of the path it was given.
  tc_out=$(tc -n "$REF" -b "$f" 2>&1) && { fail "$name: tc -b accepts it (not a refused case)"; continue; }
  line=$(sed -n "s|^Command failed $f:\([0-9]*\)$|\1|p" <<<"$tc_out" | head -1)
  if [ -z "$line" ]; then
    fail "$name: no 'Command failed' line from tc"
    echo "$tc_out" | sed 's/^/    /'
    continue
  fi
  rc=0
  "$TCSYNC" import "$f" >"$TMP/out.yaml" 2>"$TMP/err" || rc=$?
  first=$(grep -m1 ': error: ' "$TMP/err" || true)
  if [ "$rc" = 1 ] && [ ! -s "$TMP/out.yaml" ] && [[ "$first" == "$f:$line:"* ]]; then
    pass "$name: import refuses line $line as tc does (${tc_out%%$'\n'*})"
    n=$((n + 1))
  else
    fail "$name: tc -b fails at line $line; import exits $rc, first error: ${first:-none}"
    sed 's/^/    /' "$TMP/err"
  fi
done
[ "$n" -ge 25 ] && pass "$n refused files" || fail "only $n refused files matched"

for f in "$CORPUS"/accepted/*.tc; do
  name=accepted/$(basename "$f")
  fresh
  if ! tc_out=$(tc -n "$REF" -b "$f" 2>&1); then
    fail "$name: tc -b refuses it (not an accepted case)"
    echo "$tc_out" | sed 's/^/    /'
    continue
  fi
  rc=0
  "$TCSYNC" import "$f" >"$TMP/out.yaml" 2>"$TMP/err" || rc=$?
  if [ "$rc" != 0 ]; then
    fail "$name: import exits $rc"
    sed 's/^/    /' "$TMP/err"
    continue
  fi
  expect_rc 0 ts apply "$TMP/out.yaml"
  # The kernel's automatic qdisc handles (8001: and up) come from one
  # counter for the whole kernel: both sides read them as 8000:.
  snapshot "$REF" | sed -E 's/\b8[0-9a-f]{3}:/8000:/g' >"$TMP/ref.json"
  snapshot | sed -E 's/\b8[0-9a-f]{3}:/8000:/g' >"$TMP/tcsync.json"
  expect_same_file "$TMP/ref.json" "$TMP/tcsync.json" "$name: import + apply gives the state tc -b gives" || true
  expect_rc 0 ts diff "$TMP/out.yaml"
done
finish
