#!/bin/bash
# In the kernel lab: tc's other spellings and what the kernel does with them.
#   - hfsc curves as umax/dmax/rate: tcsync's m1/d/m2 equal tc's (tc -j);
#   - prio multiqueue: sent as tc sends it, accepted, never reported;
#   - mqprio hw 1 on a veth: the kernel's bare EINVAL, with tcsync's note;
#   - a plan deleting an mq queue's qdisc warns at plan time (stderr).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
ip -n "$NS" link add q0 numtxqueues 4 type veth peer name q1
ip -n "$NS" link set q0 up
ip -n "$NS" link set q1 up
DEVS="v0 v1 q0"
for d in $DEVS q1; do ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
flush() { for d in $DEVS; do t qdisc del dev "$d" root 2>/dev/null || true; done; }

# ---- the same words through tc and through tcsync ------------------------------
t qdisc add dev v0 root handle 1: hfsc default 10
t class add dev v0 parent 1: classid 1:1 hfsc sc umax 1500 dmax 10ms rate 10mbit ul rate 50mbit
t class add dev v0 parent 1:1 classid 1:10 hfsc rt umax 1500 dmax 30ms rate 1mbit ls umax 3000 dmax 5ms rate 2mbit
t class add dev v0 parent 1:1 classid 1:20 hfsc rt umax 5000 dmax 10ms rate 5mbit ls rate 1mbit
t qdisc add dev v1 root handle 1: prio bands 3 multiqueue
snapshot >"$TMP/tc.state"
cat >"$TMP/words.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: hfsc, handle: "1:", default: "1:10"}]
    classes:
      - {classid: "1:1", sc: {umax: 1500, dmax: 10ms, rate: 10mbit}, ul: 50mbit}
      - {classid: "1:10", parent: "1:1", rt: {umax: 1500, dmax: 30ms, rate: 1mbit}, ls: {umax: 3000, dmax: 5ms, rate: 2mbit}}
      - {classid: "1:20", parent: "1:1", rt: {umax: 5000, dmax: 10ms, rate: 5mbit}, ls: 1mbit}
  v1:
    qdiscs: [{kind: prio, handle: "1:", bands: 3, multiqueue: true}]
Y
expect_rc 0 ts diff "$TMP/words.yaml"
expect_contains "in sync"
flush
expect_rc 0 ts apply "$TMP/words.yaml"
snapshot >"$TMP/words.state"
expect_same_file "$TMP/tc.state" "$TMP/words.state" "tcsync from tc's words equals tc's state" || true
expect_rc 0 ts diff "$TMP/words.yaml"
expect_contains "in sync"
# what dump prints (m1/d/m2, no multiqueue) applies back to the same state
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
expect_contains "m1: "
if grep -q multiqueue "$TMP/dump.yaml"; then fail "dump printed multiqueue"; else pass "dump has no multiqueue"; fi
flush
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/dump.state"
expect_same_file "$TMP/tc.state" "$TMP/dump.state" "dump applied back equals tc's state" || true
flush

# ---- mqprio hw 1 on a veth: the kernel refuses -----------------------------------
cat >"$TMP/mqprio.yaml" <<'Y'
version: 1
devices:
  q0:
    qdiscs: [{kind: mqprio, handle: "1:", num_tc: 2, map: [0, 1], queues: ["1@0", "1@1"]}]
Y
snapshot >"$TMP/before.state"
expect_rc 1 ts apply "$TMP/mqprio.yaml"
expect_contains "mqprio.yaml:4:14: error: kernel rejected add of q0 qdisc mqprio 1: root: (Invalid argument)"
expect_contains "mqprio.yaml:4:14: note: mqprio with hw 1 (the default, as in tc) needs a device that offloads mqprio; on veth, dummy and other software devices use hw: 0"
t qdisc add dev q0 root handle 1: mqprio num_tc 2 map 0 1 queues 1@0 1@1 hw 1 2>"$TMP/tc.err" && fail "tc's hw 1 passed" || pass "tc's hw 1 refused too"
snapshot >"$TMP/after.state"
expect_same_file "$TMP/before.state" "$TMP/after.state" "nothing changed" || true
sed -i 's/queues: \["1@0", "1@1"\]}/queues: ["1@0", "1@1"], hw: 0}/' "$TMP/mqprio.yaml"
expect_rc 0 ts apply "$TMP/mqprio.yaml"

# ---- deleting an mq queue's qdisc: a warning at plan time ----------------------------
flush
cat >"$TMP/mq.yaml" <<'Y'
version: 1
devices:
  q0:
    qdiscs:
      - {kind: mq, handle: "1:"}
      - {kind: pfifo, handle: "10:", parent: "1:1", limit: 100}
      - {kind: pfifo, handle: "20:", parent: "1:2", limit: 100}
Y
expect_rc 0 ts apply "$TMP/mq.yaml"
if grep -q warning <<<"$OUT"; then fail "adding warned"; else pass "adding does not warn"; fi
sed -i '/handle: "10:"/d' "$TMP/mq.yaml"
expect_rc 2 ts diff "$TMP/mq.yaml"
expect_contains "mq.yaml:5:9: warning: q0: deleting qdisc pfifo 10: parent 1:1 leaves transmit queue 1:1 of mq 1: without a qdisc"
expect_contains "- q0: qdisc pfifo 10: parent 1:1"
expect_rc 0 ts apply "$TMP/mq.yaml"
expect_contains "warning: q0: deleting qdisc pfifo 10: parent 1:1"
expect_rc 0 ts diff "$TMP/mq.yaml"
expect_contains "in sync"
# a queue whose qdisc changes kind is refilled: no warning
sed -i 's/kind: pfifo, handle: "20:", parent: "1:2", limit: 100/kind: bfifo, handle: "20:", parent: "1:2", limit: 10000/' "$TMP/mq.yaml"
expect_rc 0 ts apply "$TMP/mq.yaml"
if grep -q warning <<<"$OUT"; then fail "a refilled queue warned"; echo "$OUT" | sed 's/^/    /'; else pass "a refilled queue does not warn"; fi
finish
