#!/bin/bash
# In the kernel lab (the host kernel has none of these modules): actions
# simple, gate, ife, ctinfo and bpf (classic bytecode), filters cgroup, flow
# and route, each with the option sets of the kernel's own tc selftests
# (tools/testing/selftests/tc-testing/tc-tests/{actions,filters}/KIND.json,
# every positive add/replace/change case; `index N` left out, a cookie put
# on a second action: the first carries tcsync's fingerprint).
#   1. made by tc (-b) -> tcsync dump -> flush -> tcsync apply of the dump ->
#      tc -j identical (counters aside), diff empty, a second dump identical;
#   2. `tcsync import` of the same tc batch + apply gives the state tc -b
#      gives in another namespace;
#   3. one change per kind is the plan the kernel allows (a replace in
#      place; flow dropping rshift: delete + add, the kernel keeps it);
#   4. traffic: a closed gate drops a ping, ife encode sends ED3E frames, a
#      cgroup filter matches the packets of a process in a net_cls cgroup.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

# ---- 1+2. actions ----------------------------------------------------------
# 4 simple, 6 gate (the replace's result; its cookie), 36 ife, 5 ctinfo and
# 3 of 4 bpf tdc cases (the fourth loads an eBPF object: not sent yet).
# ife's index 4294967295 is bound by two rules (the ingress one, made
# first, makes it): a private action's index
# is the kernel's bookkeeping (dumps leave it out), a shared one's is kept.
cat >"$TMP/acts.txt" <<'ACTS'
action simple sdata "A triumph"
action simple sdata "Not changed"
action simple sdata "2"
action simple sdata "1"
action gate priority 1 sched-entry close 100000000ns
action gate base-time 200000000000ns sched-entry close 100000000ns
action gate cycle-time 200000000000ns sched-entry close 100000000ns
action gate cycle-time-ext 20000000000ns sched-entry close 100000000ns
action gate priority 1 base-time 400000000000ns sched-entry close 100000000ns
action gact pipe action gate cycle-time-ext 400000000000ns sched-entry close 100000000ns cookie d0d0d0d0d0d0d0d0
action ife encode allow mark pass
action ife encode use mark 10 pipe
action ife encode allow mark continue
action ife encode use mark 789 drop
action ife encode use mark 656768 reclassify
action ife encode use mark 65 jump 1
action ife encode use mark 4294967295 reclassify
action ife encode allow prio pass
action ife encode use prio 7 pipe
action ife encode use prio 3 continue
action ife encode allow prio drop
action ife encode use prio 998877 reclassify
action ife encode use prio 998877 jump 10
action ife encode use prio 4294967295 reclassify
action ife encode allow tcindex pass
action ife encode use tcindex 111 pipe
action ife encode use tcindex 1 continue
action ife encode use tcindex 1 continue
action ife encode allow tcindex drop
action ife encode allow tcindex reclassify
action ife encode allow tcindex jump 999
action ife encode use tcindex 65535 pass
action ife encode allow mark src 00:11:22:33:44:55 pipe
action ife encode use prio 9876 dst 00:11:22:33:44:55 reclassify
action ife encode allow tcindex src 00:aa:bb:cc:dd:ee dst 00:11:22:33:44:55 pass
action ife encode use mark 7 type 0xfefe pass
action ife encode use prio 444 type 0xabba pipe
action ife encode use tcindex 5000 type 0xabcd reclassify
action ife index 4294967295
action ife encode allow mark pass index 4294967295
action ife decode pass
action ife decode pipe
action ife decode continue
action ife decode drop
action ife decode reclassify
action ife decode jump 10
action gact pipe action ife encode allow prio pipe cookie aabbccddeeff112233445566778800a1
action ctinfo
action ctinfo dscp 0xfc000000 0x01000000
action ctinfo cpmark 0x01000000 zone 1
action ctinfo drop
action ctinfo zone 200 pass
action bpf bytecode '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0'
action bpf bytecode '4,40 0 0 12,21 0 1 2054,6 0 0 262144,6 0 0 0' drop
action gact pipe action bpf bytecode '4,40 0 0 12,21 0 1 2054,6 0 0 262144,6 0 0 0' cookie d0d0d0d0d0d0d0d0
ACTS
acts_batch "$TMP/acts.txt" >"$TMP/acts.tc"
roundtrip "$TMP/acts.tc" v0
for k in simple gate ife ctinfo bpf; do
  grep -qi "$k" "$TMP/before.json" && pass "tc made $k actions" || fail "tc made no $k action"
  grep -q "{$k: {raw_options\|$k: {raw" "$TMP/dump.yaml" && fail "$k read as raw bytes" || pass "$k read by its table"
