#!/bin/bash
# In the kernel lab (every tc module): state made with tc using flower (many
# key types), matchall, gact (goto chain, jump, random), police, mirred, u32,
# htb and clsact -> tcsync dump -> flush -> tcsync apply of the dump -> tc -j
# identical to the original, diff empty, a second dump byte-identical.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4

# v0: an htb tree classified by flower, u32 and matchall.
t qdisc add dev v0 root handle 1: htb default 30
t class add dev v0 parent 1: classid 1:10 htb rate 100mbit
t class add dev v0 parent 1: classid 1:30 htb rate 1mbit
t filter add dev v0 parent 1: prio 1 protocol ip flower dst_ip 10.0.0.0/8 ip_proto tcp dst_port 80 classid 1:10
t filter add dev v0 parent 1: prio 1 protocol ip flower dst_ip 10.2.0.0/16 ip_proto udp dst_port 53 classid 1:10
t filter add dev v0 parent 1: prio 2 protocol ip u32 match ip dst 192.168.0.0/16 flowid 1:30
t filter add dev v0 parent 1: prio 3 protocol all matchall classid 1:30 action police rate 1mbit burst 10k conform-exceed drop/pipe

# v1: clsact, flower key types one by one, actions of every kind.
t qdisc add dev v1 clsact
t filter add dev v1 ingress prio 1 protocol ip flower src_mac 02:00:00:00:00:01 dst_mac 02:00:00:00:00:00/24 \
  ip_proto udp src_ip 192.168.1.1 dst_ip 10.1.2.3/8 src_port 1000-2000 dst_port 53 ip_tos 0x10/0xfc ip_ttl 64 \
  ip_flags frag/nofirstfrag skip_hw action gact drop
t filter add dev v1 ingress prio 1 protocol ip flower ip_proto tcp tcp_flags 0x12/0x3f dst_port 80 src_port 1024 \
  action gact pass random determ drop 10
t filter add dev v1 ingress prio 2 protocol ipv6 flower ip_proto icmpv6 src_ip 2001:db8::1/64 dst_ip 2001:db8::2 type 128 code 0 \
  action gact goto chain 5
t filter add dev v1 ingress prio 3 protocol ip flower ip_proto icmp type 8/255 action gact pipe action gact jump 1 action gact drop
t filter add dev v1 ingress prio 4 protocol ip flower ct_state +trk+est-new ct_zone 5 ct_mark 0x10/0xff \
  ct_label 0102030405060708090a0b0c0d0e0f10/ffffffffffffffff0000000000000000 action gact continue
t filter add dev v1 ingress prio 5 protocol ip flower enc_key_id 100 enc_src_ip 10.0.0.1 enc_dst_ip 10.0.0.2 enc_dst_port 4789 \
  action police rate 40gbit burst 1m conform-exceed continue/pipe
t filter add dev v1 ingress prio 6 protocol 802.1q flower vlan_id 10 vlan_prio 3 vlan_ethtype 802.1ad cvlan_id 20 cvlan_prio 1 \
  cvlan_ethtype ip ip_proto tcp classid 1:1
t filter add dev v1 ingress prio 7 protocol ip flower indev v1 ip_proto sctp dst_port 1-65535 action gact pass
t filter add dev v1 ingress prio 8 protocol 802.1q flower vlan_id 11 vlan_ethtype ipv6 dst_ip 2001:db8::/32 ip_proto udp src_port 5000/0xff00
t filter add dev v1 ingress prio 9 protocol all flower action mirred egress redirect dev v2
t filter add dev v1 ingress chain 5 prio 1 protocol all matchall \
  action police rate 1mbit burst 10k mtu 1514 peakrate 2mbit conform-exceed drop/pipe overhead 14 mpu 64
t filter add dev v1 egress prio 1 protocol all matchall skip_hw action mirred egress mirror dev v2 action police rate 10mbit burst 20k drop
t filter add dev v1 egress prio 2 protocol ip u32 match ip src 10.0.0.0/8 action gact drop

# v3: the plain ingress qdisc.
t qdisc add dev v3 ingress
t filter add dev v3 parent ffff: prio 1 protocol arp flower action gact drop

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"

t qdisc del dev v0 root
t qdisc del dev v1 clsact
t qdisc del dev v3 ingress
snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi

expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }
finish
