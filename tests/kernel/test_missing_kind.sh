#!/bin/bash
# A kind this kernel lacks (the host has no flower, gact or fq_codel) is an
# error naming the kind at the first line that uses it, before anything is
# sent: the state is unchanged, also the parts of the file the kernel has.
source "$(dirname "$0")/lib.sh"
make_ns
t qdisc add dev v1 root handle 1: htb default 10
snapshot >"$TMP/before.txt"
cat >"$TMP/f.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {src: 10.0.0.0/8}}]}, actions: [{mirred: {direction: egress, action: redirect, dev: v1}}]}
      - {parent: ingress, pref: 20, protocol: ip, flower: {ip_proto: udp}, actions: [{gact: {control: drop}}]}
      - {parent: ingress, pref: 30, protocol: ip, flower: {ip_proto: tcp}, actions: [{gact: {control: pass}}]}
  v1:
    qdiscs: [{kind: fq_codel, handle: "2:"}]
Y
for cmd in "apply" "apply --dry-run" "diff"; do
  expect_rc 1 ts $cmd "$TMP/f.yaml"
  expect_contains "$TMP/f.yaml:7:9: error: filter kind 'flower' is not in this kernel (no cls_flower: built without it, or the module is missing)"
  expect_contains "$TMP/f.yaml:7:86: error: action kind 'gact' is not in this kernel (no act_gact"
  expect_contains "$TMP/f.yaml:10:14: error: qdisc kind 'fq_codel' is not in this kernel (no sch_fq_codel"
  expect_contains "nothing was changed"
  # Named once, at its first use; kinds the kernel has are not named.
  [ "$(grep -c "kind 'flower'" <<<"$OUT")" = 1 ] && pass "$cmd: flower named once" || fail "$cmd: flower named more than once"
  if grep -q "kind 'u32'\|kind 'mirred'\|kind 'clsact'" <<<"$OUT"; then fail "$cmd: a kind the kernel has was named"; else pass "$cmd: only missing kinds named"; fi
  snapshot >"$TMP/now.txt"
  expect_same_file "$TMP/before.txt" "$TMP/now.txt" "$cmd: state unchanged"
done
# Probing leaves no trace in the namespace (it runs in a scratch one).
OUT=$(ip netns exec "$NS" ip -o link show)
[ "$(wc -l <<<"$OUT")" = 3 ] && pass "no probe device left behind" || { fail "links changed"; echo "$OUT"; }
# The same file without the missing kinds applies.
sed -i -e '/flower/d' -e 's/fq_codel, handle: "2:"/htb, handle: "2:"/' "$TMP/f.yaml"
expect_rc 0 ts apply "$TMP/f.yaml"
finish
