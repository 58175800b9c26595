#!/bin/bash
# In the kernel lab: codel, pie, fq_pie, choke, sfb, hhf, pfifo_head_drop,
# skbprio, multiq, plug and pfifo_fast.
# - Round trip of every positive tdc case of these kinds that leaves a
#   qdisc (tools/testing/selftests/tc-testing/tc-tests/qdiscs/KIND.json,
#   its setup and cmdUnderTest; pie and pfifo_head_drop have none, so tc's
#   man-page words), one device each: tc makes the state -> tcsync dump ->
#   flush -> tcsync apply of the dump -> tc -j identical, diff in sync, a
#   second dump identical. The cases of a group that passes all its checks
#   are counted ("tdc cases round-tripped: N of M").
# - One attribute changed per kind -> the plan's step: a change in place
#   (~), or delete + add where the kernel refuses (fq_pie's flows); plug's
#   options are never reported, so an edit of them plans nothing.
# - tcsync import of tc's lines + apply equals tc -b of them.
source "$(dirname "$0")/../kernel/lib.sh"

# links: veth pairs v0..v9 ("DUMMY" of tdc), and m0, m1 with 4 tx queues
# each (multiq needs a multi-queue device: tdc's netdevsim $ETH).
links() {
  local ns=$1 i
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  for i in 0 2 4 6 8; do
    ip -n "$ns" link add "v$i" type veth peer name "v$((i + 1))"
  done
  ip -n "$ns" link add m0 numtxqueues 4 numrxqueues 4 type veth peer name m1 numtxqueues 4 numrxqueues 4
  for d in $DEVS; do
    # No IPv6: its neighbour discovery would queue packets on the links.
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
    ip -n "$ns" link set "$d" up
  done
}
DEVS="v0 v1 v2 v3 v4 v5 v6 v7 v8 v9 m0 m1"
links "$NS"
REF="${NS:0:36}-ref"
links "$REF"

# One tc process for the flush and a few for the snapshot: under TCG a
# process start costs 0.1 s and more, and tc_snapshot.py (lib.sh's snapshot)
# asks for the filters of every class, which is 64 per skbprio.
flush() {
  local ns=${1:-$NS} d
  for d in $DEVS; do echo "qdisc del dev $d root"; done | tc -n "$ns" -force -b - >/dev/null 2>&1 || true
}

# The namespace's qdiscs and classes as `tc -j` prints them (no filters in
# this test), reference counts dropped, objects sorted (the kernel's
# order within a device is a hash order).
asnap() {
  local ns=${1:-$NS} d
  tc -n "$ns" -j qdisc show | sed 's/},{/}\n{/g; s/"refcnt":[0-9]*,//g' | sort
  for d in ${USED:-$DEVS}; do
    echo "classes $d:"
    tc -n "$ns" -j class show dev "$d" | sed 's/},{/}\n{/g' | sort
  done
}

# roundtrip NAME: the state tc made -> dump -> flush -> apply -> the same.
# Returns non-zero when a check failed.
roundtrip() {
  local name=$1 before=$FAILS
  echo "# round trip: $name"
  asnap >"$TMP/$name.before"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/$name.yaml"
  sed 's/^/    /' "$TMP/$name.yaml"
  flush
  asnap >"$TMP/$name.flushed"
  if cmp -s "$TMP/$name.before" "$TMP/$name.flushed"; then fail "$name: flush changed nothing"; else pass "$name: flushed"; fi
  expect_rc 0 ts apply "$TMP/$name.yaml"
  asnap >"$TMP/$name.after"
  expect_same_file "$TMP/$name.before" "$TMP/$name.after" "$name: tc -j state after dump+apply equals tc's" || true
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"
  expect_rc 0 ts dump
  if [ "$OUT" = "$(cat "$TMP/$name.yaml")" ]; then pass "$name: second dump identical"; else
    fail "$name: second dump identical"; diff <(echo "$OUT") "$TMP/$name.yaml" | sed 's/^/    /' || true; fi
  flush
  [ "$FAILS" = "$before" ]
}

