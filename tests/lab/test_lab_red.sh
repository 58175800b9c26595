#!/bin/bash
# In the kernel lab: the red qdisc. tc's words (avpkt, burst, bandwidth)
# become Wlog, Scell_log and a table the kernel never reports, so:
#   1. red made by tc -> tcsync dump (the kernel's form: ewma, scell_log)
#      -> flush -> apply -> `tc -d -j` identical, diff empty, dump identical;
#   2. tcsync applying tc's own words gives the state tc made from them;
#   3. one attribute changed -> a change in place, nothing deleted.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
ip -n "$NS" link add v4 type veth peer name v5
ip -n "$NS" link set v4 up
ip -n "$NS" link set v5 up
DEVS="v0 v1 v2 v3 v4 v5"
for d in $DEVS; do ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done

# tc -j without -d leaves ewma, probability and Scell_log out: add them.
rsnapshot() {
  snapshot
  for d in $DEVS; do echo "$d: $(t -d -j qdisc show dev "$d")"; done
}

flush() { for d in $DEVS; do t qdisc del dev "$d" root 2>/dev/null || true; done; }

# tc's words, one line per device; also written as a tcsync file below.
tc_words() {
  t qdisc add dev v0 root handle 1: red limit 400000 avpkt 1000
  t qdisc add dev v1 root handle 1: red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit ecn
  t qdisc add dev v2 root handle 1: red limit 1mb min 100kb max 300kb avpkt 1500 burst 100 probability 0.1 bandwidth 1gbit harddrop adaptive
  t qdisc add dev v3 root handle 1: red limit 60000 min 5000 max 15000 avpkt 100 bandwidth 100kbit nodrop ecn probability 0.5
  t qdisc add dev v4 root handle 1: red limit 60000 min 5000 max 15000 avpkt 1000 qevent early_drop block 10 qevent mark block 20 ecn
  # under an htb class, with a tbf in red's own class 1
  t qdisc add dev v5 root handle 1: htb default 10
  t class add dev v5 parent 1: classid 1:10 htb rate 10mbit
  t qdisc add dev v5 parent 1:10 handle 10: red limit 100000 avpkt 1000 probability 0.07 bandwidth 10mbit
  t qdisc add dev v5 parent 10:1 handle 20: tbf rate 1mbit burst 10kb limit 20kb
}
cat >"$TMP/words.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: red, handle: "1:", limit: 400000, avpkt: 1000}]
  v1:
    qdiscs: [{kind: red, handle: "1:", limit: 400000, min: 30000, max: 90000, avpkt: 1000, burst: 55, probability: 0.02, bandwidth: 10mbit, ecn: true}]
  v2:
    qdiscs: [{kind: red, handle: "1:", limit: 1mb, min: 100kb, max: 300kb, avpkt: 1500, burst: 100, probability: 0.1, bandwidth: 1gbit, harddrop: true, adaptive: true}]
  v3:
    qdiscs: [{kind: red, handle: "1:", limit: 60000, min: 5000, max: 15000, avpkt: 100, bandwidth: 100kbit, nodrop: true, ecn: true, probability: 0.5}]
  v4:
    qdiscs: [{kind: red, handle: "1:", limit: 60000, min: 5000, max: 15000, avpkt: 1000, early_drop_block: 10, mark_block: 20, ecn: true}]
  v5:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:10"}
      - {kind: red, handle: "10:", parent: "1:10", limit: 100000, avpkt: 1000, probability: 0.07, bandwidth: 10mbit}
      - {kind: tbf, handle: "20:", parent: "10:1", rate: 1mbit, burst: 10kb, limit: 20kb}
    classes:
      - {classid: "1:10", rate: 10mbit}
Y

# ---- 1. tc's state -> dump -> flush -> apply ----------------------------------
tc_words
rsnapshot >"$TMP/tc.state"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
sed 's/^/    /' "$TMP/dump.yaml"
expect_contains "ewma: 5"
expect_contains "scell_log: 15"
if grep -q "avpkt" "$TMP/dump.yaml"; then fail "dump printed an input-only field"; else pass "dump has no avpkt"; fi
flush
rsnapshot >"$TMP/flushed.state"
if cmp -s "$TMP/tc.state" "$TMP/flushed.state"; then fail "flush changed nothing"; else pass "flushed"; fi
expect_rc 0 ts apply "$TMP/dump.yaml"
rsnapshot >"$TMP/applied.state"
expect_same_file "$TMP/tc.state" "$TMP/applied.state" "tc -d -j after dump+apply equals tc's" || true
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
if [ "$OUT" = "$(cat "$TMP/dump.yaml")" ]; then pass "second dump identical"; else
  fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml" | sed 's/^/    /' || true; fi
# the file in tc's words is in sync with the state made from the kernel's form
expect_rc 0 ts diff "$TMP/words.yaml"
expect_contains "in sync"