done
grep -qF "raw_" "$TMP/dump.yaml" && { fail "the dump has raw bytes"; grep -F raw_ "$TMP/dump.yaml" | head; } || pass "no raw bytes in the dump"
import_check "$TMP/acts.tc" v0

# ---- 1+2. filters ----------------------------------------------------------
# 36 cgroup, 26 flow (the change and replace as their results), 6 route: each
# at a pref of its own (the selftests reuse prio 1 with one filter at a time).
cat >"$TMP/filters.txt" <<'FILTERS'
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff gt 10)' action drop
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff trans gt 10)' action pass
handle 1 cgroup match 'cmp(u16 at 0 layer 0 mask 0xff00 lt 3)' action pipe
handle 1 cgroup match 'cmp(u32 at 4 layer link mask 0xff00ff00 eq 3)' action skbedit mark 7 pipe action gact drop
handle 0xab cgroup match 'cmp(u8 at 0 layer 1 mask 0xff gt 10)' action pass
handle 0xab cgroup match 'cmp(u8 at 0 layer 1 mask 0xff trans gt 10)' action drop
handle 0x100 cgroup match 'cmp(u16 at 0 layer network mask 0xff00 lt 3)' action pipe
handle 0x112233 cgroup match 'cmp(u32 at 4 layer network mask 0xff00ff00 eq 3)' action skbedit mark 7 pipe action gact drop
handle 1 cgroup match 'not cmp(u8 at 0 layer link mask 0xff eq 3)' action pass
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff eq 3) and cmp(u16 at 8 layer link mask 0x00ff gt 7)' action gact drop
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff eq 3) or cmp(u16 at 8 layer link mask 0x00ff gt 7)' action gact drop
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff eq 3) and cmp(u16 at 8 layer link mask 0x00ff gt 7) or cmp(u32 at 4 layer network mask 0xa0a0 lt 3)' action gact drop
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff eq 3) and cmp(u16 at 8 layer link mask 0x00ff gt 7) or not cmp(u32 at 4 layer network mask 0xa0a0 lt 3)' action gact drop
handle 1 cgroup match 'u32(u8 0x11 0x0f at 0)' action drop
handle 1 cgroup match 'u32(u8 0x77 0x1f at 12)' action drop
handle 1 cgroup match 'u32(u8 0xaa 0xf0 at -14)' action pass
handle 1 cgroup match 'u32(u8 0xaa 0xf0 at nexthdr+0)' action drop
handle 1 cgroup match 'u32(u16 0x1122 0xffff at 0)' action pipe
handle 1 cgroup match 'u32(u16 0x7788 0x1fff at 12)' action drop
handle 1 cgroup match 'u32(u16 0xaabb 0xffff at -12)' action drop
handle 1 cgroup match 'u32(u16 0xaabb 0xf0f0 at nexthdr+0)' action pass
handle 1 cgroup match 'u32(u32 0xaabbccdd 0xffffffff at 0)' action pipe
handle 1 cgroup match 'u32(u32 0x11227788 0x1ffff0f0 at 12)' action drop
handle 1 cgroup match 'u32(u32 0xaabbccdd 0xff00ff00 at -12)' action drop
handle 1 cgroup match 'u32(u32 0xaabbccdd 0xffffffff at nexthdr+0)' action pipe
handle 1 cgroup match 'canid(sff 1)' action pass
handle 1 cgroup match 'canid(sff 0xaabb:0x00ff)' action pass
handle 1 cgroup match 'canid(sff 1 sff 2 sff 3)' action pass
handle 1 cgroup match 'canid(sff 0xaa:0x01 sff 0xbb:0x02 sff 0xcc:0x03)' action drop
handle 1 cgroup match 'canid(eff 1)' action pipe
handle 1 cgroup match 'canid(eff 0xaabb:0xf1f1)' action pass
handle 1 cgroup match 'canid(eff 1 eff 2 eff 3)' action pass
handle 1 cgroup match 'canid(eff 0xaa:0x01 eff 0xbb:0x02 eff 0xcc:0x03)' action pass
handle 1 cgroup match 'canid(sff 0x01 eff 0x02)' action pass
handle 1 cgroup match 'canid(sff 0x01:0xf eff 0x02:0xf)' action drop
handle 1 cgroup match 'cmp(u8 at 0 layer link mask 0xff gt 8)' action pass
handle 1 flow map key dst and 0xff
handle 1 flow map key dst or 0xff
handle 1 flow map key dst xor 0xff
handle 1 flow map key dst rshift 0x1f
handle 1 flow map key dst addend 0xff
handle 1 flow map key src addend 0xff
handle 1 flow map key proto addend 0xff
handle 1 flow map key proto-src addend 0xff
handle 1 flow map key proto-dst addend 0xff
handle 1 flow map key iif addend 0xff
handle 1 flow map key priority addend 0xff
handle 1 flow map key mark addend 0xff
handle 1 flow map key nfct addend 0xff
handle 1 flow map key nfct-dst addend 0xff
handle 1 flow map key nfct-src addend 0xff
handle 1 flow map key nfct-proto-src addend 0xff
handle 1 flow map key nfct-proto-dst addend 0xff
handle 1 flow map key rt-classid addend 0xff
handle 1 flow map key sk-uid addend 0xff
handle 1 flow map key sk-gid addend 0xff
handle 1 flow map key vlan-tag addend 0xff
handle 1 flow map key rxhash addend 0xff
handle 1 flow hash keys src
handle 1 flow hash keys src divisor 1024 baseclass 1:1 match 'cmp(u8 at 0 layer link mask 0xff gt 10)' action drop
handle 1 flow map key rxhash addend 0x22
handle 1 flow map key rxhash addend 0x88
route from 1 to 10 classid 1:10
route to 10 classid 1:20 action reclassify
route from 10 classid 1:100 action continue
route from 10 to 2 classid 1:1 action pipe
route from 10 to 2 classid 1:1 action skbedit mark 7 pipe action gact drop
route fromif v0 to 10 classid 1:10
FILTERS
n=0
{
  echo "qdisc add dev v0 clsact"
  while IFS= read -r line; do
    n=$((n + 1))
    echo "filter add dev v0 ingress protocol ip pref $n $line"
  done <"$TMP/filters.txt"
} >"$TMP/filters.tc"
roundtrip "$TMP/filters.tc" v0
for k in cgroup flow route; do
  grep -q "$k: {" "$TMP/dump.yaml" && pass "$k read by its table" || fail "$k: no table in the dump"
