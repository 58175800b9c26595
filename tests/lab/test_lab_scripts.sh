#!/bin/bash
# In the kernel lab: what real shaping scripts send (sqm-scripts' simple,
# simplest_tbf, piece_of_cake and layer_cake; wondershaper; written out in
# tests/lab/shaping/, origins in its README.md). For each file:
#   - `tc -b` in one namespace, `tcsync import` + `tcsync apply` in another:
#     the same state, size tables and htb/tbf link layers included (tc -d -j);
#   - `tcsync diff` of the import: in sync;
#   - dump -> flush -> apply of the dump: the same state again, diff in sync,
#     a second dump identical.
source "$(dirname "$0")/../kernel/lib.sh"
SHAPING=$(cd "$(dirname "$0")/shaping" && pwd)
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

flush() {  # flush NETNS: every root and ingress qdisc of v0 and ifb0
  local d
  for d in v0 ifb0; do
    tc -n "$1" qdisc del dev "$d" root 2>/dev/null || true
    tc -n "$1" qdisc del dev "$d" ingress 2>/dev/null || true
  done
}

for f in "$SHAPING"/*.tc; do
  name=$(basename "$f" .tc)
  echo "# $name"
  flush "$NS"; flush "$REF"
  expect_rc 0 tc -n "$REF" -b "$f"
  rc=0
  "$TCSYNC" import "$f" >"$TMP/$name.yaml" 2>"$TMP/$name.err" || rc=$?
  [ "$rc" = 0 ] && pass "$name: import exits 0" || { fail "$name: import exits $rc"; sed 's/^/    /' "$TMP/$name.err"; continue; }
  expect_rc 0 ts apply "$TMP/$name.yaml"
  # A root qdisc without a handle (sqm's cake lines) gets the kernel's next
  # automatic one (8001: and up, one counter for the whole kernel: never the
  # same in two namespaces); import names it the first a fresh kernel picks,
  # 8001:, and says so. Only for this comparison, automatic handles read as 8000:.
  auto_handles() { sed -E 's/"8[0-9a-f]{3}:/"8000:/g; s/parent 8[0-9a-f]{3}:/parent 8000:/g'; }
  snapshot "$REF" | auto_handles >"$TMP/$name.ref.json"
  snapshot | auto_handles >"$TMP/$name.imported.json"
  grep -q '"kind"' "$TMP/$name.ref.json" && pass "$name: tc -b made a state" || fail "$name: tc -b made no state"
  expect_same_file "$TMP/$name.ref.json" "$TMP/$name.imported.json" "$name: import + apply == tc -b (tc -d -j)" || true
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"

  # The state tc made, dumped and applied back.
  flush "$NS"
  expect_rc 0 tc -n "$NS" -b "$f"
  snapshot >"$TMP/$name.tc.json"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/$name.dump.yaml"
  flush "$NS"
  expect_rc 0 ts apply "$TMP/$name.dump.yaml"
  snapshot >"$TMP/$name.after.json"
  expect_same_file "$TMP/$name.tc.json" "$TMP/$name.after.json" "$name: dump -> flush -> apply gives tc's state back" || true
  expect_rc 0 ts diff "$TMP/$name.dump.yaml"
  expect_contains "in sync"
  expect_rc 0 ts dump
  cmp -s <(echo "$OUT") "$TMP/$name.dump.yaml" && pass "$name: second dump identical" ||
    { fail "$name: second dump identical"; diff <(echo "$OUT") "$TMP/$name.dump.yaml" | sed 's/^/    /'; }
done
finish
