#!/bin/bash
# In the kernel lab: the classless qdiscs fq_codel, netem, sfq, fq and cake.
# For each kind, several option sets made with tc (on their own and under an
# htb class) -> tcsync dump -> flush -> tcsync apply of the dump -> tc -j
# identical, diff empty, a second dump byte-identical. Then one attribute
# changed per kind -> the plan's step: a change in place (~), or delete + add
# where the kernel refuses (sfq has no change; fq_codel's flows is init-only).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
ip -n "$NS" link add v4 type veth peer name v5
ip -n "$NS" link set v4 up
ip -n "$NS" link set v5 up
DEVS="v0 v1 v2 v3 v4 v5"
# No IPv6: its neighbour discovery would queue packets on the links.
for d in $DEVS; do ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done

# fq_codel, sfq and cake list a class for each flow with queued packets (a
# backlog, like a counter, not state): left out of the comparison.
qsnapshot() {
  snapshot | python3 -c '
import json, re, sys
s = json.load(sys.stdin)
flow = re.compile(r"^class (fq_codel|sfq|cake) ([0-9a-f]+:[0-9a-f]+) ")
def text(c):  # tc prints these classes as text even with -j, or as JSON
    return c if isinstance(c, str) else "class %s %s " % (c.get("class"), c.get("handle"))
for dev in s.values():
    gone = [m.group(2) for c in dev["classes"] if (m := flow.match(text(c)))]
    dev["classes"] = [c for c in dev["classes"] if not flow.match(text(c))]
    for h in gone:
        dev["filters"].pop("parent " + h, None)
print(json.dumps(s, indent=1, sort_keys=True))'
}

# htb_child DEV KIND ARGS...: htb 1: -> class 1:10 -> KIND 10: ARGS.
htb_child() {
  local dev=$1; shift
  t qdisc add dev "$dev" root handle 1: htb default 10
  t class add dev "$dev" parent 1: classid 1:10 htb rate 10mbit
  t class add dev "$dev" parent 1: classid 1:20 htb rate 5mbit
  t qdisc add dev "$dev" parent 1:10 handle 10: "$@"
}

# roundtrip NAME: the state tc made -> dump -> flush -> apply -> the same.
roundtrip() {
  local name=$1
  echo "# round trip: $name"
  qsnapshot >"$TMP/$name.before"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/$name.yaml"
  sed 's/^/    /' "$TMP/$name.yaml"
  for d in $DEVS; do t qdisc del dev "$d" root 2>/dev/null || true; done
  qsnapshot >"$TMP/$name.flushed"
  if cmp -s "$TMP/$name.before" "$TMP/$name.flushed"; then fail "$name: flush changed nothing"; else pass "$name: flushed"; fi
  expect_rc 0 ts apply "$TMP/$name.yaml"
  qsnapshot >"$TMP/$name.after"
  expect_same_file "$TMP/$name.before" "$TMP/$name.after" "$name: tc -j state after dump+apply equals tc's" || true
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"
  expect_rc 0 ts dump
  if [ "$OUT" = "$(cat "$TMP/$name.yaml")" ]; then pass "$name: second dump identical"; else
    fail "$name: second dump identical"; diff <(echo "$OUT") "$TMP/$name.yaml" | sed 's/^/    /' || true; fi
  for d in $DEVS; do t qdisc del dev "$d" root 2>/dev/null || true; done
}

t qdisc add dev v0 root handle 1: fq_codel
t qdisc add dev v1 root handle 1: fq_codel limit 2000 flows 512 target 3ms interval 50ms quantum 1000 ecn ce_threshold 2ms memory_limit 16mb drop_batch 32
t qdisc add dev v2 root handle 1: fq_codel noecn
t qdisc add dev v3 root handle 1: fq_codel ce_threshold 1ms ce_threshold_selector 0x01/0x03
t qdisc add dev v4 root handle 1: fq_codel target 2999us interval 7ms
htb_child v5 fq_codel limit 500 target 3ms flows 256 noecn
roundtrip fq_codel

t qdisc add dev v0 root handle 1: netem
t qdisc add dev v1 root handle 1: netem delay 100ms 10ms 25%
t qdisc add dev v2 root handle 1: netem limit 500 loss random 1% 10% duplicate 2% 5% corrupt 0.5% 1% reorder 25% 50% gap 5 delay 10ms
t qdisc add dev v3 root handle 1: netem rate 1mbit 20 100 -10 delay 1ms
t qdisc add dev v4 root handle 1: netem rate 100gbit loss 0.1% ecn
htb_child v5 netem delay 20ms 5ms reorder 10%
roundtrip netem

t qdisc add dev v0 root handle 1: sfq
t qdisc add dev v1 root handle 1: sfq perturb 10 quantum 1500 limit 100 divisor 512 flows 64 depth 64 headdrop
t qdisc add dev v2 root handle 1: sfq limit 50 divisor 64
htb_child v5 sfq perturb 10
roundtrip sfq

