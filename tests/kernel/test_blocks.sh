#!/bin/bash
# Shared filter blocks (tc's ingress_block/egress_block and `filter ... block
# N`): state made with tc -> tcsync dump -> flush -> tcsync apply -> tc -j
# identical, diff empty; then one change at a time gives the minimal plan,
# and a block whose last qdisc is re-created is filled again.
source "$(dirname "$0")/lib.sh"
make_ns 4

# The reference: v0 and v2 share block 22 at ingress, v0's egress is block
# 23, v1's ingress qdisc is block 24; v3 keeps filters of its own.
t qdisc add dev v0 ingress_block 22 egress_block 23 clsact
t qdisc add dev v2 ingress_block 22 clsact
t qdisc add dev v1 ingress_block 24 ingress
t qdisc add dev v3 clsact
t filter add block 22 protocol ip pref 10 u32 match ip dst 10.0.0.1/32 action mirred egress redirect dev v1
t filter add block 22 protocol ip pref 10 u32 match ip dst 10.0.0.2/32
t filter add block 22 protocol ip pref 20 chain 3 u32 match ip src 10.0.0.0/8 action mirred egress mirror dev v3
t filter add block 23 protocol all pref 5 u32 match u32 0 0
t filter add block 24 protocol arp pref 7 u32 match u32 0 0 action mirred ingress redirect dev v0
t filter add dev v3 ingress protocol ip pref 1 u32 match ip dst 192.168.0.0/16

blocks_snapshot() {
  snapshot
  for b in 22 23 24 25; do echo "block $b:"; { t -j filter show block $b 2>/dev/null || true; } | python3 -c '
import json, sys
drop = {"stats", "ref", "bind", "not_in_hw", "installed", "last_used", "first_used", "expires"}
def clean(v):
    if isinstance(v, dict): return {k: clean(x) for k, x in sorted(v.items()) if k not in drop}
    if isinstance(v, list): return [clean(x) for x in v]
    return v
t = sys.stdin.read().strip()
print(json.dumps(clean(json.loads(t)) if t else [], indent=1, sort_keys=True))'; done
}

blocks_snapshot >"$TMP/before.txt"
grep -q '"ingress_block": 22' "$TMP/before.txt" && pass "tc reports the binding" || fail "tc reports the binding"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
expect_contains "ingress_block: 22"
expect_contains "blocks:"

# Flush: the blocks go with their last qdisc.
for d in v0 v2 v3; do t qdisc del dev $d clsact; done
t qdisc del dev v1 ingress
blocks_snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi
OUT=$(t filter show block 22 2>&1 || true)
[ -z "$(t filter show block 22 2>/dev/null)" ] && pass "block 22 is gone with its qdiscs" || fail "block 22 outlived its qdiscs"

expect_rc 0 ts apply "$TMP/dump.yaml"
blocks_snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state (blocks included) after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

# One change at a time.
cp "$TMP/dump.yaml" "$TMP/base.yaml"
base() { cat "$TMP/dump.yaml"; }
step block-filter 's|"0x0a000002"|"0x0a000003"|' \
  "block 22: filter u32 pref 10 protocol ip" "!qdisc" "!block 23" "!block 24"
# v2 moves to a new block 25 (declared with one rule): only v2's clsact is
# re-created (the kernel ignores a new index on change), block 22 keeps its
# filters (v0 still binds it).
step rebind 's|{kind: clsact, ingress_block: 22}|{kind: clsact, ingress_block: 25}|; $a\
  25:\
    filters:\
      - {pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.9.9.9/32}}]}}' \
  "- v2: qdisc clsact ffff: ingress  (ingress_block 22 -> 25)" "+ v2: qdisc clsact ffff: ingress" \
  "+ block 25: filter u32 pref 1 protocol ip" "!+ block 22" "!- block 22" "!v0:"
[ -n "$(t filter show block 22)" ] && pass "block 22 kept its filters" || fail "block 22 lost its filters"
# v1's ingress qdisc becomes a clsact bound to the same block 24: v1 is its
# only qdisc, so the kernel destroys block 24 in between; its rule is added
# again (and not deleted first).
step last-binder 's|{kind: ingress, ingress_block: 24}|{kind: clsact, ingress_block: 24}|' \
  "- v1: qdisc ingress ffff: ingress" "+ v1: qdisc clsact ffff: ingress" "+ block 24: filter u32 pref 7 protocol arp" "!- block 24"
OUT=$(t filter show block 24)
expect_contains "mirred (Ingress Redirect to device v0)"

# A block no declared qdisc binds: an error, nothing changed.
expect_rc 0 ts apply "$TMP/base.yaml"
blocks_snapshot >"$TMP/s1.txt"
sed 's|{kind: clsact, ingress_block: 22, egress_block: 23}|{kind: clsact, ingress_block: 22}|' "$TMP/base.yaml" >"$TMP/unbound.yaml"
expect_rc 1 ts apply "$TMP/unbound.yaml"
expect_contains "block 23 is bound by no declared qdisc"
blocks_snapshot >"$TMP/s2.txt"
expect_same_file "$TMP/s1.txt" "$TMP/s2.txt" "a rejected file changes nothing"
finish
