#!/bin/bash
# In the kernel lab (the host kernel has no act_ct): flower and matchall
# filters whose action lists use ct (conntrack) in several word sets: plain
# lookup, zone, commit [force], mark and label (masked), clear, nat restore,
# nat src/dst with IPv4 and IPv6 ranges and ports, and verdicts.
#   1. made by tc (-b) -> tcsync dump -> flush -> tcsync apply of the dump ->
#      tc -j identical (counters aside), diff empty, a second dump identical;
#   2. `tcsync import` of the same tc batch + apply in a fresh namespace gives
#      the state tc -b gives in another;
#   3. one attribute changed (zone, mark, nat range, commit) -> the plan is a
#      replace of the flower filter holding it (no delete + add).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

# ---- 1. round trip ----------------------------------------------------------
B=$TMP/ct.tc
# tc 6.1 reads a word after `nat ...` unconditionally: a verdict or another
# action follows every nat here.
cat >"$TMP/acts.txt" <<'ACTS'
action ct
action ct zone 5 pipe
action ct commit
action ct commit force zone 2 mark 0x10/0xff
action ct commit mark 5 label 0102030405060708090a0b0c0d0e0f10/ffff0000000000000000000000000000
action ct clear action gact pass
action ct nat pipe
action ct zone 4 nat drop
action ct commit nat src addr 10.0.0.1-10.0.0.5 port 1000-2000 pipe
action ct commit zone 3 nat dst addr 2001:db8::1-2001:db8::9 port 80 goto chain 2
action ct commit nat dst addr 10.0.0.7 continue action ct clear
action ct commit label 01 pipe
ACTS
acts_batch "$TMP/acts.txt" >"$B"
roundtrip "$B" v0
[ "$(grep -o '"kind": *"ct"' "$TMP/before.json" | wc -l)" -ge 12 ] && pass "tc made the ct actions" || { fail "tc made too few ct actions"; cat "$TMP/before.json"; }

# ---- 2. import --------------------------------------------------------------
import_check "$B" v0

# ---- 3. plans: one attribute changed -> replace of the filter ---------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{ct: {zone: 3}}]}
      - {parent: ingress, pref: 2, protocol: ip, flower: {ip_proto: tcp}, actions: [{ct: {commit: true, mark: 0x10/0xff, label: '01'}}]}
      - {parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: tcp}, actions: [{ct: {commit: true, nat: src, nat_addr: 10.0.0.1-10.0.0.5, nat_port: 1000-2000}}]}
Y
}
apply_base

# replace_step NAME PREF SED-EXPR: the minimal-plan check of lib.sh.
replace_step ct_zone 1 's/zone: 3}/zone: 4}/'
replace_step ct_mark 2 's/mark: 0x10\/0xff/mark: 0x20\/0xff/'
replace_step ct_nat_port 3 's/nat_port: 1000-2000/nat_port: 1000-3000/'
replace_step ct_to_clear 1 's/{zone: 3}/{clear: true}/'
finish
