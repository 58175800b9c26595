#!/bin/bash
# In the kernel lab (flower): chains made explicitly with tc chain add, with
# and without flower templates, on a device and on a shared block -> tcsync
# dump -> flush -> tcsync apply -> tc -j identical (chains included), diff
# empty; then a template change re-creates the chain and the filters in it,
# an undeclared explicit chain is deleted, a new one added.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns

t qdisc add dev v0 clsact
t chain add dev v0 ingress protocol ip chain 5 flower dst_ip 0.0.0.0/16
t chain add dev v0 ingress chain 6 flower dst_mac 00:00:00:00:00:00/ff:ff:ff:ff:ff:ff
t chain add dev v0 egress chain 7
t filter add dev v0 ingress protocol ip pref 1 flower dst_ip 10.0.0.0/8 action goto chain 5
t filter add dev v0 ingress protocol ip pref 3 chain 5 flower dst_ip 10.1.0.0/16 action drop
t filter add dev v0 ingress protocol all pref 4 chain 6 flower dst_mac 02:00:00:00:00:01 action drop
t qdisc add dev v1 ingress_block 9 clsact
t chain add block 9 chain 2
t filter add block 9 protocol ip pref 2 flower ip_proto udp action drop

chains_snapshot() {
  snapshot
  for where in "dev v0 ingress" "dev v0 egress" "block 9"; do
    echo "chains $where:"; t -j chain show $where 2>/dev/null || true
    echo "filters $where:"; { t -j filter show $where 2>/dev/null || true; } | python3 -c '
import json, sys
drop = {"stats", "ref", "bind", "not_in_hw", "installed", "last_used", "first_used", "expires", "in_hw", "in_hw_count"}
def clean(v):
    if isinstance(v, dict): return {k: clean(x) for k, x in sorted(v.items()) if k not in drop and not (k == "cookie" and x.startswith(("74637301", "74637302")))}
    if isinstance(v, list): return [clean(x) for x in v]
    return v
t = sys.stdin.read().strip()
print(json.dumps(clean(json.loads(t)) if t else [], indent=1, sort_keys=True))'
  done
}

chains_snapshot >"$TMP/before.txt"
grep -q '"chain":7' "$TMP/before.txt" && pass "tc shows the empty chain" || fail "tc shows the empty chain"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
expect_contains "template: {flower: {dst_ip: 0.0.0.0/16}}"

t qdisc del dev v0 clsact
t qdisc del dev v1 clsact
chains_snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi
expect_rc 0 ts apply "$TMP/dump.yaml"
chains_snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state (chains and templates included) after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

cp "$TMP/dump.yaml" "$TMP/base.yaml"
base() { cat "$TMP/dump.yaml"; }
# A template cannot change (RTM_NEWCHAIN on an existing chain: EEXIST) and
# RTM_DELCHAIN flushes the chain: delete + add, then its filter again.
step template 's|dst_ip: 0.0.0.0/16|dst_ip: 0.0.0.0/12|; s|dst_ip: 10.1.0.0/16|dst_ip: 10.16.0.0/12|' \
  "- v0: chain 5 ingress (template flower protocol ip)" "+ v0: chain 5 ingress (template flower protocol ip)" \
  "+ v0: filter flower ingress chain 5 pref 3 protocol ip" "!- v0: filter" "!chain 6" "!block 9"
OUT=$(t chain show dev v0 ingress)
expect_contains "dst_ip 0.0.0.0/12"
step drop-chain '/{parent: egress, chain: 7}/d' "- v0: chain 7 egress  (not in the file)" "!+ " "!filter"
step new-chain 's|{parent: egress, chain: 7}|{parent: egress, chain: 7}\n      - {parent: egress, chain: 8}|' "+ v0: chain 8 egress" "!- " "!filter"
step block-chain '/{chain: 2}/d' "- block 9: chain 2  (not in the file)" "!+ "
finish
