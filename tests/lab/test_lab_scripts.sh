#!/bin/bash
# In the kernel lab: what real tools send to tc. tests/lab/shaping/ holds
# shaping scripts (sqm-scripts, wondershaper), tests/lab/real/ what other
# generators emit (hypervisors, emulators, container tools, switches) and
# tc's own man-page examples; each directory's README.md gives every file's
# origin. For each file:
#   - import: `tc -b` in one namespace, `tcsync import` + `tcsync apply` in
#     another: the same state (tc -d -j: size tables and link layers too),
#     and `tcsync diff` of the import in sync;
#   - round trip: the state tc made, dumped, flushed and applied from the
#     dump: the same state again, diff in sync, a second dump identical.
# One line a file and check (`ok`/`not ok`), then the figures. A file in
# tests/lab/real/EXPECTED fails a check for the reason written there (a
# word import does not read yet, a kernel fact): its failure is reported
# (`xfail`) and not counted; should it pass, it says so (`xpass`: take the
# line out). Only a failure nobody expected fails the test.
source "$(dirname "$0")/../kernel/lib.sh"
LAB=$(cd "$(dirname "$0")" && pwd)
EXPECTED="$LAB/real/EXPECTED"
export TC_SNAPSHOT_DETAILS=1
make_ns
make_ref_ns
for n in "$NS" "$REF"; do
  ip -n "$n" link add ifb0 type ifb
  ip -n "$n" link set ifb0 up
  # No IPv6 chatter: a queued packet shows as a flow class on one side only.
  for d in v0 v1 ifb0; do ip netns exec "$n" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
done

# u32 root table ids (800:, 801:, ...) are handed out by the kernel in the
# order the lists are created (sqm-scripts adds its catch-all at pref 999
# first): import and dump write them where tcsync's own order would differ,
# and apply makes the lists in the order that gives them, so they compare
# like the rest.

flush() {  # flush NETNS: every root and ingress qdisc of v0 and ifb0, one tc
  printf 'qdisc del dev %s %s\n' v0 root v0 ingress ifb0 root ifb0 ingress | tc -n "$1" -force -b - 2>/dev/null || true
}

# tc's state and tcsync's compared by compare_states.py: each device's
# qdiscs as a set (the kernel lists them in its hash order of their
# handles), and for the import, a handle the kernel chose (a qdisc added
# without one: sqm's cake lines, a netem on a prio band) read as the one
# import wrote (docs/kernel-numbers.md).
compare() { python3 "$LAB/compare_states.py" "$@"; }

# expected NAME CHECK: the reason NAME is expected to fail CHECK, if any.
expected() { awk -v n="$1" -v c="$2" '$1 == n && $2 == c { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' "$EXPECTED"; }

IMPORT_OK=0 IMPORT_XFAIL=0 TRIP_OK=0 TRIP_XFAIL=0 TOTAL=0 XPASS=""
# verdict NAME CHECK OK [DETAIL-FILE]: one line for a file's check.
verdict() {
  local name=$1 check=$2 ok=$3 detail=${4:-} why
  why=$(expected "$name" "$check")
  if [ "$ok" = 1 ]; then
    if [ -n "$why" ]; then
      echo "ok - $name: $check (xpass: listed in EXPECTED as '$why'; take the line out)"
      XPASS="$XPASS $name:$check"
    else
      echo "ok - $name: $check"
    fi
    [ "$check" = import ] && IMPORT_OK=$((IMPORT_OK + 1)) || TRIP_OK=$((TRIP_OK + 1))
  elif [ -n "$why" ]; then
    echo "ok - $name: $check (xfail: $why)"
    [ "$check" = import ] && IMPORT_XFAIL=$((IMPORT_XFAIL + 1)) || TRIP_XFAIL=$((TRIP_XFAIL + 1))
  else
    fail "$name: $check"
    [ -n "$detail" ] && head -40 "$detail" | sed 's/^/    /'
  fi
  return 0
}

# CI runs the shaping scripts and the files tests/lab/real/CI names (a
# file costs 30-40 s under emulation); LAB_SCRIPTS=all runs every file, and
# LAB_SCRIPTS="NAME..." the files named.
case "${LAB_SCRIPTS:-ci}" in
  ci) FILES=$(ls "$LAB"/shaping/*.tc; grep -v '^#' "$LAB/real/CI" | sed "s|^|$LAB/real/|; s|\$|.tc|") ;;
  all) FILES=$(ls "$LAB"/shaping/*.tc "$LAB"/real/*.tc) ;;
  *) FILES=$(for n in $LAB_SCRIPTS; do for d in shaping real; do [ ! -f "$LAB/$d/$n.tc" ] || echo "$LAB/$d/$n.tc"; done; done) ;;
esac
for f in $FILES; do
  name=$(basename "$f" .tc)
  T="$TMP/$name"
  TOTAL=$((TOTAL + 1))
  flush "$NS"
  flush "$REF"
  if ! tc -n "$REF" -b "$f" >"$T.tc.err" 2>&1; then
    fail "$name: tc -b refuses the file"
    sed 's/^/    /' "$T.tc.err"
    continue
  fi
  snapshot "$REF" >"$T.tc.json"

  # import + apply == tc -b; diff of the import in sync.
  ok=0
  if "$TCSYNC" import "$f" >"$T.yaml" 2>"$T.check" && ts apply "$T.yaml" >>"$T.check" 2>&1; then
    snapshot >"$T.imported.json"
    if ! compare "$T.tc.json" "$T.imported.json" --auto >"$T.check"; then
      :
    elif ts diff "$T.yaml" >"$T.check" 2>&1 && grep -q "in sync" "$T.check"; then
      ok=1
    fi
  fi
  verdict "$name" import "$ok" "$T.check"

  # The state tc made (in $REF), dumped, flushed and applied back.
  ok=0
  if "$TCSYNC" --netns "$REF" dump >"$T.dump.yaml" 2>"$T.check"; then
    flush "$REF"
    if "$TCSYNC" --netns "$REF" apply "$T.dump.yaml" >"$T.check" 2>&1; then
      snapshot "$REF" >"$T.after.json"
      if ! compare "$T.tc.json" "$T.after.json" >"$T.check"; then
        :
      elif ! "$TCSYNC" --netns "$REF" diff "$T.dump.yaml" >"$T.check" 2>&1 || ! grep -q "in sync" "$T.check"; then
        :
      elif ! "$TCSYNC" --netns "$REF" dump 2>&1 | diff -u "$T.dump.yaml" - >"$T.check"; then
        :
      else
        ok=1
      fi
    fi
  fi
  verdict "$name" roundtrip "$ok" "$T.check"
done

echo "# $TOTAL files: import + apply == tc -b: $IMPORT_OK (expected failures: $IMPORT_XFAIL);" \
  "dump -> apply == the same state: $TRIP_OK (expected failures: $TRIP_XFAIL)"
[ -z "$XPASS" ] || echo "# passed though listed in EXPECTED:$XPASS"
# Every line of EXPECTED names a file that exists and a check, and gives a reason.
while read -r n c why; do
  case "$n" in '' | '#'*) continue ;; esac
  [ -f "$LAB/real/$n.tc" ] || [ -f "$LAB/shaping/$n.tc" ] || fail "EXPECTED names $n, which is no file"
  [ "$c" = import ] || [ "$c" = roundtrip ] || fail "EXPECTED: $n: check '$c' is neither import nor roundtrip"
  [ -n "$why" ] || fail "EXPECTED: $n $c gives no reason"
done <"$EXPECTED"
finish
