#!/bin/bash
# In the kernel lab: the classful qdiscs prio, drr, hfsc, mq and mqprio.
# 1. State made with tc (prio with band children and u32 filters to its bands,
#    drr classes with fifo children, an hfsc tree with rt/ls/ul curves, mq and
#    mqprio on 4-queue veths with per-queue children) -> tcsync dump -> flush
#    -> apply of the dump -> tc -j identical, diff empty, second dump the same.
# 2. One attribute changed per kind -> the smallest plan the kernel allows.
source "$(dirname "$0")/../kernel/lib.sh"

# Multi-queue veths (mq needs queues to have children): v0..v7, all up.
ip netns add "$NS"
ip -n "$NS" link set lo up
for pair in v0:v1 v2:v3 v4:v5 v6:v7; do
  ip -n "$NS" link add "${pair%:*}" numtxqueues 4 type veth peer name "${pair#*:}" numtxqueues 4
  ip -n "$NS" link set "${pair%:*}" up
  ip -n "$NS" link set "${pair#*:}" up
done

echo "# 1. round trip of tc-made state"
# v0: prio, 4 bands, children on bands 2 and 4, u32 filters to the bands.
t qdisc add dev v0 root handle 1: prio bands 4 priomap 3 2 1 0 3 2 1 0
t qdisc add dev v0 parent 1:2 handle 10: pfifo limit 100
t qdisc add dev v0 parent 1:4 handle 40: bfifo limit 20000
t filter add dev v0 parent 1: prio 1 protocol ip u32 match ip dst 10.0.0.1/32 flowid 1:2
t filter add dev v0 parent 1: prio 2 protocol ip u32 match ip dst 10.0.0.4/32 flowid 1:4
# v1: drr, classes with and without a quantum, fifo children, filters.
t qdisc add dev v1 root handle 2: drr
t class add dev v1 parent 2: classid 2:1 drr quantum 3000
t class add dev v1 parent 2: classid 2:2 drr
t qdisc add dev v1 parent 2:1 handle 21: bfifo limit 10000
t qdisc add dev v1 parent 2:2 handle 22: pfifo limit 30
t filter add dev v1 parent 2: prio 1 protocol ip u32 match ip dst 10.0.0.2/32 flowid 2:1
t filter add dev v1 parent 2: prio 1 protocol ip u32 match ip dst 10.0.0.3/32 flowid 2:2
# v2: hfsc tree; odd values show the kernel's fixed-point round trip.
t qdisc add dev v2 root handle 3: hfsc default 20
t class add dev v2 parent 3: classid 3:1 hfsc sc rate 10mbit ul rate 20mbit
t class add dev v2 parent 3:1 classid 3:10 hfsc rt m1 2mbit d 10ms m2 1mbit ls rate 5mbit
t class add dev v2 parent 3:1 classid 3:20 hfsc ls m2 1mbit ul m2 3mbit
t class add dev v2 parent 3:1 classid 3:30 hfsc rt m1 1001kbit d 333us m2 777777bit
t qdisc add dev v2 parent 3:10 handle 31: pfifo limit 10
t filter add dev v2 parent 3: prio 1 protocol ip u32 match ip dst 10.0.0.10/32 flowid 3:10
# v4: mq with children on queues 1 and 2 (3 and 4 keep the default).
t qdisc add dev v4 root handle 4: mq
t qdisc add dev v4 parent 4:1 handle 41: pfifo limit 50
t qdisc add dev v4 parent 4:2 handle 42: bfifo limit 5000
# v6: mqprio, 2 traffic classes over 4 queues, a child on queue 1.
t qdisc add dev v6 root handle 5: mqprio num_tc 2 map 0 0 0 0 1 1 1 1 queues 2@0 2@2 hw 0
t qdisc add dev v6 parent 5:1 handle 51: pfifo limit 7

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
cp <(echo "$OUT") "$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
for dev in v0 v1 v2 v4 v6; do t qdisc del dev $dev root; done
snapshot >"$TMP/flushed.txt"
if cmp -s "$TMP/before.txt" "$TMP/flushed.txt"; then fail "flush changed something"; else pass "flushed"; fi
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j state after dump+apply equals the original"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }
OUT=$(t class show dev v0)
expect_contains "class prio 1:4 parent 1: leaf 40:"
OUT=$(t class show dev v4)
expect_contains "class mq 4:2 root leaf 42:"
for dev in v0 v1 v2 v4 v6; do t qdisc del dev $dev root; done

echo "# 2. one attribute changed -> the smallest plan"
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: prio, handle: "1:", bands: 3, priomap: [2, 1, 0]}
      - {kind: pfifo, parent: "1:2", handle: "10:", limit: 100}
    filters:
      - {parent: "1:", pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1/32}}]}, flowid: "1:2"}
  v1:
    qdiscs:
      - {kind: drr, handle: "2:"}
      - {kind: bfifo, parent: "2:1", handle: "21:", limit: 10000}
    classes:
      - {classid: "2:1", quantum: 3000}
      - {classid: "2:2"}
  v2:
    qdiscs:
      - {kind: hfsc, handle: "3:", default: "3:20"}
    classes:
      - {classid: "3:1", sc: 10mbit, ul: 20mbit}
      - {classid: "3:10", parent: "3:1", rt: {m1: 2mbit, d: 10ms, m2: 1mbit}, ls: 5mbit}
      - {classid: "3:20", parent: "3:1", ls: 1mbit, ul: 2mbit}
  v4:
    qdiscs:
      - {kind: mq, handle: "4:"}
      - {kind: pfifo, parent: "4:1", handle: "41:", limit: 50}
  v6:
    qdiscs:
      - {kind: mqprio, handle: "5:", num_tc: 2, map: [0, 0, 0, 0, 1, 1, 1, 1], queues: ["2@0", "2@2"], hw: 0}
      - {kind: pfifo, parent: "5:1", handle: "51:", limit: 7}
