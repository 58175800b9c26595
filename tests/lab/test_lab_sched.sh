#!/bin/bash
# In the kernel lab: the qdiscs ets, cbs, etf, qfq (with classes), gred and
# taprio.
# 1. The positive cases of the kernel's own tc selftests (tdc, tc-tests/
#    qdiscs/KIND.json: their setup and cmdUnderTest lines), each on its own
#    dummy device, made with one `tc -b` -> tcsync dump -> flush -> tcsync
#    apply of the dump -> tc -j identical, diff in sync, second dump identical.
# 2. `tcsync import` of the same tc lines + apply gives the state `tc -b`
#    gives in a second namespace.
# 3. One attribute changed per kind -> the smallest plan the kernel allows.
# Prints "tdc cases round-tripped: N of M" at the end.
source "$(dirname "$0")/../kernel/lib.sh"

NDEV=14
ip netns add "$NS"
REF="${NS:0:36}-ref"
ip netns add "$REF"
ip -n "$NS" link set lo up
ip -n "$REF" link set lo up
# 8 transmit queues for taprio (dummy keeps noqueue as its root anyway); no
# IPv6 (its packets would queue); one ip process per namespace.
for i in $(seq 0 $((NDEV - 1))); do printf 'link add d%s numtxqueues 8 type dummy\nlink set d%s up\n' "$i" "$i"; done >"$TMP/links.batch"
for ns in "$NS" "$REF"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
  ip -n "$ns" -b "$TMP/links.batch"
done
DEVS=$(seq -f 'd%g' 0 $((NDEV - 1)))

# The state of a namespace's devices as tc -j reports it (no -s: no counters;
# tc 6.1 prints some classes as text even with -j, compared as text too), in
# one tc process (process starts dominate under TCG): each device's qdiscs
# (JSON naming the device) and then its classes.
for d in lo $(seq -f 'd%g' 0 $((NDEV - 1))); do printf 'qdisc show dev %s\nclass show dev %s\n' "$d" "$d"; done >"$TMP/snap.batch"
snap() { tc -n "${1:-$NS}" -j -b "$TMP/snap.batch"; }
flush() {
  local ns=${1:-$NS} d
  for d in $DEVS; do echo "qdisc del dev $d root"; done >"$TMP/flush.batch"
  tc -n "$ns" -f -b "$TMP/flush.batch" 2>/dev/null || true
}

