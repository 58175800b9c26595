#!/bin/bash
# mq on this host's kernel: a 4-queue veth with a child qdisc per queue (made
# with tc) -> tcsync dump -> flush -> apply -> tc -j identical, diff empty;
# a child's change is a change in place; a queue the device lacks is refused.
source "$(dirname "$0")/lib.sh"
ip netns add "$NS"
ip -n "$NS" link add v0 numtxqueues 4 type veth peer name v1 numtxqueues 4
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up

t qdisc add dev v0 root handle 4: mq
t qdisc add dev v0 parent 4:1 handle 41: pfifo limit 50
t qdisc add dev v0 parent 4:2 handle 42: bfifo limit 5000
t qdisc add dev v0 parent 4:3 handle 43: tbf rate 10mbit burst 10k limit 30k
t qdisc add dev v0 parent 4:4 handle 44: htb default 10
t class add dev v0 parent 44: classid 44:10 htb rate 5mbit

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
expect_contains '{kind: mq, parent: root, handle: "4:"}'
expect_contains '{kind: pfifo, parent: "4:1", handle: "41:", limit: 50}'
t qdisc del dev v0 root
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"

sed 's/limit: 50}/limit: 60}/' "$TMP/dump.yaml" >"$TMP/changed.yaml"
expect_rc 2 ts diff "$TMP/changed.yaml"
expect_contains "~ v0: qdisc pfifo 41: parent 4:1  (limit 50 -> 60)"
if grep -q "qdisc mq" <<<"$OUT"; then fail "mq itself is in the plan"; else pass "mq itself is not in the plan"; fi
expect_rc 0 ts apply "$TMP/changed.yaml"
expect_rc 0 ts diff "$TMP/changed.yaml"

# Queue 5 does not exist on a 4-queue device: the kernel says so, tcsync stops.
sed 's/parent: "4:1", handle: "41:"/parent: "4:5", handle: "41:"/' "$TMP/dump.yaml" >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "Specified class not found"
finish
