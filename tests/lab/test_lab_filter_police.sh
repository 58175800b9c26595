#!/bin/bash
# In the kernel lab (the host's kernel lacks act_police): a filter's own
# police, tc's `police ...` among a u32, fw or basic filter's words (the
# form from before actions, TCA_U32_POLICE and friends), is the filter's
# `police` field:
#   1. rules made with `tc -b` -> tcsync dump prints `police:` and no
#      raw_options -> flush -> apply -> the same tc -j state, diff in sync,
#      a second dump identical;
#   2. `tcsync import` of the same batch + apply == tc -b;
#   3. a changed rate is a diff (exit 2) in police's words, apply fixes it;
#   4. traffic: a police with a tiny rate drops part of a ping flood
#      through the veth pair (counters from tc -s -j).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

B=$TMP/police.tc
cat >"$B" <<'TC'
qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 1 u32 match ip dst 10.0.0.1 police rate 1mbit burst 10k mtu 1514 peakrate 2mbit conform-exceed drop/pipe flowid 1:1
filter add dev v0 ingress protocol ip prio 2 handle 1 fw classid 1:1 police rate 1mbit burst 10k drop
filter add dev v0 ingress protocol ip prio 3 handle 4 fw police pkts_rate 1000 pkts_burst 200 conform-exceed drop/ok
filter add dev v0 ingress protocol ip prio 4 basic match 'meta(nf_mark eq 5)' classid 1:1 police rate 40gbit burst 1m linklayer atm overhead 10 mpu 64 continue
filter add dev v0 egress protocol ip prio 5 u32 match ip protocol 1 0xff police mtu 1500 drop
TC

# The kernel frees a deleted rule's police after an RCU grace period; wait
# for it, so the rules made again get the same numbers (tc -j prints fw's
# and basic's police, index and all, as text).
police_gone() {
  local i
  for i in $(seq 50); do
    [ -z "$(tc -n "$1" actions list action police 2>/dev/null | grep -o 'index [0-9]*')" ] && return 0
    sleep 0.1
  done
  fail "the police actions of deleted rules are gone"
}

# ---- 1. tc -> dump -> flush -> apply ----------------------------------------------
after_flush() { police_gone "$NS"; }
roundtrip "$B" v0
after_flush
OUT=$(cat "$TMP/before.json")
expect_contains 'police'
OUT=$(cat "$TMP/dump.yaml")
if grep -q raw_options <<<"$OUT"; then fail "dump has no raw_options"; else pass "dump has no raw_options"; fi
expect_contains 'classid: "1:1", police: {rate: 1mbit, burst: 10kb, mtu: "1514b", peakrate: 2mbit, conform: pipe, exceed: drop}'
expect_contains 'fw: {}, classid: "1:1", police: {rate: 1mbit, burst: 10kb, mtu: "2040b", exceed: drop}'
expect_contains 'fw: {}, police: {mtu: "4294967295b", exceed: drop, pkts_rate: 1000, pkts_burst: 200}'
expect_contains 'basic: {match: "meta(nf_mark eq 5)"}, classid: "1:1", police: {rate: 40gbit, burst: "1045000b", mtu: "2040b", overhead: 10, mpu: "64b", exceed: continue, linklayer: atm}'
expect_contains 'police: {mtu: "1500b", exceed: drop}'

# ---- 2. import == tc -b -----------------------------------------------------------
import_check "$B" v0
police_gone "$NS"

# ---- 3. a changed rate is a diff, and apply fixes it -------------------------------
expect_rc 0 ts apply "$TMP/dump.yaml"
sed -e 's/classid: "1:1", police: {rate: 1mbit, burst: 10kb, mtu: "2040b"/classid: "1:1", police: {rate: 2mbit, burst: 10kb, mtu: "2040b"/' "$TMP/dump.yaml" >"$TMP/rate.yaml"
expect_rc 2 ts diff "$TMP/rate.yaml"
expect_contains "~ v0: filter fw ingress pref 2 protocol ip handle 0x1  (police rate 1mbit -> 2mbit)"
[ "$(grep -c '^[-+~]' <<<"$OUT")" = 1 ] && pass "one step" || fail "one step"
expect_rc 0 ts apply "$TMP/rate.yaml"
OUT=$(t filter show dev v0 ingress pref 2)
expect_contains "rate 2Mbit"
expect_rc 0 ts diff "$TMP/rate.yaml"
expect_contains "in sync"
del_clsact v0
police_gone "$NS"

# ---- 4. traffic: a tiny rate drops part of a ping flood -------------------------------
ip -n "$REF" link del v0  # make_ref_ns's pair: the ping's peer is $NS's v1
ip -n "$NS" link set v1 netns "$REF"
ip -n "$REF" link set v1 up
ip -n "$NS" addr add 10.79.0.1/24 dev v0
ip -n "$REF" addr add 10.79.0.2/24 dev v1
cat >"$TMP/traffic.yaml" <<'EOF'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{ip: {protocol: 1}}]}, police: {rate: 8kbit, burst: 2k, exceed: drop}}
EOF
expect_rc 0 ts apply "$TMP/traffic.yaml"
expect_rc 0 ts diff "$TMP/traffic.yaml"
# 100 echo requests in a burst: the replies come back in on v0, past the
# police: 2k of bucket and 1 kB/s let a few through.
ip netns exec "$NS" ping -q -c 100 -i 0.002 -W 1 10.79.0.2 >"$TMP/ping.txt" 2>&1 || true
sed 's/^/    /' "$TMP/ping.txt"
# The rule's police is an action of the namespace's table (bound to it):
# its counters as tc -s -j lists them.
tc -n "$NS" -s -j filter show dev v0 ingress | sed 's/^/    /'
tc -n "$NS" -s -j actions list action police >"$TMP/stats.json"
sed 's/^/    /' "$TMP/stats.json"
read -r sent dropped < <(python3 -c '
import json, sys
def walk(v):
    if isinstance(v, dict):
        if "drops" in v and "packets" in v:
            yield v
        for x in v.values():
            yield from walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk(x)
s = next(walk(json.load(open(sys.argv[1]))), {})
print(s.get("packets", 0), s.get("drops", 0))' "$TMP/stats.json")
echo "    police: $sent packets, $dropped dropped"
[ "$sent" -gt 0 ] && [ "$dropped" -gt 0 ] && [ "$dropped" -lt "$sent" ] &&
  pass "the police passed some replies and dropped others ($dropped of $sent)" || fail "the police passed some replies and dropped others ($dropped of $sent)"
finish