CASES=0
ROUND_TRIPPED=0
# group NAME CASE...: CASE is "ID:tc lines" with the lines split by ';' and
# 'dev @' for the case's device (d0, d1, ... in order). The tc batch of all the
# cases -> round trip; then import of the lines that make state (class change
# lines of ets are the qdisc's quanta, which tcsync keeps there: skipped).
group() {
  local name=$1; shift
  local i=0 c lines
  : >"$TMP/$name.batch"
  for c in "$@"; do
    lines=${c#*:}
    tr ';' '\n' <<<"${lines//dev @/dev d$i}" | sed 's/^ *//' >>"$TMP/$name.batch"
    i=$((i + 1))
  done
  echo "# $name: ${*%%:*}"
  sed 's/^/    /' "$TMP/$name.batch"
  CASES=$((CASES + $#))
  local before=$FAILS
  expect_rc 0 tc -n "$NS" -b "$TMP/$name.batch"
  snap >"$TMP/$name.before"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/$name.yaml"
  sed 's/^/    /' "$TMP/$name.yaml"
  flush
  snap >"$TMP/$name.flushed"
  if cmp -s "$TMP/$name.before" "$TMP/$name.flushed"; then fail "$name: flush changed nothing"; else pass "$name: flushed"; fi
  expect_rc 0 ts apply "$TMP/$name.yaml"
  snap >"$TMP/$name.after"
  expect_same_file "$TMP/$name.before" "$TMP/$name.after" "$name: tc -j state after dump+apply equals tc's" || true
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"
  expect_rc 0 ts dump
  if [ "$OUT" = "$(cat "$TMP/$name.yaml")" ]; then pass "$name: second dump identical"; else
    fail "$name: second dump identical"; diff <(echo "$OUT") "$TMP/$name.yaml" | sed 's/^/    /' || true; fi
  [ "$FAILS" = "$before" ] && ROUND_TRIPPED=$((ROUND_TRIPPED + $#))
  flush

  echo "# $name: import"
  grep -v '^class change .* ets' "$TMP/$name.batch" >"$TMP/$name.import" || true
  expect_rc 0 tc -n "$REF" -b "$TMP/$name.import"
  local rc=0
  "$TCSYNC" import "$TMP/$name.import" >"$TMP/$name.imported.yaml" 2>"$TMP/$name.import.err" || rc=$?
  [ "$rc" = 0 ] && pass "$name: import exits 0" || { fail "$name: import exits $rc"; sed 's/^/    /' "$TMP/$name.import.err"; }
  expect_rc 0 ts apply "$TMP/$name.imported.yaml"
  snap "$REF" >"$TMP/$name.ref"
  snap >"$TMP/$name.imported"
  expect_same_file "$TMP/$name.ref" "$TMP/$name.imported" "$name: import + apply gives the state tc -b gives" || true
  expect_rc 0 ts diff "$TMP/$name.imported.yaml"
  expect_contains "in sync"
  flush
  flush "$REF"
}

echo "# 1, 2. tdc cases: round trip and import"
group ets1 \
  "e90e:qdisc add dev @ handle 1: root ets bands 2" \
  "b059:qdisc add dev @ handle 1: root ets quanta 1000 900 800 700" \
  "e8e7:qdisc add dev @ handle 1: root ets strict 3" \
  "233c:qdisc add dev @ handle 1: root ets bands 4 quanta 1000 900 800 700" \
  "3d35:qdisc add dev @ handle 1: root ets bands 3 strict 3" \
  "7f3b:qdisc add dev @ handle 1: root ets strict 3 quanta 1500 750" \
  "4593:qdisc add dev @ handle 1: root ets strict 0 quanta 1500 750" \
  "8938:qdisc add dev @ handle 1: root ets bands 5 strict 3 quanta 1500 750" \
  "0782:qdisc add dev @ handle 1: root ets bands 2 quanta 1000" \
  "501b:qdisc add dev @ handle 1: root ets bands 3 strict 1" \
  "671a:qdisc add dev @ handle 1: root ets bands 3 strict 1 quanta 1000" \
  "2a23:qdisc add dev @ handle 1: root ets bands 16" \
  "837a:qdisc add dev @ handle 1: root ets quanta 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16" \
  "b9e9:qdisc add dev @ handle 1: root ets strict 8 quanta 1 2 3 4 5 6 7 8"
group ets2 \
  "c696:qdisc add dev @ handle 1: root ets bands 5 priomap 0 0 1 0 1 2 0 1 2 3 0 1 2 3 4 0" \
  "30c4:qdisc add dev @ handle 1: root ets quanta 1000 2000 3000 4000 5000 priomap 0 0 1 0 1 2 0 1 2 3 0 1 2 3 4 0" \
  "e8ac:qdisc add dev @ handle 1: root ets strict 5 priomap 0 0 1 0 1 2 0 1 2 3 0 1 2 3 4 0" \
  "5a7e:qdisc add dev @ handle 1: root ets strict 2 quanta 1000 2000 3000 priomap 0 0 1 0 1 2 0 1 2 3 0 1 2 3 4 0" \
  "cb8b:qdisc add dev @ handle 1: root ets quanta 4000 3000 2000" \
  "1b4e:qdisc add dev @ handle 1: root ets quanta 4000 3000 2000" \
  "f642:qdisc add dev @ handle 1: root ets quanta 4000 3000 2000" \
  "0a5f:qdisc add dev @ handle 1: root ets strict 3" \
  "bdb2:qdisc add dev @ handle 1: root ets bands 4 strict 1 quanta 1000 500 priomap 0 1 2 3" \
  "557c:qdisc add dev @ handle 1: root ets bands 4 priomap 0 0 0 0" \
  "a347:qdisc add dev @ handle 1: root ets bands 4" \
  "28c6:qdisc add dev @ handle 1: root ets quanta 1000 2000 3000; class change dev @ classid 1:1 ets quantum 1500" \
  "4714:qdisc add dev @ handle 1: root ets quanta 1000 2000 3000; class change dev @ classid 1:1 ets" \
  "9a7d:qdisc add dev @ handle 1: root ets strict 5; class change dev @ classid 1:2 ets"
group cbs_etf \
  "1820:qdisc add dev @ handle 1: root cbs" \
  "1532:qdisc add dev @ handle 1: root cbs hicredit 64" \
  "2078:qdisc add dev @ handle 1: root cbs locredit 10" \
  "9271:qdisc add dev @ handle 1: root cbs sendslope 888" \
  "0482:qdisc add dev @ handle 1: root cbs idleslope 666" \
  "e8f3:qdisc add dev @ handle 1: root cbs hicredit 10 locredit 75 sendslope 2 idleslope 666" \
  "23c9:qdisc add dev @ handle 1: root cbs idleslope 666; qdisc replace dev @ handle 1: root cbs sendslope 10" \
  "a07a:qdisc add dev @ handle 1: root cbs idleslope 666; qdisc change dev @ handle 1: root cbs idleslope 1" \
  "9472:qdisc add dev @ handle 1: root cbs" \
  "34ba:qdisc add dev @ handle 1: root etf clockid CLOCK_TAI" \
  "438f:qdisc add dev @ handle 1: root etf delta 100 clockid CLOCK_TAI" \
  "9041:qdisc add dev @ handle 1: root etf clockid CLOCK_TAI deadline_mode" \
  "9a0c:qdisc add dev @ handle 1: root etf clockid CLOCK_TAI skip_sock_check"
group qfq_gred \
  "0582:qdisc add dev @ handle 1: root qfq" \
  "c9a3:qdisc add dev @ handle 1: root qfq; class add dev @ parent 1: classid 1:1 qfq weight 100" \
  "8452:qdisc add dev @ handle 1: root qfq; class add dev @ parent 1: classid 1:1 qfq maxpkt 2000" \
  "d920:qdisc add dev @ handle 1: root qfq; class add dev @ parent 1: classid 1:1 qfq weight 100; class add dev @ parent 1: classid 1:2 qfq weight 200" \
  "5901:qdisc add dev @ handle 1: root qfq" \
  "8942:qdisc add dev @ handle 1: root gred setup vqs 10 default 1" \
  "5783:qdisc add dev @ handle 1: root gred setup vqs 10 default 1 grio" \
  "8a09:qdisc add dev @ handle 1: root gred setup vqs 10 default 1 limit 1000" \
  "48ca:qdisc add dev @ handle 1: root gred setup vqs 10 default 2 ecn" \
  "48cb:qdisc add dev @ handle 1: root gred setup vqs 10 default 2 harddrop" \
  "8309:qdisc add dev @ handle 1: root gred setup vqs 10 default 1" \
  "763a:qdisc add dev @ handle 1: root gred setup vqs 10 default 1; qdisc change dev @ handle 1: root gred limit 60KB min 15K max 25K burst 64 avpkt 1500 bandwidth 10Mbit DP 1 probability 0.1" \
  "vqs2:qdisc add dev @ handle 1: root gred setup vqs 4 default 2 grio ecn limit 50000; qdisc change dev @ handle 1: root gred limit 60KB min 15K max 25K avpkt 1500 vq 0 ecn; qdisc change dev @ handle 1: root gred limit 30KB min 5K max 25K avpkt 1000 vq 2 prio 3 ecn probability 0.5"
# taprio in txtime-assist mode (flags 0x1), as tdc; cycles of 300 us and more
# (a 100 ns cycle-time stalls the emulated guest).
group taprio \
  "ba39:qdisc add dev @ root handle 1: taprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000 sched-entry S 01 300000 flags 0x1 clockid CLOCK_TAI" \
  "9462:qdisc add dev @ root handle 1: taprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000 sched-entry S 01 300000 sched-entry S 03 300000 sched-entry S 04 400000 flags 0x1 clockid CLOCK_TAI" \
  "8d92:qdisc add dev @ root handle 1: taprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000 sched-entry S 01 300000 flags 0x1 txtime-delay 500000 clockid CLOCK_TAI" \
  "8471:qdisc add dev @ root handle 1: taprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000 sched-entry S 01 300000 flags 0x1 clockid CLOCK_TAI"

# tc -d prints what -j leaves out of gred's virtual queues (ewma, the
# probability, Scell_log): the same after dump -> flush -> apply.
echo "# gred: tc -d after dump -> apply equals tc's"
printf '%s\n' "qdisc add dev d0 handle 1: root gred setup vqs 4 default 1 grio" \
  "qdisc change dev d0 handle 1: root gred limit 60KB min 15K max 25K burst 64 avpkt 1500 bandwidth 10Mbit DP 1 probability 0.1 prio 2" \
  "qdisc change dev d0 handle 1: root gred limit 30KB min 5K max 20K avpkt 1000 DP 3" >"$TMP/gred_d.batch"
expect_rc 0 tc -n "$NS" -b "$TMP/gred_d.batch"
t -d qdisc show dev d0 >"$TMP/gred_d.before"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/gred_d.yaml"
flush
expect_rc 0 ts apply "$TMP/gred_d.yaml"
t -d qdisc show dev d0 >"$TMP/gred_d.after"
expect_same_file "$TMP/gred_d.before" "$TMP/gred_d.after" "gred: tc -d state after dump+apply equals tc's" || true
flush

echo "# 3. one attribute changed -> the smallest plan"
base() {
  cat <<'Y'
version: 1
devices:
  d0:
    qdiscs: [{kind: ets, handle: "1:", bands: 4, strict: 1, quanta: [1000, 2000, 3000]}]
  d1:
    qdiscs: [{kind: cbs, handle: "1:", idleslope: 666, sendslope: -999334}]
  d2:
    qdiscs: [{kind: etf, handle: "1:", clockid: TAI, delta: 100}]
  d3:
    qdiscs: [{kind: qfq, handle: "1:"}]
    classes:
      - {classid: "1:1", weight: 100}
      - {classid: "1:2", weight: 200, maxpkt: 2000}
  d4:
    qdiscs: [{kind: gred, handle: "1:", vqs: 10, default: 1}]
  d6:
    qdiscs:
      - {kind: gred, handle: "1:", vqs: 4, default: 1, vq: [{dp: 1, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500},
         {dp: 2, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500}]}
  d5:
    qdiscs:
      - {kind: taprio, handle: "1:", num_tc: 3, map: [2, 2, 1, 0], queues: ["1@0", "1@1", "1@2"], base_time: 1000000000,
         schedule: ["S 0x1 300000", "S 0x6 300000"], flags: 0x1, clockid: TAI}
Y
}
apply_base
step ets_quanta 's/quanta: \[1000, 2000, 3000\]/quanta: [1500, 2000, 3000]/' "~ d0: qdisc ets 1: root" "quanta 1000 2000 3000 -> 1500 2000 3000" "!- d0"
OUT=$(t class show dev d0); expect_contains "class ets 1:2 root quantum 1500"
step ets_bands 's/bands: 4, strict: 1, quanta: \[1000, 2000, 3000\]/bands: 2, strict: 1, quanta: [1000]/' "~ d0: qdisc ets 1: root" "!- d0"
OUT=$(t qdisc show dev d0); expect_contains "bands 2 strict 1 quanta 1000"
step cbs_idleslope 's/idleslope: 666, sendslope: -999334/idleslope: 1000, sendslope: -999000/' "~ d1: qdisc cbs 1: root" "!- d1"
OUT=$(t qdisc show dev d1); expect_contains "sendslope -999000 idleslope 1000"
step etf_delta 's/delta: 100/delta: 200/' "- d2: qdisc etf 1: root" "+ d2: qdisc etf 1: root" "cannot change in place"
OUT=$(t qdisc show dev d2); expect_contains "delta 200"
step qfq_weight 's/weight: 100}/weight: 300}/' "~ d3: class qfq 1:1" "!- d3" "=1"
OUT=$(t class show dev d3); expect_contains "class qfq 1:1 root weight 300"
step gred_default 's/default: 1}/default: 3, grio: true}/' "~ d4: qdisc gred 1: root" "!- d4"
OUT=$(t qdisc show dev d4); expect_contains "default 3"
# A virtual queue's min: one change message, that VQ's; a VQ added: one
# more; a VQ taken away: only a new qdisc drops it.
step gred_vq_min 's/{dp: 2, limit: 60kb, min: 15kb/{dp: 2, limit: 60kb, min: 20kb/' "~ d6: qdisc gred 1: root  (vq 2: " "min 15kb max 25kb" "=1"
OUT=$(t qdisc show dev d6); expect_contains "vq 2 prio 8 limit 60Kb min 20Kb max 25Kb"
step gred_vq_add 's/avpkt: 1500}\]}/avpkt: 1500}, {dp: 3, limit: 10kb, min: 2kb, max: 6kb, avpkt: 500}]}/' "~ d6: qdisc gred 1: root  (vq 3 new: " "=1"
OUT=$(t qdisc show dev d6); expect_contains "vq 3 prio 8 limit 10Kb min 2Kb max 6Kb"
step gred_vq_del 's/{dp: 1, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500},//' "- d6: qdisc gred 1: root" "+ d6: qdisc gred 1: root" "vq 2 new" "=3"
OUT=$(t qdisc show dev d6); expect_contains "vqs 4 default 1 limit"
step taprio_schedule 's/"S 0x6 300000"\]/"S 0x6 300000", "S 0x7 400000"]/' "~ d5: qdisc taprio 1: root" "!- d5"
OUT=$(t qdisc show dev d5); expect_contains "gatemask 0x7 interval 400000"
step taprio_map 's/map: \[2, 2, 1, 0\]/map: [0, 1, 2, 2]/' "- d5: qdisc taprio 1: root" "+ d5: qdisc taprio 1: root" "map 2 2 1 -> 0 1 2 2"

echo "tdc cases round-tripped: $ROUND_TRIPPED of $CASES"
finish
