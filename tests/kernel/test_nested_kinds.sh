#!/bin/bash
# The kind probe sees every kind a plan sends, in every nesting (issue 38):
# a u32 rule's own `police:` needs act_police as much as `actions: [{police:
# ...}]` does. The host kernel has none: `apply` and `diff` refuse the file at
# the police's line before anything is sent, and the old htb tree the plan
# would delete first is still there, counters and all.
source "$(dirname "$0")/lib.sh"
make_ns
# No IPv6 on the links: its autoconfiguration's packets would move the
# counters the before/after comparisons read.
ip netns exec "$NS" sysctl -qw net.ipv6.conf.v0.disable_ipv6=1 net.ipv6.conf.v1.disable_ipv6=1
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit
t filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 10.0.0.1/32 flowid 1:10
state() { for o in qdisc class filter; do t -s "$o" show dev v0; done; }
state >"$TMP/before.txt"
cat >"$TMP/f.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "2:", default: "2:10"}]
    classes: [{parent: "2:", classid: "2:10", kind: htb, rate: 20mbit}]
    filters:
      - {parent: "2:", pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.2/32}}]}, classid: "2:10", police: {rate: 1mbit, burst: 10k}}
Y
for cmd in "apply" "diff" "apply --dry-run"; do
  expect_rc 1 ts $cmd "$TMP/f.yaml"
  expect_contains "$TMP/f.yaml:7:114: error: action kind 'police' is not in this kernel (no act_police: built without it, or the module is missing)"
  expect_contains "nothing was changed"
  state >"$TMP/now.txt"
  expect_same_file "$TMP/before.txt" "$TMP/now.txt" "$cmd: tc -s qdisc/class/filter show unchanged"
done
# Without the police the same file applies, and diff is empty after it.
sed -i 's/, police: {rate: 1mbit, burst: 10k}//' "$TMP/f.yaml"
expect_rc 2 ts diff "$TMP/f.yaml"
expect_rc 0 ts apply "$TMP/f.yaml"
expect_rc 0 ts diff "$TMP/f.yaml"
finish