done
grep -qF "raw_" "$TMP/dump.yaml" && { fail "the dump has raw bytes"; grep -F raw_ "$TMP/dump.yaml" | head; } || pass "no raw bytes in the dump"
# fromif's handle holds the ifindex: a file without the handle cannot say
# it (the dump does). tcsync's ematch grammar has no negative u32 offsets
# and no canid (their dumps are kept as ematch(KIND HEX)): import takes the
# other lines.
grep -v -e fromif -e 'at -' -e 'canid(' "$TMP/filters.tc" >"$TMP/filters-import.tc"
tc -n "$REF" qdisc del dev v0 clsact
import_check "$TMP/filters-import.tc" v0

# ---- 3. plans --------------------------------------------------------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{simple: {sdata: hello}}]}
      - {parent: ingress, pref: 2, protocol: ip, flower: {ip_proto: tcp}, actions: [{gate: {priority: 1, entries: ['open 100000000 2 8000', 'close 50000000']}}]}
      - {parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: tcp}, actions: [{ife: {mode: encode, mark: allow}}]}
      - {parent: ingress, pref: 4, protocol: ip, flower: {ip_proto: tcp}, actions: [{ctinfo: {zone: 3, cpmark: 0xff}}]}
      - {parent: ingress, pref: 5, protocol: ip, flower: {ip_proto: tcp}, actions: [{bpf: {bytecode: '1,6 0 0 0'}}]}
      - {parent: ingress, pref: 20, protocol: ip, handle: 1, cgroup: {match: 'meta(nf_mark eq 5)'}, actions: [{gact: {control: drop}}]}
      - {parent: ingress, pref: 21, protocol: ip, handle: 1, flow: {keys: [dst], rshift: 2, divisor: 16}}
      - {parent: ingress, pref: 22, protocol: ip, route: {from: 1, to: 10}, classid: '1:10'}
