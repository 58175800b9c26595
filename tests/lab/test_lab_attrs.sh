#!/bin/bash
# In the kernel lab: attributes of existing kinds that tcsync used to lose
# (some silently, inside bare structs), each set by tc with its own words:
#   - rate specs: tbf and htb class linklayer, overhead, mpu (and tbf/htb
#     mtu); police linklayer and the packet bucket (pkts_rate, pkts_burst);
#   - sfq's RED mode; fq's timer_slack in ns; netem's loss models and slots;
#   - tunnel_key's geneve, vxlan and erspan options.
# 1. one tc batch (qdiscs under htb classes, filters with these actions)
#    -> tcsync dump -> flush -> apply of the dump -> tc -j identical, diff
#    in sync, a second dump identical (one batch: the lab's tcsync runs are
#    slow under TCG);
# 2. `tcsync import` of the same batch + apply equals `tc -b` of it;
# 3. one attribute changed in place: netem's loss model, tbf's linklayer.
# The option sets are the tdc cases (tools/testing/selftests/tc-testing)
# that use these words, and a few more.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
make_ref_ns 4
DEVS="v0 v1 v2 v3"
# No IPv6: its neighbour discovery would queue packets (sfq flow classes).
for n in "$NS" "$REF"; do
  for d in $DEVS; do ip netns exec "$n" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
done

# sfq lists a class for each flow with queued packets (a backlog, not
# state): left out of the comparison.
qsnapshot() {
  snapshot "${1:-$NS}" | python3 -c '
import json, re, sys
s = json.load(sys.stdin)
flow = re.compile(r"^class sfq ([0-9a-f]+:[0-9a-f]+) ")
def text(c):
    return c if isinstance(c, str) else "class %s %s " % (c.get("class"), c.get("handle"))
for dev in s.values():
    dev["classes"] = [c for c in dev["classes"] if not flow.match(text(c))]
print(json.dumps(s, indent=1, sort_keys=True))'
}
flush() {
  local n=$1 d
  for d in $DEVS; do tc -n "$n" qdisc del dev "$d" root 2>/dev/null || true; done
  tc -n "$n" qdisc del dev v0 clsact 2>/dev/null || true
}

# ---- the batch: the tdc cases with these words, and a few more ----------------
B=$TMP/attrs.tc
# Child handles fall in distinct buckets of the kernel's qdisc hash
# (hash_32(handle, 4)), so the kernel lists them in the same order however
# they were added, and two dumps compare line by line.
cat >"$B" <<'TC'
qdisc add dev v0 root handle 1: htb
class add dev v0 parent 1: classid 1:1 htb rate 20Kbit mpu 64
class add dev v0 parent 1: classid 1:2 htb rate 20Kbit mtu 2048
class add dev v0 parent 1: classid 1:3 htb rate 1mbit ceil 2mbit linklayer atm overhead 10 mpu 64
class add dev v0 parent 1: classid 1:4 htb rate 1mbit
class add dev v0 parent 1: classid 1:5 htb rate 1mbit
class add dev v0 parent 1: classid 1:6 htb rate 1mbit
qdisc add dev v0 parent 1:1 handle 10: tbf limit 1000 burst 1500 rate 20000 overhead 300
qdisc add dev v0 parent 1:2 handle 12: tbf limit 1000 burst 1500 rate 20000 linklayer atm
qdisc add dev v0 parent 1:3 handle 15: tbf rate 1mbit burst 10k limit 20k peakrate 2mbit mtu 1540 linklayer adsl overhead 8 mpu 96
qdisc add dev v0 parent 1:4 handle 16: tbf limit 1000 burst 1500 rate 20000 mtu 1510 peakrate 30000
qdisc add dev v0 parent 1:5 handle 17: sfq redflowlimit 100000 min 8000 max 60000 probability 0.20 ecn headdrop
qdisc add dev v0 parent 1:6 handle 18: sfq limit 3000 redflowlimit 100000 avpkt 1000 burst 20 harddrop
qdisc add dev v1 root handle 1: htb
class add dev v1 parent 1: classid 1:1 htb rate 1mbit
class add dev v1 parent 1: classid 1:2 htb rate 1mbit
class add dev v1 parent 1: classid 1:3 htb rate 1mbit
class add dev v1 parent 1: classid 1:4 htb rate 1mbit
class add dev v1 parent 1: classid 1:5 htb rate 1mbit
qdisc add dev v1 parent 1:1 handle 10: sfq redflowlimit 200000
qdisc add dev v1 parent 1:2 handle 12: fq timer_slack 100
qdisc add dev v1 parent 1:3 handle 15: netem loss state 1
qdisc add dev v1 parent 1:4 handle 16: netem loss gemodel 1% 10% 70% 0.1% ecn
qdisc add dev v1 parent 1:5 handle 17: tbf limit 1000 burst 1500 rate 20000 mtu 2048
qdisc add dev v2 root handle 1: netem slot 10 200 packets 2000 bytes 9000 loss state 1% 10% 5% 80% 0.5%
qdisc add dev v3 root handle 1: netem loss gemodel 1% slot 1ms delay 10ms
TC
cat >"$TMP/acts.txt" <<'ACTS'
action police rate 2mbit burst 200k linklayer atm
action police rate 1mbit burst 100k overhead 64 mpu 64 linklayer atm peakrate 2mbit mtu 2k
action police pkts_rate 1000 pkts_burst 200
action police rate 90kbit burst 10k mtu 2kb peakrate 100kbit
action tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 dst_port 6081 geneve_opts 0102:80:00880022,0408:42:0040007611223344,0111:02:1020304011223344
action tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 dst_port 4789 vxlan_opts 0x4020c4
action tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 erspan_opts 1:123:0:0
action tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 erspan_opts 2:0:1:2
ACTS
acts_batch "$TMP/acts.txt" >>"$B"