# ---- 2. tcsync applies tc's words: the state tc made --------------------------
flush
expect_rc 0 ts apply "$TMP/words.yaml"
rsnapshot >"$TMP/words.state"
expect_same_file "$TMP/tc.state" "$TMP/words.state" "tcsync from tc's words equals tc's state" || true
expect_rc 0 ts diff "$TMP/words.yaml"
expect_contains "in sync"
flush

# ---- 3. one attribute changed -> a change in place -----------------------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: red, handle: "1:", limit: 400000, min: 30000, max: 90000, avpkt: 1000, ecn: true}]
  v1:
    qdiscs: [{kind: red, handle: "1:", limit: 60000, avpkt: 1000, probability: 0.05}]
Y
}
base >"$TMP/base.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 0 ts diff "$TMP/base.yaml"
show() { OUT=$(t -d -j qdisc show dev "$1"); }

step red_limit 's/limit: 400000/limit: 500000/' "~ v0: qdisc red 1: root" "limit 400000b -> 500000b" "!- v0" "!v1"
show v0; expect_contains '"limit":500000'
expect_contains '"ecn":true'
step red_probability 's/probability: 0.05/probability: 0.1/' "~ v1: qdisc red 1: root" "probability 0.05 -> 0.1" "!- v1" "!v0"
show v1; expect_contains '"probability":0.1'
step red_ecn_off 's/, ecn: true//' "~ v0: qdisc red 1: root" "ecn true -> false" "!- v0"
show v0; expect_contains '"ecn":false'
step red_burst 's/avpkt: 1000, probability/avpkt: 1000, burst: 200, probability/' "~ v1: qdisc red 1: root" "ewma 3 -> 13" "!- v1"
show v1; expect_contains '"ewma":13'
# avpkt 1000 -> 1200 keeps Wlog 5 and Scell_log 15 and changes only the
# table, which the kernel keeps unreported: no step
expect_rc 0 ts apply "$TMP/base.yaml"
base | sed 's/avpkt: 1000, ecn/avpkt: 1200, ecn/' >"$TMP/avpkt.yaml"
expect_rc 0 ts diff "$TMP/avpkt.yaml"
expect_contains "in sync"
# ---- 4. red's qevent blocks hold filters; a qdisc grafted at `parent 6:` ----
# The kernel reports a qevent block by index only (TCA_RED_EARLY_DROP_BLOCK,
# TCA_RED_MARK_BLOCK): the dump reads the block's filters too, or they would
# be lost with diff in sync. red_find answers any minor, so `parent 6:`
# (mininet's ecn/red links) grafts into red's one class and the kernel
# reports the child's parent as given: the dump writes it so and the loader
# takes it.
flush
t qdisc add dev v0 root handle 6: red limit 60000 min 5000 max 15000 avpkt 1000 qevent early_drop block 10 qevent mark block 20 ecn
t qdisc add dev v0 parent 6: handle 7: pfifo limit 10
t filter add block 10 prio 1 protocol all matchall action drop
t filter add block 20 prio 1 protocol ip u32 match ip dst 10.0.0.1/32 action pass
qstate() {
  rsnapshot
  for b in 10 20; do echo "block $b:"; t filter show block "$b" 2>&1; done
}
qstate >"$TMP/q.tc.state"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/q.dump.yaml"
expect_contains 'parent: "6:", handle: "7:"'
expect_contains "matchall"
expect_contains "0x0a000001"
flush
if t filter show block 10 2>/dev/null | grep -q matchall; then fail "block 10 outlived its red"; else pass "block 10 gone with its red"; fi
expect_rc 0 ts apply "$TMP/q.dump.yaml"
qstate >"$TMP/q.applied.state"
expect_same_file "$TMP/q.tc.state" "$TMP/q.applied.state" "qevent blocks' filters and the grafted pfifo come back" || true
expect_rc 0 ts diff "$TMP/q.dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
if [ "$OUT" = "$(cat "$TMP/q.dump.yaml")" ]; then pass "second dump identical"; else
  fail "second dump identical"; diff <(echo "$OUT") "$TMP/q.dump.yaml" | sed 's/^/    /' || true; fi
# A filter removed from the file goes from the live block; red re-created
# (a block field changed) takes its block with it, and the plan adds the
# block's filters again.
sed '/matchall/d' "$TMP/q.dump.yaml" >"$TMP/q.less.yaml"
expect_rc 0 ts apply "$TMP/q.less.yaml"
if t filter show block 10 | grep -q matchall; then fail "matchall left in block 10"; else pass "matchall deleted from block 10"; fi
sed 's/early_drop_block: 10/early_drop_block: 30/; s/^  10:/  30:/' "$TMP/q.dump.yaml" >"$TMP/q.moved.yaml"
expect_rc 0 ts apply "$TMP/q.moved.yaml"
expect_rc 0 ts diff "$TMP/q.moved.yaml"
expect_contains "in sync"
OUT=$(t filter show block 30); expect_contains "matchall"
OUT=$(t filter show block 20); expect_contains "match 0a000001/ffffffff"
flush
finish