Y
}
base >"$TMP/base.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 0 ts diff "$TMP/base.yaml"

# step NAME SED-EXPR WANT...: the minimal-plan check of lib.sh.

P="v0: qdisc prio 1: root"
step prio_priomap 's/priomap: \[2, 1, 0\]/priomap: [0, 1, 2]/' "~ $P  (priomap" "!- $P" "!- v0: qdisc pfifo"
step prio_bands 's/bands: 3, priomap: \[2, 1, 0\]/bands: 5, priomap: [4, 1, 0]/' "~ $P  (bands 3 -> 5" "!- $P"
OUT=$(t qdisc show dev v0)
expect_contains "bands 5 priomap 4 1 0"
expect_contains "qdisc pfifo 10: parent 1:2 limit 100p"
step prio_child 's/parent: "1:2", handle: "10:", limit: 100/parent: "1:3", handle: "10:", limit: 100/' \
  "- v0: qdisc pfifo 10: parent 1:2" "+ v0: qdisc pfifo 10: parent 1:3" "!$P"
step drr_quantum 's/quantum: 3000/quantum: 4500/' "~ v1: class drr 2:1 parent 2:  (quantum 3000b -> 4500b)" "!- v1: class"
OUT=$(t class show dev v1)
expect_contains "class drr 2:1 root leaf 21: quantum 4500b"
step hfsc_default 's/default: "3:20"/default: "3:10"/' "~ v2: qdisc hfsc 3: root  (default 3:20 -> 3:10)" "!- v2:"
step hfsc_ls 's/ls: 1mbit, ul: 2mbit/ls: 1500kbit, ul: 2mbit/' "~ v2: class hfsc 3:20 parent 3:1  (ls 1mbit -> 1500kbit)" "!- v2:"
step hfsc_rt 's/rt: {m1: 2mbit, d: 10ms, m2: 1mbit}/rt: {m1: 3mbit, d: 5ms, m2: 1mbit}/' "~ v2: class hfsc 3:10 parent 3:1" "!- v2:"
# hfsc_change_class keeps a curve the request leaves out: removing ul re-creates.
step hfsc_drop_ul 's/ls: 1mbit, ul: 2mbit/ls: 1mbit/' "- v2: class hfsc 3:20 parent 3:1" "+ v2: class hfsc 3:20 parent 3:1"
OUT=$(t class show dev v2)
expect_contains "class hfsc 3:20 parent 3:1 ls m1 0bit d 0us m2 1Mbit"
step mq_child 's/parent: "4:1", handle: "41:", limit: 50/parent: "4:1", handle: "41:", limit: 60/' \
  "~ v4: qdisc pfifo 41: parent 4:1  (limit 50 -> 60)" "!- v4:"
step mqprio_map 's/map: \[0, 0, 0, 0, 1, 1, 1, 1\]/map: [1, 1, 1, 1, 0, 0, 0, 0]/' \
  "- v6: qdisc mqprio 5: root" "+ v6: qdisc mqprio 5: root" "+ v6: qdisc pfifo 51: parent 5:1" "cannot change in place"
OUT=$(t qdisc show dev v6)
expect_contains "tc 2 map 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0"
expect_contains "qdisc pfifo 51: parent 5:1 limit 7p"

# Bad input: a band the prio does not have, found before anything is sent.
base | sed 's/parent: "1:2", handle: "10:"/parent: "1:7", handle: "10:"/' >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "parent class 1:7 is not declared on v0 and is not one of the classes prio 1: makes itself"

# A root prio with handle ffff: (tc takes any free handle): its filters'
# and chain's parent "ffff:" is that prio, not the ingress hook; the dump
# of it loads and applies back to the same state.
t qdisc del dev v0 root 2>/dev/null || true
t qdisc add dev v0 root handle ffff: prio
t qdisc add dev v0 parent ffff:1 handle 10: pfifo limit 5
t filter add dev v0 parent ffff: protocol ip prio 1 u32 match ip dst 10.0.0.1/32 flowid ffff:2
snapshot >"$TMP/ffff.tc.json"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/ffff.yaml"
t qdisc del dev v0 root
expect_rc 0 ts apply "$TMP/ffff.yaml"
snapshot >"$TMP/ffff.after.json"
expect_same_file "$TMP/ffff.tc.json" "$TMP/ffff.after.json" "prio ffff: with its filter and child: dump -> apply gives tc's state" || true
expect_rc 0 ts diff "$TMP/ffff.yaml"
expect_contains "in sync"
t qdisc del dev v0 root
finish