# cases NAME CASE...: each CASE is "ID|SETUP|CMD" with tdc's $DUMMY / $ETH
# for the device: run on a device of its own (v0, v1, ... or m0, m1 for
# $ETH), then one round trip of them all. Counts into TDC_OK / TDC_ALL
# (IDs starting with "-" are not tdc cases: not counted).
TDC_OK=0; TDC_ALL=0
cases() {
  local name=$1 c id setup cmd n=0 m=0 dev tdc=0 line; shift
  USED=""
  : >"$TMP/$name.tc"
  for c in "$@"; do
    IFS='|' read -r id setup cmd <<<"$c"
    if [[ $setup$cmd == *'$ETH'* ]]; then dev=m$m; m=$((m + 1)); else dev=v$n; n=$((n + 1)); fi
    for line in "$setup" "$cmd"; do
      [ -n "$line" ] || continue
      line=${line//\$DUMMY/$dev}; line=${line//\$ETH/$dev}
      echo "$line"
    done >>"$TMP/$name.tc"
    USED="$USED $dev"
    [ "${id:0:1}" = "-" ] || tdc=$((tdc + 1))
  done
  # One tc process for the group (tc -b stops at the first refusal).
  expect_rc 0 tc -n "$NS" -b "$TMP/$name.tc"
  TDC_ALL=$((TDC_ALL + tdc))
  if roundtrip "$name"; then TDC_OK=$((TDC_OK + tdc)); fi
}

cases codel \
  "983a||qdisc add dev \$DUMMY handle 1: root codel" \
  "38aa||qdisc add dev \$DUMMY handle 1: root codel limit 1500" \
  "9178||qdisc add dev \$DUMMY handle 1: root codel target 100ms" \
  "78d1||qdisc add dev \$DUMMY handle 1: root codel interval 20ms" \
  "238a||qdisc add dev \$DUMMY handle 1: root codel ecn" \
  "939c||qdisc add dev \$DUMMY handle 1: root codel ce_threshold 20ms" \
  "289c|qdisc add dev \$DUMMY handle 1: root codel|qdisc replace dev \$DUMMY handle 1: root codel limit 5000" \
  "0648|qdisc add dev \$DUMMY handle 1: root codel|qdisc change dev \$DUMMY handle 1: root codel limit 100" \
  "-1||qdisc add dev \$DUMMY root handle 1: codel limit 300 target 3ms interval 7ms noecn ce_threshold 2999us"

cases pie \
  "-1||qdisc add dev \$DUMMY root handle 1: pie" \
  "-2||qdisc add dev \$DUMMY root handle 1: pie limit 100 target 20ms tupdate 32ms alpha 4 beta 30 ecn bytemode dq_rate_estimator" \
  "-3||qdisc add dev \$DUMMY root handle 1: pie target 9us tupdate 30ms" \
  "-4||qdisc add dev \$DUMMY root handle 1: pie noecn nobytemode no_dq_rate_estimator"

cases fq_pie \
  "83be||qdisc add dev \$DUMMY handle 1: root fq_pie flows 65536" \
  "-1||qdisc add dev \$DUMMY root handle 1: fq_pie" \
  "-2||qdisc add dev \$DUMMY root handle 1: fq_pie limit 100 flows 256 target 20ms tupdate 32ms alpha 4 beta 30 quantum 1000 memory_limit 16mb ecn_prob 20 ecn bytemode dq_rate_estimator" \
  "-3||qdisc add dev \$DUMMY root handle 1: fq_pie quantum 100 target 9us"

cases choke \
  "8937||qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000" \
  "48c0||qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 min 100" \
  "38c1||qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 max 900" \
  "234a||qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 ecn" \
  "4380||qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 burst 100" \
  "4398|qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000|qdisc replace dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 min 100" \
  "0301|qdisc add dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000|qdisc change dev \$DUMMY handle 1: root choke limit 1000 bandwidth 10000 min 100" \
  "-1||qdisc add dev \$DUMMY root handle 1: choke limit 500 bandwidth 10mbit min 50 max 150 avpkt 1500 burst 80 probability 0.1 ecn"

cases sfb1 \
  "3294||qdisc add dev \$DUMMY handle 1: root sfb" \
  "430a||qdisc add dev \$DUMMY handle 1: root sfb rehash 60" \
  "3410||qdisc add dev \$DUMMY handle 1: root sfb db 100" \
  "49a0||qdisc add dev \$DUMMY handle 1: root sfb limit 100" \
  "1241||qdisc add dev \$DUMMY handle 1: root sfb max 100" \
  "3249||qdisc add dev \$DUMMY handle 1: root sfb target 100"
cases sfb2 \
  "30a9||qdisc add dev \$DUMMY handle 1: root sfb increment 0.1" \
  "239a||qdisc add dev \$DUMMY handle 1: root sfb decrement 0.1" \
  "9301||qdisc add dev \$DUMMY handle 1: root sfb penalty_rate 4000" \
  "2a01||qdisc add dev \$DUMMY handle 1: root sfb penalty_burst 64" \
  "3209|qdisc add dev \$DUMMY handle 1: root sfb penalty_burst 64|qdisc change dev \$DUMMY handle 1: root sfb rehash 100" \
  "5447||qdisc add dev \$DUMMY handle 1: root sfb"

cases hhf \
  "4812||qdisc add dev \$DUMMY handle 1: root hhf" \
  "8a92||qdisc add dev \$DUMMY handle 1: root hhf limit 1500" \
  "3491||qdisc add dev \$DUMMY handle 1: root hhf quantum 9000" \
  "ba04||qdisc add dev \$DUMMY handle 1: root hhf reset_timeout 100ms" \
  "4238||qdisc add dev \$DUMMY handle 1: root hhf admit_bytes 100000" \
  "839f||qdisc add dev \$DUMMY handle 1: root hhf evict_timeout 0.5s" \
  "a044||qdisc add dev \$DUMMY handle 1: root hhf non_hh_weight 10" \
  "32f9|qdisc add dev \$DUMMY handle 1: root hhf|qdisc change dev \$DUMMY handle 1: root hhf limit 1500" \
  "385e||qdisc add dev \$DUMMY handle 1: root hhf" \
  "-1||qdisc add dev \$DUMMY root handle 1: hhf hh_limit 100 quantum 100"

cases small \
  "283e||qdisc add dev \$DUMMY handle 1: root skbprio" \
  "c086||qdisc add dev \$DUMMY handle 1: root skbprio limit 1" \
  "6733|qdisc add dev \$DUMMY handle 1: root skbprio|qdisc change dev \$DUMMY handle 1: root skbprio limit 32" \
  "2958||qdisc add dev \$DUMMY handle 1: root skbprio" \
  "-1||qdisc add dev \$DUMMY root handle 1: pfifo_head_drop" \
  "-2||qdisc add dev \$DUMMY root handle 1: pfifo_head_drop limit 100" \
  "20ba||qdisc add dev \$ETH root handle 1: multiq" \
  "4301||qdisc add dev \$ETH root handle 1: multiq" \
  "900c||qdisc add dev \$DUMMY handle 1: root pfifo_fast" \
  "7470||qdisc add dev \$DUMMY handle 1: root pfifo_fast" \
  "b974|qdisc add dev \$DUMMY handle 1: root pfifo_fast|qdisc replace dev \$DUMMY handle 2: root pfifo_fast"

cases plug \
  "3289||qdisc add dev \$DUMMY handle 1: root plug" \
  "0917||qdisc add dev \$DUMMY handle 1: root plug block" \
  "483b||qdisc add dev \$DUMMY handle 1: root plug release" \
  "4995||qdisc add dev \$DUMMY handle 1: root plug release_indefinite" \
  "389c||qdisc add dev \$DUMMY handle 1: root plug limit 100" \
  "439a|qdisc add dev \$DUMMY handle 1: root plug|qdisc replace dev \$DUMMY handle 1: root plug limit 1000" \
  "9831|qdisc add dev \$DUMMY handle 1: root plug|qdisc change dev \$DUMMY handle 1: root plug limit 1000"

USED=""
echo "tdc cases round-tripped: $TDC_OK of $TDC_ALL"
[ "$TDC_OK" = "$TDC_ALL" ] && pass "every tdc case round-trips" || fail "tdc cases round-tripped: $TDC_OK of $TDC_ALL"

# ---- one attribute changed -> the smallest step the kernel allows ----------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: codel, handle: "1:", limit: 1200}]
  v1:
    qdiscs: [{kind: pie, handle: "1:", target: 15ms}]
  v2:
    qdiscs: [{kind: fq_pie, handle: "1:", flows: 1024, limit: 10240}]
  v3:
    qdiscs: [{kind: choke, handle: "1:", limit: 1000, bandwidth: 10mbit, min: 83}]
  v4:
    qdiscs: [{kind: sfb, handle: "1:", rehash: 600000}]
  v5:
    qdiscs: [{kind: hhf, handle: "1:", limit: 1000}]
  v6:
    qdiscs: [{kind: pfifo_head_drop, handle: "1:", limit: 100}]
  v7:
    qdiscs: [{kind: skbprio, handle: "1:", limit: 64}]
  v8:
    qdiscs: [{kind: plug, handle: "1:", limit: 10000}]
  v9:
    qdiscs: [{kind: pfifo_fast, handle: "1:"}]
  m0:
    qdiscs: [{kind: multiq, handle: "1:"}]
Y
}
apply_base
show() { OUT=$(t -j qdisc show dev "$1"); }

