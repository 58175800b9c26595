#!/bin/bash
# In the kernel lab: a tc batch file with flower, matchall, gact and police
# run with `tc -b` in one namespace, and `tcsync import` + `tcsync apply` of
# the same file in another, give the same tc -j state; the next diff is empty.
# Then the same for tc-8 man-page lines whose words only tc spells so (the
# kind tables' tc_words): prio priomap, netem's positional jitter and
# correlations, fq_codel noecn, u32 ip6 icmp_type, cake diffserv4 twice,
# fw handle/mask, a qdisc under tbf's and netem's class 1:1.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
make_ref_ns 4

B=$TMP/site.tc
cat >"$B" <<'TC'
qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 1 handle 1 flower dst_ip 10.0.0.0/8 ip_proto tcp dst_port 80 action gact drop
filter add dev v0 ingress protocol ip prio 1 handle 2 flower src_mac 02:00:00:00:00:01 ip_proto udp dst_port 1000-2000 action gact pass
filter add dev v0 ingress protocol ipv6 prio 2 handle 1 flower src_ip 2001:db8::/32 action gact goto chain 5
filter add dev v0 ingress protocol all prio 3 handle 1 matchall action police rate 1mbit burst 10k conform-exceed drop/pipe
filter add dev v0 egress protocol ip prio 4 handle 1 flower ip_proto icmp action mirred egress redirect dev v1
TC
expect_rc 0 tc -n "$REF" -b "$B"
rc=0
"$TCSYNC" import "$B" >"$TMP/site.yaml" 2>"$TMP/import.err" || rc=$?
[ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
expect_rc 0 ts apply "$TMP/site.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref.json"
snapshot >"$TMP/tcsync.json"
grep -q '"kind": "flower"' "$TMP/ref.json" && grep -q '"kind": "police"' "$TMP/ref.json" &&
  pass "reference state has flower and police" || fail "reference state lacks flower or police"
expect_same_file "$TMP/ref.json" "$TMP/tcsync.json" "import + apply gives the state tc -b gives (flower, matchall, gact, police, mirred)"
expect_rc 0 ts diff "$TMP/site.yaml"

# ---- tc's own spellings ------------------------------------------------------------
# No IPv6 chatter: a queued packet would show as a cake flow class on one side only.
for n in "$NS" "$REF"; do
  tc -n "$n" qdisc del dev v0 clsact
  for d in v0 v1 v2 v3; do ip netns exec "$n" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
done
W=$TMP/words.tc
cat >"$W" <<'TC'
qdisc add dev v0 root handle 1: prio priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
qdisc add dev v0 parent 1:1 handle 10: netem delay 10ms 2ms 25% loss 1% 25%
qdisc add dev v0 parent 1:2 handle 20: fq_codel noecn
qdisc add dev v0 parent 1:3 handle 30: tbf rate 1mbit burst 10k latency 50ms
qdisc add dev v0 parent 30:1 handle 31: pfifo limit 10
filter add dev v0 parent 1: protocol ipv6 prio 1 u32 match ip6 icmp_type 128 0xff match ip6 icmp_code 0 0xff flowid 1:1
filter add dev v0 parent 1: protocol ip prio 2 handle 1/0xff fw classid 1:2
qdisc add dev v1 root handle 1: cake bandwidth 10mbit diffserv4 diffserv4
qdisc add dev v2 root handle 2 netem duplicate 1% 25% corrupt 0.1% 10% delay 5ms reorder 25% 50%
qdisc add dev v2 parent 2:1 handle 21: bfifo limit 10000
qdisc add dev v3 ingress handle ffff:
TC
expect_rc 0 tc -n "$REF" -b "$W"
rc=0
"$TCSYNC" import "$W" >"$TMP/words.yaml" 2>"$TMP/words.err" || rc=$?
[ "$rc" = 0 ] && pass "import of tc's spellings exits 0" || { fail "import of tc's spellings exits $rc"; sed 's/^/    /' "$TMP/words.err"; }
expect_rc 0 ts apply "$TMP/words.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref2.json"
snapshot >"$TMP/tcsync2.json"
for k in prio netem fq_codel tbf cake fw; do
  # (tc -j prints fw as text: tc_snapshot keeps such lines as they are)
  grep -qE "\"kind\": \"$k\"| $k " "$TMP/ref2.json" && pass "reference state has $k" || fail "reference state lacks $k"
done
expect_same_file "$TMP/ref2.json" "$TMP/tcsync2.json" "import + apply gives the state tc -b gives (tc's spellings)"
expect_rc 0 ts diff "$TMP/words.yaml"
# ---- words real generators write (issue 37) ------------------------------------------
# cake's presets and flags, hfsc curves as rate or m2 alone, red's qevents,
# flow's addend as a negative address, mqprio's map and queues, action
# chains that go on without `action` (pedit ... pipe csum ip ..., ctinfo ...
# mirred ...), an ets class change, netem's distribution tables (not in tc
# -j: the unit test holds their bytes to tc's), basic's nbyte and tc-u32(8)'s
# hash table examples (rules with no prio in a table another list made):
# import + apply equals tc -b, and dump -> flush -> apply gives the same
# state again.
for n in "$NS" "$REF"; do
  for d in v0 v1 v2 v3; do
    for q in root clsact ingress; do tc -n "$n" qdisc del dev "$d" "$q" 2>/dev/null || true; done
  done
  ip -n "$n" link add q0 numtxqueues 4 type veth peer name q1
  ip -n "$n" link add u0 type veth peer name u1
  for d in q0 q1 u0 u1; do
    ip -n "$n" link set "$d" up
    ip netns exec "$n" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
  done
done
G=$TMP/generators.tc
cat >"$G" <<'TC'
qdisc add dev v0 root handle 1: cake bandwidth 10Mbit overhead 4 ethernet ether-vlan egress nonat nowash no-split-gso ack-filter besteffort dual-dsthost lan
qdisc add dev v1 root handle 1: hfsc default 10
class add dev v1 parent 1: classid 1:1 hfsc sc rate 10mbit ul rate 20mbit
class add dev v1 parent 1:1 classid 1:10 hfsc ls m2 5mbit rt umax 1500 dmax 10ms rate 2mbit
class add dev v1 parent 1:1 classid 1:20 hfsc sc m1 4mbit d 20ms m2 1mbit
qdisc add dev v2 root handle 2: red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit qevent early_drop block 10 qevent mark block 11 ecn
qdisc add dev v3 root handle 3: prio
filter add dev v3 parent 3: prio 1 handle 1 flow map key dst addend -10.0.0.0 divisor 256
filter add dev v3 parent 3: prio 2 handle 2 flow hash keys src,dst addend -::1:2 divisor 64 baseclass 3:1
qdisc add dev v3 clsact
filter add dev v3 ingress prio 1 matchall action pedit ex munge ip dst set 10.0.0.1 pipe csum ip and tcp
filter add dev v3 ingress prio 2 matchall action ctinfo dscp 0xfc000000 0x01000000 mirred egress redirect dev v1
filter add dev v3 egress prio 3 matchall action vlan push id 5 pipe mirred egress mirror dev v1 pipe drop
filter add dev v3 egress prio 4 matchall action gact drop random determ pass 10 action pass random netrand drop 100
qdisc add dev q0 root handle 1: mqprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@1 2@2 hw 0
qdisc add dev q1 root handle 1: ets bands 4 strict 1 quanta 1500 2500 3500 priomap 0 1 2 3
class change dev q1 classid 1:3 ets quantum 5000
qdisc add dev q1 parent 1:4 handle 14: netem delay 100ms 10ms 25% distribution paretonormal
qdisc add dev q1 parent 1:2 handle 12: netem delay 20ms 5ms distribution normal
filter add dev q1 parent 1: prio 1 basic match 'nbyte("ab\x01" at 4 layer 2) and not nbyte(xyz at 0)' classid 1:2
qdisc add dev u0 root handle 1: htb
filter add dev u0 parent 1:0 protocol ip handle 1: u32 divisor 1
filter add dev u0 parent 1:0 protocol ip u32 ht 1: match tcp src 22 FFFF classid 1:2
filter add dev u0 parent 1:0 protocol ip u32 ht 800: match ip protocol 6 FF match u16 0 1fff at 6 offset at 0 mask 0f00 shift 6 link 1:
qdisc add dev u1 root handle 1: htb
filter add dev u1 parent 1: prio 99 handle 1: u32 divisor 256
filter add dev u1 parent 1: prio 1 u32 link 1: hashkey mask 0x0000ff00 at 12 match ip src 192.168.0.0/16
filter add dev u1 parent 1: prio 99 u32 ht 1: sample u32 0x00000800 0x0000ff00 at 12 match ip src 192.168.8.0/24 classid 1:1
TC
expect_rc 0 tc -n "$REF" -b "$G"
rc=0
"$TCSYNC" import "$G" >"$TMP/gen.yaml" 2>"$TMP/gen.err" || rc=$?
[ "$rc" = 0 ] && pass "import of the generators' words exits 0" || { fail "import of the generators' words exits $rc"; sed 's/^/    /' "$TMP/gen.err"; }
expect_rc 0 ts apply "$TMP/gen.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref3.json"
snapshot >"$TMP/tcsync3.json"
for k in cake hfsc red flow pedit csum ctinfo vlan mqprio ets netem basic; do
  grep -qE "\"kind\": \"$k\"| $k " "$TMP/ref3.json" && pass "reference state has $k" || fail "reference state lacks $k"
done
expect_same_file "$TMP/ref3.json" "$TMP/tcsync3.json" "import + apply gives the state tc -b gives (generators' words)"
expect_rc 0 ts diff "$TMP/gen.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/gen-dump.yaml"
for d in v0 v1 v2 v3 q0 q1 u0 u1; do t qdisc del dev "$d" root; done
t qdisc del dev v3 clsact
expect_rc 0 ts apply "$TMP/gen-dump.yaml"
snapshot >"$TMP/tcsync3-again.json"
# The kernel lists a device's qdiscs in its hash order, the reverse of the
# order they were made (two netems under ets here): dump lists them by
# handle, so apply makes them in another order than the script did. That
# order is not state (issue 37): compare the qdiscs sorted.
sorted_qdiscs() {
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
for st in s.values():
    if isinstance(st, dict) and isinstance(st.get("qdiscs"), list):
        st["qdiscs"].sort(key=lambda q: json.dumps(q, sort_keys=True))
print(json.dumps(s, indent=1, sort_keys=True))' "$1"
}
sorted_qdiscs "$TMP/ref3.json" >"$TMP/ref3-sorted.json"
sorted_qdiscs "$TMP/tcsync3-again.json" >"$TMP/tcsync3-again-sorted.json"
expect_same_file "$TMP/ref3-sorted.json" "$TMP/tcsync3-again-sorted.json" "dump -> flush -> apply gives the same state (generators' words; qdiscs in any order)"
expect_rc 0 ts diff "$TMP/gen-dump.yaml"
expect_contains "in sync"
finish