# ---- 1. round trip ---------------------------------------------------------------
expect_rc 0 tc -n "$NS" -b "$B"
qsnapshot >"$TMP/before.json"
for w in '"linklayer": "atm"' '"overhead": 300' '"probability": 0.2' '"timer_slack"' \
         '"loss-gemodel"' '"loss-state"' '"slot"' '"pkts_rate": 1000' '"geneve_opts"' '"vxlan_opts"' '"erspan_opts"'; do
  grep -qF "$w" "$TMP/before.json" && pass "tc made $w" || fail "tc made no $w"
done
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
sed 's/^/    /' "$TMP/dump.yaml"
flush "$NS"
expect_rc 0 ts apply "$TMP/dump.yaml"
qsnapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after dump + flush + apply equals tc's" || true
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
if [ "$OUT" = "$(cat "$TMP/dump.yaml")" ]; then pass "second dump identical"; else
  fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml" | sed 's/^/    /' || true; fi
flush "$NS"

# ---- 2. import -------------------------------------------------------------------
expect_rc 0 tc -n "$REF" -b "$B"
rc=0
"$TCSYNC" import "$B" >"$TMP/import.yaml" 2>"$TMP/import.err" || rc=$?
[ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
expect_rc 0 ts apply "$TMP/import.yaml"
qsnapshot "$REF" >"$TMP/ref.json"
qsnapshot >"$TMP/imported.json"
expect_same_file "$TMP/ref.json" "$TMP/imported.json" "import + apply gives the state tc -b gives" || true
flush "$NS"
flush "$REF"

# ---- 3. in-place changes ---------------------------------------------------------
base() {
  cat <<'Y'
version: 1
devices:
  v1:
    qdiscs: [{kind: netem, handle: "1:", loss_state_p13: 1%}]
  v2:
    qdiscs: [{kind: tbf, handle: "1:", rate: 1mbit, burst: 10k, limit: 20k, overhead: 10}]
Y
}
base >"$TMP/base.yaml"
show() { OUT=$(t -j qdisc show dev "$1"); }
step netem_model 's/loss_state_p13: 1%/loss_gemodel_p: 2%, slot_min_delay: 1ms/' "~ v1: qdisc netem 1: root" "!- v1"
show v1; expect_contains '"loss-gemodel"'
expect_contains '"slot"'
step tbf_linklayer 's/overhead: 10}/overhead: 10, linklayer: atm}/' "~ v2: qdisc tbf 1: root" "!- v2"
show v2; expect_contains '"linklayer":"atm"'
finish