step codel_limit 's/limit: 1200}/limit: 500}/' "~ v0: qdisc codel 1: root" "!- v0" "=1"
show v0; expect_contains '"limit":500'
step pie_target 's/target: 15ms/target: 20ms/' "~ v1: qdisc pie 1: root" "!- v1" "=1"
show v1; expect_contains '"target":20'
step fq_pie_limit 's/limit: 10240/limit: 2000/' "~ v2: qdisc fq_pie 1: root" "!- v2" "=1"
show v2; expect_contains '"limit":2000'
step fq_pie_flows 's/flows: 1024/flows: 512/' "- v2: qdisc fq_pie 1: root" "+ v2: qdisc fq_pie 1: root" "!~ v2"
show v2; expect_contains '"flows":512'
step choke_min 's/min: 83}/min: 100}/' "~ v3: qdisc choke 1: root" "!- v3" "=1"
show v3; expect_contains '"min":100'
step sfb_rehash 's/rehash: 600000/rehash: 60000/' "~ v4: qdisc sfb 1: root" "!- v4" "=1"
show v4; expect_contains '"rehash":60000000'
step hhf_limit 's/limit: 1000}]/limit: 1500}]/' "~ v5: qdisc hhf 1: root" "!- v5" "=1"
show v5; expect_contains '"limit":1500'
step head_drop_limit 's/limit: 100}/limit: 200}/' "~ v6: qdisc pfifo_head_drop 1: root" "!- v6" "=1"
show v6; expect_contains '"limit":200'
step skbprio_limit 's/limit: 64}/limit: 32}/' "~ v7: qdisc skbprio 1: root" "!- v7" "=1"
show v7; expect_contains '"limit":32'
# plug's options are input only (no dump): an edit of them plans nothing.
expect_rc 0 ts apply "$TMP/base.yaml"
base | sed 's/limit: 10000}/limit: 20000}/' >"$TMP/plug.yaml"
expect_rc 0 ts diff "$TMP/plug.yaml"
expect_contains "in sync"
flush

