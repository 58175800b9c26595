#!/bin/bash
# Chains created explicitly (tc chain add, no template: this kernel has no
# flower; templates are in tests/lab/test_lab_chains.sh), on a device and a
# shared block: tc -> tcsync dump -> flush -> apply -> tc -j identical; the
# kernel's own chains (made for filters) are not declared; an undeclared
# empty chain is deleted, a new one added.
source "$(dirname "$0")/lib.sh"
make_ns

t qdisc add dev v0 clsact
t chain add dev v0 ingress chain 5
t chain add dev v0 egress chain 7
t filter add dev v0 ingress pref 1 chain 3 protocol ip u32 match ip dst 10.0.0.1/32
t qdisc add dev v1 ingress_block 4 clsact
t chain add block 4 chain 2

chains_snapshot() {
  snapshot
  for where in "dev v0 ingress" "dev v0 egress" "block 4"; do echo "chains $where:"; t -j chain show $where 2>/dev/null || true; echo; done
}
chains_snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
expect_contains "{parent: ingress, chain: 5}"
expect_contains "{parent: egress, chain: 7}"
expect_contains "{chain: 2}"
grep -qF "{parent: ingress, chain: 3}" "$TMP/dump.yaml" && fail "the kernel's chain 3 is declared" || pass "the kernel's chain 3 is not declared"

t qdisc del dev v0 clsact
t qdisc del dev v1 clsact
chains_snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi
expect_rc 0 ts apply "$TMP/dump.yaml"
chains_snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state (chains included) after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"

cp "$TMP/dump.yaml" "$TMP/base.yaml"
base() { cat "$TMP/dump.yaml"; }
step drop-chain '/{parent: egress, chain: 7}/d' "- v0: chain 7 egress  (not in the file)" "!+ " "!filter"
step new-chain 's|{parent: egress, chain: 7}|{parent: egress, chain: 7}\n      - {parent: egress, chain: 8}|' "+ v0: chain 8 egress" "!- "
step block-chain '/{chain: 2}/d' "- block 4: chain 2  (not in the file)" "!+ "
# The filters of chain 3 leave the file: the chain the kernel made for them goes with them.
step kernel-chain '/chain: 3, pref: 1/d' "- v0: filters u32 ingress chain 3 pref 1 protocol ip (all 1)" "!chain 3 ingress"
OUT=$(t chain show dev v0 ingress)
grep -q "chain 3" <<<"$OUT" && fail "chain 3 outlived its filters" || pass "chain 3 went with its filters"
# Templates: flower only (the kernel: "Chain templates are not supported with specified classifier").
sed 's|{parent: ingress, chain: 5}|{parent: ingress, chain: 5, template: {u32: {}}}|' "$TMP/base.yaml" >"$TMP/u32.yaml"
expect_rc 1 ts validate "$TMP/u32.yaml"
expect_contains "chain templates exist for flower only"
finish
