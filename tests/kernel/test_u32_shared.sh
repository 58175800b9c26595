#!/bin/bash
# u32 lists that share one table space: the kernel keeps one set of u32
# tables per qdisc (tc_u_common), so a clsact's ingress and egress lists at
# one pref, or an htb qdisc's and its class's, each list the other's rules
# too. tcsync's dump must keep each rule once, in its own list (the root
# table a list owns is asked of the kernel), and apply must give back the
# same state; before, the dump listed every rule twice and apply refused it.
# The kernel's walk picks tables by pref alone, so the same holds for lists
# at one pref in two chains, or with two protocols; a hash table (divisor)
# is dumped in the list whose rules link to it (model/shared_tables.h).
# (Lists are made in tcsync's order, parent, chain, then pref, as tc makes
# them here: the kernel names u32 root tables in the order lists are made.)
source "$(dirname "$0")/lib.sh"
make_ns 4
cat >"$TMP/clsact.tc" <<'B'
qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 10 u32 match ip dst 10.0.0.1/32 classid 1:1
filter add dev v0 ingress protocol ip prio 10 u32 match ip dst 10.0.0.3/32 classid 1:3
filter add dev v0 ingress protocol ip prio 20 handle 7: u32 divisor 16
filter add dev v0 ingress protocol ip prio 30 u32
filter add dev v0 egress protocol ip prio 10 u32 match ip dst 10.0.0.2/32 classid 1:2
filter add dev v0 egress protocol ip prio 20 u32 match ip src 10.0.0.9/32 classid 1:9
filter add dev v0 egress protocol ip prio 30 u32 match ip src 10.0.0.8/32 classid 1:8
B
roundtrip "$TMP/clsact.tc" v0
OUT=$(cat "$TMP/dump.yaml")
n=$(grep -c "10.0.0\|0a0000" "$TMP/dump.yaml" || true)
[ "$n" = 5 ] && pass "each of the 5 rules dumped once" || fail "each of the 5 rules dumped once (got $n)"
expect_contains "{parent: ingress, pref: 30, protocol: ip, empty: u32}"

cat >"$TMP/htb.tc" <<'B'
qdisc add dev v1 root handle 1: htb default 10
class add dev v1 parent 1: classid 1:10 htb rate 10mbit
class add dev v1 parent 1: classid 1:20 htb rate 10mbit
filter add dev v1 parent 1: protocol ip prio 5 u32 match ip dst 10.1.0.1/32 classid 1:10
filter add dev v1 parent 1:10 protocol ip prio 5 u32 match ip dst 10.1.0.2/32 classid 1:20
B
expect_rc 0 tc -n "$NS" -b "$TMP/htb.tc"
snapshot >"$TMP/before.json"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/htb.yaml"
sed 's/^/    /' "$TMP/htb.yaml"
n=$(grep -c "0a010001\|0a010002" "$TMP/htb.yaml" || true)
[ "$n" = 2 ] && pass "htb: each rule dumped once" || fail "htb: each rule dumped once (got $n)"
t qdisc del dev v1 root
expect_rc 0 ts apply "$TMP/htb.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "htb: tc -j state after dump + flush + apply equals tc's"
expect_rc 0 ts diff "$TMP/htb.yaml"
expect_contains "in sync"
t qdisc del dev v1 root

# One pref in two chains (chain 1's list empty), and with two protocols on
# the two sides: each list's dump shows the other's rule. Before, a dump put
# the rule in both lists (refused by the loader), or the empty chain 1 list
# took chain 0's rule and the next apply deleted it.
cat >"$TMP/chains.tc" <<'B'
qdisc add dev v2 clsact
filter add dev v2 ingress chain 0 protocol ip prio 10 u32 match ip dst 10.3.0.1/32 classid 1:1
filter add dev v2 ingress chain 1 protocol ip prio 10 u32
filter add dev v2 egress protocol ipv6 prio 10 u32 match ip6 dst 2001:db8::1/128 classid 1:2
B
roundtrip "$TMP/chains.tc" v2
OUT=$(cat "$TMP/dump.yaml")
expect_contains "{parent: ingress, chain: 1, pref: 10, protocol: ip, empty: u32}"
n=$(grep -c "10.3.0.1\|0a030001" "$TMP/dump.yaml" || true)
[ "$n" = 1 ] && pass "chains: the chain 0 rule dumped once" || fail "chains: the chain 0 rule dumped once (got $n)"
expect_rc 0 ts apply "$TMP/dump.yaml"
OUT=$(t filter show dev v2 ingress chain 0)
expect_contains "match 0a030001/ffffffff at 16"
OUT=$(ts apply "$TMP/dump.yaml" 2>&1)
expect_contains "in sync"
del_clsact v2

# A hash table made through the ingress list but linked only from egress
# rules: dumped in the egress list (where its link is), applied back to the
# same kernel state, and the loader tells a file that puts it in ingress
# where the dump will list it. (The kernel lists a qdisc's tables newest
# first; tcsync makes ingress's list, then egress's, then the table in it:
# so does tc here.)
cat >"$TMP/link.tc" <<'B'
qdisc add dev v3 clsact
filter add dev v3 ingress protocol ip prio 10 u32 match ip dst 10.4.0.1/32 classid 1:1
filter add dev v3 egress protocol ip prio 10 u32 match ip protocol 6 0xff classid 1:6
filter add dev v3 ingress protocol ip prio 10 handle 5: u32 divisor 1
filter add dev v3 egress protocol ip prio 10 u32 ht 5: match ip src 10.4.0.5/32 classid 1:5
filter add dev v3 egress protocol ip prio 10 u32 link 5: match ip protocol 17 0xff
B
roundtrip "$TMP/link.tc" v3
OUT=$(cat "$TMP/dump.yaml")
expect_contains "{parent: egress, pref: 10, protocol: ip, handle: \"5:\", u32: {divisor: 1}}"
python3 - "$TMP/dump.yaml" >"$TMP/moved.yaml" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
table = [l for l in lines if "divisor" in l][0]
print("\n".join(l.replace("parent: egress", "parent: ingress") if l == table else l for l in lines))
PY
expect_rc 1 ts validate "$TMP/moved.yaml"
expect_contains "tcsync's dump puts it in egress chain 0 pref 10 protocol ip"
finish