# ---- tcsync import of tc's lines = tc -b of them ---------------------------
import_batch() {
  local name=$1 rc=0; shift
  printf '%s\n' "$@" >"$TMP/$name.tc"
  echo "# import: $name"; sed 's/^/    /' "$TMP/$name.tc"
  expect_rc 0 tc -n "$REF" -b "$TMP/$name.tc"
  "$TCSYNC" import "$TMP/$name.tc" >"$TMP/$name.import.yaml" 2>"$TMP/$name.import.err" || rc=$?
  [ "$rc" = 0 ] && pass "$name: import exits 0" || { fail "$name: import exits $rc"; sed 's/^/    /' "$TMP/$name.import.err"; }
  expect_rc 0 ts apply "$TMP/$name.import.yaml"
  asnap "$REF" >"$TMP/$name.ref.json"
  asnap >"$TMP/$name.imported.json"
  expect_same_file "$TMP/$name.ref.json" "$TMP/$name.imported.json" "$name: import + apply gives the state tc -b gives" || true
  expect_rc 0 ts diff "$TMP/$name.import.yaml"
  expect_contains "in sync"
  flush; flush "$REF"
}
import_batch aqm \
  "qdisc add dev v0 root handle 1: codel limit 1500 target 3ms interval 50ms noecn ce_threshold 2ms" \
  "qdisc add dev v1 root handle 1: pie limit 100 target 20ms tupdate 32ms alpha 4 beta 30 ecn nobytemode dq_rate_estimator" \
  "qdisc add dev v2 root handle 1: fq_pie limit 100 flows 256 target 20ms quantum 1000 memory_limit 16mb ecn_prob 20 noecn bytemode no_dq_rate_estimator" \
  "qdisc add dev v3 root handle 1: choke limit 500 bandwidth 10mbit min 50 max 150 avpkt 1500 burst 80 probability 0.1 ecn" \
  "qdisc add dev v4 root handle 1: sfb rehash 60 db 100 limit 100 max 100 target 80 increment 0.1 decrement 0.01 penalty_rate 4000 penalty_burst 64" \
  "qdisc add dev v5 root handle 1: hhf limit 1500 quantum 9000 hh_limit 100 reset_timeout 100ms admit_bytes 100000 evict_timeout 0.5s non_hh_weight 10" \
  "qdisc add dev v6 root handle 1: pfifo_head_drop limit 100" \
  "qdisc add dev v7 root handle 1: skbprio limit 32" \
  "qdisc add dev v8 root handle 1: plug limit 1000" \
  "qdisc add dev v9 root handle 1: pfifo_fast" \
  "qdisc add dev m0 root handle 1: multiq"
import_batch defaults \
  "qdisc add dev v0 root handle 1: codel" \
  "qdisc add dev v1 root handle 1: pie" \
  "qdisc add dev v2 root handle 1: fq_pie" \
  "qdisc add dev v3 root handle 1: choke limit 1000 bandwidth 10000" \
  "qdisc add dev v4 root handle 1: sfb" \
  "qdisc add dev v5 root handle 1: hhf" \
  "qdisc add dev v6 root handle 1: pfifo_head_drop" \
  "qdisc add dev v7 root handle 1: skbprio" \
  "qdisc add dev v8 root handle 1: plug release"
finish