Y
}
apply_base
replace_step simple_sdata 1 's/sdata: hello/sdata: world/'
replace_step gate_priority 2 's/priority: 1, entries/priority: 2, entries/'
replace_step ife_mark 3 's/mark: allow/mark: 9/'
replace_step ctinfo_zone 4 's/zone: 3/zone: 4/'
replace_step bpf_bytecode 5 "s/'1,6 0 0 0'/'1,6 0 0 4294967295'/"
step cgroup_match 's/nf_mark eq 5/nf_mark eq 6/' "~ v0: filter cgroup ingress pref 20 protocol ip handle 0x1" "!- v0: filter cgroup" "=1"
step flow_divisor 's/divisor: 16/divisor: 32/' "~ v0: filter flow ingress pref 21 protocol ip handle 0x1" "!- v0: filter flow" "=1"
step flow_rshift_dropped 's/rshift: 2, //' "- v0: filter flow ingress pref 21 protocol ip handle 0x1" "+ v0: filter flow ingress pref 21 protocol ip handle 0x1"
# Linux 6.1's route4_change refuses any replace (EEXIST): delete + add.
step route_classid "s/classid: '1:10'/classid: '1:20'/" "- v0: filter route ingress pref 22 protocol ip handle 0x1000a" "+ v0: filter route ingress pref 22 protocol ip handle 0x1000a" "=2"
del_clsact v0

# ---- 4. traffic ------------------------------------------------------------
# A veth between $NS (t0, 10.9.0.1) and $REF (t1, 10.9.0.2); both
# namespaces go at cleanup, and the pair with them.
ip link add t0 netns "$NS" type veth peer name t1 netns "$REF"
ip -n "$NS" addr add 10.9.0.1/24 dev t0
ip -n "$REF" addr add 10.9.0.2/24 dev t1
ip -n "$NS" link set t0 up
ip -n "$REF" link set t1 up
pings() { ip netns exec "$NS" ping -c "${1:-2}" -i 0.2 -W 1 10.9.0.2 >/dev/null 2>&1; }
# Packets the actions of DEV's (t0's) DIR (egress) rules in NS ($NS)
# counted, from tc -s (text: some kinds print broken JSON in 6.1).
counted() {
  tc -n "${1:-$NS}" -s filter show dev "${2:-t0}" "${3:-egress}" |
    sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' | awk '{s += $1} END {print s + 0}'
}
traffic() {
  cat <<Y
version: 1
devices:
  t0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: egress, pref: 1, protocol: all, handle: 1, $1}
Y
}
pings 3 && pass "ping passes without a gate" || fail "no ping even without a gate"

traffic "matchall: {}, actions: [{gate: {entries: ['close 1000000000']}}]" >"$TMP/gate.yaml"
expect_rc 0 ts apply "$TMP/gate.yaml"
# The gate stays open (pending) until its first cycle starts, at the next
# multiple of the cycle time after base_time: within a second here.
sleep 1.5
pings 3 && fail "a closed gate let the ping through" || pass "a closed gate drops the ping"
c=$(counted); [ "${c:-0}" -gt 0 ] && pass "the gate saw $c packets" || fail "the gate saw no packet"

tc -n "$REF" qdisc add dev t1 clsact
tc -n "$REF" filter add dev t1 ingress pref 7 protocol 0xed3e matchall action gact drop
traffic "matchall: {}, actions: [{ife: {mode: encode, mark: 5}}]" >"$TMP/ife.yaml"
expect_rc 0 ts apply "$TMP/ife.yaml"
pings 2 || true
c=$(counted "$REF" t1 ingress); [ "${c:-0}" -gt 0 ] && pass "t1 got $c IFE (0xED3E) frames" || fail "t1 got no IFE frame"

# cls_cgroup reads the net_cls classid of the sending socket's cgroup (the
# v1 net_cls controller; cgroup v2 has none): 0 matches nothing.
traffic "cgroup: {}, actions: [{gact: {control: pass}}]" >"$TMP/cgroup.yaml"
expect_rc 0 ts apply "$TMP/cgroup.yaml"
expect_rc 0 ts diff "$TMP/cgroup.yaml"
pings 2 && pass "ping outside the cgroup" || fail "ping outside the cgroup"
c=$(counted); [ "${c:-0}" = 0 ] && pass "no match outside a net_cls cgroup" || fail "cgroup matched $c packets of a process outside it"
mkdir -p "$TMP/cg"
if mount -t cgroup -o net_cls net_cls "$TMP/cg" 2>"$TMP/mount.err"; then
  mkdir "$TMP/cg/tcs"
  echo 0x10001 >"$TMP/cg/tcs/net_cls.classid"
  (echo $BASHPID >"$TMP/cg/tcs/cgroup.procs" && pings 3) && pass "ping inside the cgroup" || fail "ping inside the cgroup"
  c=$(counted); [ "${c:-0}" -ge 3 ] && pass "cgroup matched the $c packets of the process in it" || fail "cgroup matched $c packets (want 3)"
  rmdir "$TMP/cg/tcs" 2>/dev/null || true
  umount "$TMP/cg"
else
  fail "cannot mount the net_cls controller: $(cat "$TMP/mount.err")"
fi
finish
