#!/bin/bash
# In the kernel lab: a tc batch file with flower, matchall, gact and police
# run with `tc -b` in one namespace, and `tcsync import` + `tcsync apply` of
# the same file in another, give the same tc -j state; the next diff is empty.
# Then the same for tc-8 man-page lines whose words only tc spells so (the
# kind tables' tc_words): prio priomap, netem's positional jitter and
# correlations, fq_codel noecn, u32 ip6 icmp_type, cake diffserv4 twice,
# fw handle/mask, a qdisc under tbf's and netem's class 1:1.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
make_ref_ns 4

B=$TMP/site.tc
cat >"$B" <<'TC'
qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 1 handle 1 flower dst_ip 10.0.0.0/8 ip_proto tcp dst_port 80 action gact drop
filter add dev v0 ingress protocol ip prio 1 handle 2 flower src_mac 02:00:00:00:00:01 ip_proto udp dst_port 1000-2000 action gact pass
filter add dev v0 ingress protocol ipv6 prio 2 handle 1 flower src_ip 2001:db8::/32 action gact goto chain 5
filter add dev v0 ingress protocol all prio 3 handle 1 matchall action police rate 1mbit burst 10k conform-exceed drop/pipe
filter add dev v0 egress protocol ip prio 4 handle 1 flower ip_proto icmp action mirred egress redirect dev v1
TC
expect_rc 0 tc -n "$REF" -b "$B"
rc=0
"$TCSYNC" import "$B" >"$TMP/site.yaml" 2>"$TMP/import.err" || rc=$?
[ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
expect_rc 0 ts apply "$TMP/site.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref.json"
snapshot >"$TMP/tcsync.json"
grep -q '"kind": "flower"' "$TMP/ref.json" && grep -q '"kind": "police"' "$TMP/ref.json" &&
  pass "reference state has flower and police" || fail "reference state lacks flower or police"
expect_same_file "$TMP/ref.json" "$TMP/tcsync.json" "import + apply gives the state tc -b gives (flower, matchall, gact, police, mirred)"
expect_rc 0 ts diff "$TMP/site.yaml"

# ---- tc's own spellings ------------------------------------------------------------
# No IPv6 chatter: a queued packet would show as a cake flow class on one side only.
for n in "$NS" "$REF"; do
  tc -n "$n" qdisc del dev v0 clsact
  for d in v0 v1 v2 v3; do ip netns exec "$n" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done
done
W=$TMP/words.tc
cat >"$W" <<'TC'
qdisc add dev v0 root handle 1: prio priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
qdisc add dev v0 parent 1:1 handle 10: netem delay 10ms 2ms 25% loss 1% 25%
qdisc add dev v0 parent 1:2 handle 20: fq_codel noecn
qdisc add dev v0 parent 1:3 handle 30: tbf rate 1mbit burst 10k latency 50ms
qdisc add dev v0 parent 30:1 handle 31: pfifo limit 10
filter add dev v0 parent 1: protocol ipv6 prio 1 u32 match ip6 icmp_type 128 0xff match ip6 icmp_code 0 0xff flowid 1:1
filter add dev v0 parent 1: protocol ip prio 2 handle 1/0xff fw classid 1:2
qdisc add dev v1 root handle 1: cake bandwidth 10mbit diffserv4 diffserv4
qdisc add dev v2 root handle 2 netem duplicate 1% 25% corrupt 0.1% 10% delay 5ms reorder 25% 50%
qdisc add dev v2 parent 2:1 handle 21: bfifo limit 10000
qdisc add dev v3 ingress handle ffff:
TC
expect_rc 0 tc -n "$REF" -b "$W"
rc=0
"$TCSYNC" import "$W" >"$TMP/words.yaml" 2>"$TMP/words.err" || rc=$?
[ "$rc" = 0 ] && pass "import of tc's spellings exits 0" || { fail "import of tc's spellings exits $rc"; sed 's/^/    /' "$TMP/words.err"; }
expect_rc 0 ts apply "$TMP/words.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref2.json"
snapshot >"$TMP/tcsync2.json"
for k in prio netem fq_codel tbf cake fw; do
  # (tc -j prints fw as text: tc_snapshot keeps such lines as they are)
  grep -qE "\"kind\": \"$k\"| $k " "$TMP/ref2.json" && pass "reference state has $k" || fail "reference state lacks $k"
done
expect_same_file "$TMP/ref2.json" "$TMP/tcsync2.json" "import + apply gives the state tc -b gives (tc's spellings)"
expect_rc 0 ts diff "$TMP/words.yaml"
finish
