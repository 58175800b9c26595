#!/bin/bash
# In the kernel lab: one attribute changed in the YAML gives the smallest
# plan the kernel allows, applying it works, and diff is empty afterwards.
#   flower: new values under the same mask -> replace (same handle);
#           another mask (prefix, key added or removed) -> delete + add,
#           since fl_check_assign_mask() refuses such a replace (EINVAL);
#   gact, police (actions of a flower filter) -> replace of the filter;
#   matchall: any change -> delete + add (mall_change: EEXIST on replace).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns

base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, flower: {dst_ip: 10.0.0.1, ip_proto: tcp, dst_port: 80}, actions: [{gact: {control: drop}}]}
      - {parent: ingress, pref: 20, protocol: all, matchall: {}, actions: [{police: {rate: 1mbit, burst: 10k, exceed: drop}}]}
      - {parent: ingress, pref: 30, protocol: ip, flower: {ip_proto: udp}, actions: [{gact: {control: pass, random: {type: netrand, value: 10, control: drop}}}, {police: {rate: 2mbit, burst: 20k}}]}
Y
}
base >"$TMP/base.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 0 ts diff "$TMP/base.yaml"

# step NAME SED-EXPR WANT...: the minimal-plan check of lib.sh.

F10="v0: filter flower ingress pref 10 protocol ip handle 0x1"
F30="v0: filter flower ingress pref 30 protocol ip handle 0x1"
M20="v0: filter matchall ingress pref 20 protocol all handle 0x1"

step flower_value 's/dst_port: 80}/dst_port: 443}/' "~ $F10  (dst_port 80 -> 443)" "!- $F10"
OUT=$(t filter show dev v0 ingress pref 10)
expect_contains "dst_port 443"
expect_contains "handle 0x1"
step flower_values 's/dst_ip: 10.0.0.1, ip_proto: tcp, dst_port: 80/dst_ip: 10.0.0.2, ip_proto: udp, dst_port: 53/' "~ $F10" "!- $F10"
step flower_prefix 's|dst_ip: 10.0.0.1,|dst_ip: 10.0.0.0/8,|' "- $F10" "+ $F10" "cannot change in place"
step flower_key_added 's/dst_port: 80}/dst_port: 80, tcp_flags: 0x02}/' "- $F10" "+ $F10"
step flower_port_range 's/dst_port: 80}/dst_port: 80-90}/' "- $F10" "+ $F10"
step flower_skip_hw 's/dst_port: 80}/dst_port: 80, skip_hw: true}/' "~ $F10  (skip_hw false -> true)" "!- $F10"
step gact_control 's/control: drop}}\]}/control: goto chain 5}}]}/' "~ $F10  (gact control drop -> goto chain 5)" "!- $F10"
step gact_random 's/value: 10, control: drop/value: 20, control: pipe/' "~ $F30" "!- $F30"
step police_on_flower 's/rate: 2mbit, burst: 20k/rate: 3mbit, burst: 20k, conform: pipe/' "~ $F30" "!- $F30"
step police_on_matchall 's/rate: 1mbit, burst: 10k, exceed: drop/rate: 5mbit, burst: 10k, exceed: drop/' "- $M20" "+ $M20"
OUT=$(t filter show dev v0 ingress pref 20)
expect_contains "rate 5Mbit burst 10Kb"
step matchall_skip_hw 's/matchall: {}/matchall: {skip_hw: true}/' "- $M20" "+ $M20"

# The handle of a replaced flower filter stays; the kernel holds the new keys.
base | sed 's/dst_port: 80}/dst_port: 8080}/' >"$TMP/last.yaml"
expect_rc 0 ts apply "$TMP/last.yaml"
OUT=$(t filter show dev v0 ingress pref 10)
expect_contains "handle 0x1"
expect_contains "dst_port 8080"
finish
