#!/bin/bash
# Rule tables (README "Rule tables"): bench/gen.py's u32 and htb sets written
# as tables apply to the same kernel state (tc_snapshot.py) as `tc -b` of the
# equivalent batch in a second namespace, and to the same state as the
# written-out form; one changed row is one replace; an error in a row is
# reported at the row's line and the value's column, nothing changed.
source "$(dirname "$0")/lib.sh"
GEN="$(dirname "$0")/../../bench/gen.py"

for kind in u32 htb; do
  echo "# $kind"
  make_ns
  make_ref_ns
  python3 "$GEN" "$kind" 2000 "$TMP/$kind" --change 1 --table
  python3 "$GEN" "$kind" 2000 "$TMP/$kind-plain"
  grep -c "rows:" "$TMP/$kind.yaml" >/dev/null && pass "$kind: the file has tables" || fail "$kind: no table in the file"
  expect_rc 0 tc -n "$REF" -b "$TMP/$kind.tc"
  expect_rc 0 ts apply "$TMP/$kind.yaml"
  snapshot >"$TMP/mine.json"
  NS=$REF snapshot >"$TMP/ref.json"
  expect_same_file "$TMP/ref.json" "$TMP/mine.json" "$kind: table apply = tc -b state"
  expect_rc 0 ts diff "$TMP/$kind-plain.yaml"
  expect_contains "in sync"
  # --change 1: 20 of 2000 rows differ, each one in-place step.
  expect_rc 2 ts diff "$TMP/$kind.changed.yaml"
  n=$(grep -c '^[~]' <<<"$OUT" || true)
  [ "$n" = 20 ] && pass "$kind: 20 changed rows, 20 in-place steps" || { fail "$kind: $n in-place steps (want 20)"; echo "$OUT" | head -20 | sed 's/^/    /'; }
  grep -c '^[+-]' <<<"$OUT" >/dev/null && fail "$kind: the plan deletes or adds" || pass "$kind: nothing deleted or added"
  expect_rc 0 ts apply "$TMP/$kind.changed.yaml"
  expect_rc 0 tc -n "$REF" -b "$TMP/$kind.changed.tc"
  # A replaced action gets a new kernel number on each side: not state.
  TC_SNAPSHOT_DROP=index snapshot >"$TMP/mine.json"
  NS=$REF TC_SNAPSHOT_DROP=index snapshot >"$TMP/ref.json"
  expect_same_file "$TMP/ref.json" "$TMP/mine.json" "$kind: changed table = tc -b changes"
  ip netns del "$NS"
  ip netns del "$REF"
done

echo "# an error in a row"
make_ns
python3 "$GEN" u32 400 "$TMP/bad" --table
line=$(grep -n '10.0.1.44 redirect' "$TMP/bad.yaml" | cut -d: -f1)
sed -i 's/10\.0\.1\.44 redirect/10.0.1.444 redirect/' "$TMP/bad.yaml"
snapshot >"$TMP/before.json"
expect_rc 1 ts apply "$TMP/bad.yaml"
# `          - "2:2c: 10.0.1.444 redirect"`: the address starts at column 20.
expect_contains "bad.yaml:$line:20: error:"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "a bad row changes nothing"
finish
