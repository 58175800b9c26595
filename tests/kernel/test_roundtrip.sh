#!/bin/bash
# State made with tc commands -> tcsync dump -> flush -> tcsync apply of the
# dump -> tc -j identical to the original (counters aside), diff empty.
source "$(dirname "$0")/lib.sh"
make_ns 4

# The reference state, written the way people write tc.
t qdisc add dev v0 root handle 1: htb default 30 r2q 20
t class add dev v0 parent 1: classid 1:1 htb rate 1gbit
t class add dev v0 parent 1:1 classid 1:10 htb rate 300mbit ceil 900mbit burst 15k prio 1
t class add dev v0 parent 1:1 classid 1:20 htb rate 50mbit ceil 100mbit cburst 30k quantum 3000
t class add dev v0 parent 1:1 classid 1:30 htb rate 1mbit
t qdisc add dev v0 parent 1:10 handle 10: pfifo limit 50
t qdisc add dev v0 parent 1:20 handle 20: bfifo limit 100kb
t qdisc add dev v0 parent 1:30 handle 30: tbf rate 1mbit burst 10kb latency 50ms
t filter add dev v0 parent 1: prio 5 protocol ip u32 match ip dst 10.0.0.0/8 match ip dport 22 0xffff flowid 1:10
t filter add dev v0 parent 1: prio 5 protocol ip u32 match ip src 192.168.1.0/24 flowid 1:20
t filter add dev v0 parent 1: prio 6 protocol ipv6 u32 match ip6 dst 2001:db8::/32 flowid 1:20
t filter add dev v0 parent 1: prio 7 handle 2: protocol ip u32 divisor 256
t filter add dev v0 parent 1: prio 7 protocol ip u32 link 2: hashkey mask 0x000000ff at 16 match ip dst 172.16.0.0/16
t filter add dev v0 parent 1: prio 7 protocol ip u32 ht 2:5: match ip dst 172.16.0.5 flowid 1:30
t filter add dev v0 parent 1:1 prio 3 protocol ip u32 match ip tos 0x10 0xff flowid 1:10
t qdisc add dev v1 clsact
t filter add dev v1 ingress prio 1 protocol ip u32 match ip src 10.0.0.0/8 action mirred egress redirect dev v0
t filter add dev v1 egress prio 2 protocol all u32 match u32 0 0 action mirred egress mirror dev v2
t qdisc add dev v2 root handle 5: tbf rate 200mbit burst 64kb limit 100kb
t qdisc add dev v3 ingress
t filter add dev v3 parent ffff: prio 9 protocol arp u32 match u32 0 0 action mirred ingress redirect dev v1

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"

# Flush everything tc made.
for d in v0 v2; do t qdisc del dev $d root; done
t qdisc del dev v1 clsact
t qdisc del dev v3 ingress
snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi

expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
# And dump again is byte-identical.
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }
finish
