#!/bin/bash
# In the kernel lab (the host kernel has no act_pedit): flower filters whose
# actions are pedit in the forms tc writes (eth, ip, ip6, tcp, udp fields,
# set/add/decrement, retain, offsets, with and without ex, a key no edit
# makes).
#   1. made by tc (-b) -> tcsync dump -> flush -> tcsync apply of the dump ->
#      tc -j identical (counters aside), diff empty, a second dump identical;
#   2. `tcsync import` of the same tc batch + apply in a fresh namespace gives
#      the state tc -b gives in another;
#   3. one edit's value changed -> the plan is a replace of the flower filter
#      holding it (no delete + add), applied, diff empty.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

# ---- 1. round trip ----------------------------------------------------------
B=$TMP/pedit.tc
cat >"$B" <<'TC'
qdisc add dev v0 clsact
filter add dev v0 ingress prio 1 protocol ip flower ip_proto tcp action pedit ex munge eth src set 02:00:00:00:00:01 munge eth dst set 02:11:22:33:44:55
filter add dev v0 ingress prio 2 protocol ip flower ip_proto udp action pedit ex munge ip src set 10.0.0.1 munge ip dst set 192.168.1.2 pipe
filter add dev v0 ingress prio 3 protocol ip flower ip_proto tcp action pedit munge ip tos set 0x10 munge ip dsfield set 0xb8 retain 0xfc
filter add dev v0 ingress prio 4 protocol ip flower action pedit ex munge ip ttl decrement munge ip tos add 4 munge ip ttl set 64
filter add dev v0 ingress prio 5 protocol ipv6 flower action pedit ex munge ip6 src set 2001:db8::1 munge ip6 dst set 2001:db8::2 munge ip6 hoplimit decrement munge ip6 traffic_class set 0x20 drop
filter add dev v0 ingress prio 6 protocol ip flower ip_proto tcp action pedit ex munge tcp sport set 1234 munge tcp dport set 80 munge tcp flags set 0x12
filter add dev v0 ingress prio 7 protocol ip flower ip_proto udp action pedit ex munge udp sport set 53 munge udp dport set 5353 action gact pass
filter add dev v0 ingress prio 8 protocol ip flower action pedit munge offset 0 u32 set 0x01020304 munge offset 13 u8 set 5 munge offset 22 u16 set 0x1234 retain 0xff00 continue
filter add dev v0 ingress prio 9 protocol ip flower action pedit ex munge offset 4 u16 set 7 munge eth type set 0x0800
filter add dev v0 ingress prio 10 protocol ipv6 flower action pedit ex munge ip6 hoplimit set 10 munge ip6 traffic_class set 0x20 retain 0xf0
filter add dev v0 ingress prio 11 protocol ip flower action pedit munge offset 0 u8 invert munge ip ttl set 3
TC
roundtrip "$B" v0
[ "$(grep -oE '"kind": *"pedit"' "$TMP/before.json" | wc -l)" = 11 ] && pass "tc made 11 pedit actions" || fail "tc made 11 pedit actions"
grep -q "decrement: true" "$TMP/dump.yaml" && pass "dump reads keys as edits" || fail "dump reads keys as edits"
grep -q "raw:" "$TMP/dump.yaml" && pass "dump keeps a raw key" || fail "dump keeps a raw key"

# ---- 2. import --------------------------------------------------------------
# tc's `invert` (prio 11) has no edit spelling: import refuses it, so this batch leaves it out.
grep -v "prio 11 " "$B" >"$TMP/import.tc"
import_check "$TMP/import.tc" v0

# ---- 3. plans: one edit changed -> replace of the filter --------------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{pedit: {edits: [{ip: ttl, decrement: true}, {tcp: dport, set: 80}]}}]}
      - {parent: ingress, pref: 2, protocol: ip, flower: {ip_proto: udp}, actions: [{pedit: {edits: [{eth: dst, set: '02:00:00:00:00:01'}, {ip: dst, set: 10.0.0.1}]}}]}
Y
}
apply_base

# replace_step NAME PREF SED-EXPR [WANT...]: the minimal-plan check of lib.sh;
# =1: the replace is the plan's only step.
replace_step pedit_dport 1 's/set: 80}/set: 8080}/' =1
replace_step pedit_ip_dst 2 's/set: 10.0.0.1}/set: 10.0.0.2}/' =1
finish