t qdisc add dev v0 root handle 1: fq
# refill_delay: the kernel keeps jiffies, so a multiple of the tick (4 ms at HZ=250).
t qdisc add dev v1 root handle 1: fq limit 1000 flow_limit 50 quantum 3000 initial_quantum 15000 maxrate 10mbit buckets 256 orphan_mask 511 pacing refill_delay 60ms low_rate_threshold 100kbit ce_threshold 5ms timer_slack 20us horizon 5s horizon_drop
t qdisc add dev v2 root handle 1: fq nopacing horizon_cap
htb_child v5 fq buckets 64 flow_limit 10
roundtrip fq

t qdisc add dev v0 root handle 1: cake
t qdisc add dev v1 root handle 1: cake bandwidth 100mbit rtt 50ms diffserv4 dual-srchost nat wash ack-filter overhead 18 mpu 64 split-gso memlimit 4mb fwmark 0xff
t qdisc add dev v2 root handle 1: cake unlimited besteffort flowblind nonat nowash no-ack-filter no-split-gso
t qdisc add dev v3 root handle 1: cake bandwidth 1gbit datacentre diffserv8 triple-isolate ack-filter-aggressive ethernet ingress
t qdisc add dev v4 root handle 1: cake bandwidth 20mbit internet precedence srchost atm overhead 44
htb_child v5 cake docsis ptm dsthost autorate-ingress raw
roundtrip cake

# ---- one attribute changed -> the smallest step the kernel allows ----------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: fq_codel, handle: "1:", target: 5ms}]
  v1:
    qdiscs: [{kind: netem, handle: "1:", delay: 100ms, loss: 1%}]
  v2:
    qdiscs: [{kind: sfq, handle: "1:", perturb: 10}]
  v3:
    qdiscs: [{kind: fq, handle: "1:", limit: 1000, maxrate: 10mbit}]
  v4:
    qdiscs: [{kind: cake, handle: "1:", bandwidth: 100mbit, overhead: 18}]
  v5:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:10"}
      - {kind: fq_codel, handle: "10:", parent: "1:10", flows: 1024}
    classes:
      - {classid: "1:10", rate: 10mbit}
Y
}
base >"$TMP/base.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 0 ts diff "$TMP/base.yaml"

# step NAME SED-EXPR WANT...: the minimal-plan check of lib.sh.
show() { OUT=$(t -j qdisc show dev "$1"); }

step fq_codel_target 's/target: 5ms/target: 10ms/' "~ v0: qdisc fq_codel 1: root" "target 5ms -> 10ms" "!- v0"
show v0; expect_contains '"target":9999'
step fq_codel_ecn_off 's/target: 5ms}/target: 5ms, ecn: false}/' "~ v0: qdisc fq_codel 1: root" "!- v0"
show v0; if grep -qF '"ecn":true' <<<"$OUT"; then fail "ecn still on"; else pass "ecn off"; fi
step fq_codel_flows 's/flows: 1024/flows: 512/' "- v5: qdisc fq_codel 10:" "+ v5: qdisc fq_codel 10:" "flows 1024 -> 512" "!~ v5"
show v5; expect_contains '"flows":512'
step netem_delay 's/delay: 100ms/delay: 50ms/' "~ v1: qdisc netem 1: root" "!- v1"
show v1; expect_contains '"delay":0.05'
step netem_loss_dropped 's/, loss: 1%//' "~ v1: qdisc netem 1: root" "loss 1% -> 0%" "!- v1"
show v1; if grep -qF 'loss' <<<"$OUT"; then fail "netem loss still set"; else pass "netem loss reset"; fi
step sfq_perturb 's/perturb: 10/perturb: 20/' "- v2: qdisc sfq 1: root" "+ v2: qdisc sfq 1: root" "cannot change in place"
show v2; expect_contains '"perturb":20'
step fq_limit 's/limit: 1000,/limit: 2000,/' "~ v3: qdisc fq 1: root" "limit 1000 -> 2000" "!- v3"
show v3; expect_contains '"limit":2000'
step fq_maxrate_dropped 's/, maxrate: 10mbit//' "~ v3: qdisc fq 1: root" "!- v3"
show v3; if grep -qF 'maxrate' <<<"$OUT"; then fail "fq maxrate still set"; else pass "fq maxrate reset"; fi
step cake_bandwidth 's/bandwidth: 100mbit/bandwidth: 50mbit/' "~ v4: qdisc cake 1: root" "!- v4"
show v4; expect_contains '"bandwidth":6250000'
step cake_raw 's/, overhead: 18//' "~ v4: qdisc cake 1: root" "!- v4"
show v4; expect_contains '"raw":true'
finish
