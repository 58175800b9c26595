#!/bin/bash
# In the kernel lab: a tc batch file with flower, matchall, gact and police
# run with `tc -b` in one namespace, and `tcsync import` + `tcsync apply` of
# the same file in another, give the same tc -j state; the next diff is empty.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

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
finish
