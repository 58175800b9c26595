#!/bin/bash
# u32 lists that share one table space: the kernel keeps one set of u32
# tables per qdisc (tc_u_common), so a clsact's ingress and egress lists at
# one pref, or an htb qdisc's and its class's, each list the other's rules
# too. tcsync's dump must keep each rule once, in its own list (the root
# table a list owns is asked of the kernel), and apply must give back the
# same state; before, the dump listed every rule twice and apply refused it.
# (Lists are made in tcsync's order, parent then pref, as tc makes them here:
# the kernel names u32 root tables in the order lists are made.)
source "$(dirname "$0")/lib.sh"
make_ns
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
finish
