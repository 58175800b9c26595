#!/bin/bash
# In the kernel lab (the host kernel has none of these modules): filters whose
# action lists use skbedit, vlan, csum, nat, sample, connmark, skbmod, mpls
# and tunnel_key with several option sets each.
#   1. made by tc (-b) -> tcsync dump -> flush -> tcsync apply of the dump ->
#      tc -j identical (counters aside), diff empty, a second dump identical;
#   2. `tcsync import` of the same tc batch + apply in a fresh namespace gives
#      the state tc -b gives in another;
#   3. one attribute changed per action kind -> the plan is a replace of the
#      flower filter holding it (no delete + add), applied, diff empty.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

# ---- 1. round trip ----------------------------------------------------------
B=$TMP/actions.tc
# Each line: one filter's action words (several actions per filter at times);
# even lines go to flower filters on ingress, odd ones to matchall on egress.
cat >"$TMP/acts.txt" <<'ACTS'
action skbedit mark 5
action skbedit mark 0x10/0xff priority 1:10
action skbedit queue_mapping 3 action skbedit ptype host
action skbedit ptype otherhost pipe action skbedit ptype broadcast action skbedit ptype multicast
action skbedit inheritdsfield
action skbedit priority 10: mark 7 drop
action skbedit mark 1 goto chain 3
action skbedit mark 0xffffffff/0xffffffff queue_mapping 0 priority ffff:ffff index 40 action gact pass
action vlan pop
action vlan push id 10
action vlan push id 20 protocol 802.1ad priority 3 action vlan modify id 30 priority 2 pipe
action vlan modify id 40 drop
action vlan pop_eth action vlan push_eth dst_mac 02:00:00:00:00:01 src_mac 02:00:00:00:00:02
action csum ip4h
action csum iph and tcp and udp
action csum icmp igmp sctp udplite goto chain 2
action nat ingress 10.0.0.1 192.168.0.1
action nat egress 10.0.0.0/24 192.168.1.0 pipe
action nat ingress any 1.2.3.4 drop
action sample rate 100 group 5
action sample rate 10 group 1 trunc 128 action sample rate 1000 group 2 drop
action connmark
action connmark zone 5 action connmark zone 7 pipe
action skbmod set dmac 02:00:00:00:00:01
action skbmod set smac 02:00:00:00:00:02 set etype 0x0800
action skbmod swap mac pipe
action skbmod set dmac 02:00:00:00:00:01 set smac 02:00:00:00:00:02 set etype 0x86dd drop
action mpls pop protocol ipv4
action mpls push label 100
action mpls push protocol mpls_mc label 200 tc 3 ttl 64 bos 1 action mpls push label 1 ttl 255 protocol mpls_uc
action mpls modify label 300 tc 2
action mpls modify ttl 10 action mpls dec_ttl pipe
action mpls mac_push label 50
action mpls dec_ttl goto chain 1
action tunnel_key unset
action tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 100
action tunnel_key set src_ip 2001:db8::1 dst_ip 2001:db8::2 id 7 dst_port 4789 tos 0x10 ttl 64 action tunnel_key unset goto chain 4
action tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 2 nocsum pipe
action tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 dst_port 6081 ttl 10 csum drop
ACTS
# skbmod goes to v1: tc -j prints it as broken JSON (iproute2 6.1), and
# tc_snapshot.py then compares that device's filters as text lines.
acts_batch "$TMP/acts.txt" skbmod v1 >"$B"
roundtrip "$B" v0 v1
for k in skbedit vlan csum nat sample connmark skbmod mpls tunnel_key; do
  grep -q "$k" "$TMP/before.json" && pass "tc made $k actions" || fail "tc made no $k action"
done

# ---- 2. import --------------------------------------------------------------
import_check "$B" v0 v1

# ---- 3. plans: one attribute changed -> replace of the filter ---------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{skbedit: {mark: 5, mask: 0xff, priority: '1:10'}}]}
      - {parent: ingress, pref: 2, protocol: ip, flower: {ip_proto: tcp}, actions: [{vlan: {action: push, id: 10, priority: 1}}]}
      - {parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: tcp}, actions: [{csum: {ip4h: true, tcp: true}}]}
      - {parent: ingress, pref: 4, protocol: ip, flower: {ip_proto: tcp}, actions: [{nat: {direction: egress, old: 10.0.0.0/24, new: 192.168.1.0}}]}
      - {parent: ingress, pref: 5, protocol: ip, flower: {ip_proto: tcp}, actions: [{sample: {rate: 100, group: 5}}]}
      - {parent: ingress, pref: 6, protocol: ip, flower: {ip_proto: tcp}, actions: [{connmark: {zone: 3}}]}
      - {parent: ingress, pref: 7, protocol: ip, flower: {ip_proto: tcp}, actions: [{skbmod: {dmac: '02:00:00:00:00:01'}}]}
      - {parent: ingress, pref: 8, protocol: ip, flower: {ip_proto: tcp}, actions: [{mpls: {action: push, label: 100}}]}
      - {parent: ingress, pref: 9, protocol: ip, flower: {ip_proto: tcp}, actions: [{tunnel_key: {action: set, src_ip: 10.0.0.1, dst_ip: 10.0.0.2, id: 5}}]}
Y
}
apply_base

# replace_step NAME PREF SED-EXPR: the minimal-plan check of lib.sh.
replace_step skbedit_mark 1 's/mark: 5, mask: 0xff/mark: 6, mask: 0xff/'
replace_step skbedit_ptype 1 "s/priority: '1:10'/priority: '1:10', ptype: host/"
replace_step vlan_id 2 's/id: 10, priority: 1/id: 11, priority: 1/'
replace_step vlan_protocol 2 's/id: 10, priority: 1/id: 10, priority: 1, protocol: 802.1ad/'
# A push's priority 0 is the kernel's default, which it dumps for every
# push: read as given, it was a difference no apply could end.
replace_step vlan_priority_0 2 's/id: 10, priority: 1/id: 10, priority: 0/'
replace_step csum_udp 3 's/ip4h: true, tcp: true/ip4h: true, udp: true/'
replace_step nat_new 4 's/new: 192.168.1.0/new: 192.168.2.0/'
replace_step nat_direction 4 's/direction: egress/direction: ingress/'
replace_step sample_rate 5 's/rate: 100, group: 5/rate: 200, group: 5/'
replace_step sample_trunc 5 's/rate: 100, group: 5/rate: 100, group: 5, trunc: 64/'
replace_step connmark_zone 6 's/zone: 3/zone: 4/'
replace_step connmark_control 6 's/zone: 3/zone: 3, control: drop/'
replace_step skbmod_dmac 7 "s/dmac: '02:00:00:00:00:01'/dmac: '02:00:00:00:00:02'/"
replace_step skbmod_etype 7 "s/dmac: '02:00:00:00:00:01'/dmac: '02:00:00:00:00:01', etype: ipv6/"
replace_step mpls_label 8 's/label: 100}/label: 101}/'
replace_step mpls_ttl 8 's/label: 100}/label: 100, ttl: 7}/'
replace_step tunnel_key_id 9 's/id: 5}/id: 6}/'
replace_step tunnel_key_csum 9 's/id: 5}/id: 5, csum: false}/'
finish
