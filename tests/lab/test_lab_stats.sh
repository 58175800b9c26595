#!/bin/bash
# In the kernel lab (flower, gact, police and matchall are not in the host
# kernel): `tcsync stats` counts real traffic by the file's rule names.
#   - flower + gact: 40 datagrams to udp/7001 are 40 packets of that rule;
#   - flower + police: 60 back-to-back datagrams to udp/7002 through a
#     policer of 8kbit with a 2k burst: the rule sees all 60, conform
#     (packets - overlimits) and exceed (overlimits = drops) add up to 60,
#     and both happen;
#   - matchall + gact on egress: its own hit count (TCA_MATCHALL_PCNT)
#     moves by exactly the 30 datagrams sent out;
#   - the Prometheus text of all this parses (prometheus_client);
#   - a flower rule with two actions (police + gact) keeps both tcsync's
#     fingerprint (first action's cookie) and its name (second action's):
#     dump and stats without the file name it, the terse check proves it
#     unchanged, and a rename is read in full, diffed and applied.
source "$(dirname "$0")/../kernel/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
make_ns
REF="${NS:0:36}-ref"  # deleted by lib.sh's cleanup
ip netns add "$REF"
ip -n "$NS" link set v1 netns "$REF"
for ns in "$NS" "$REF"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip -n "$REF" link set lo up
ip -n "$REF" link set v1 up
ip -n "$NS" addr add 10.78.0.1/24 dev v0
ip -n "$REF" addr add 10.78.0.2/24 dev v1
mac() { ip -n "$1" -j link show "$2" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }
ip -n "$NS" neigh replace 10.78.0.2 lladdr "$(mac "$REF" v1)" dev v0 nud permanent
ip -n "$REF" neigh replace 10.78.0.1 lladdr "$(mac "$NS" v0)" dev v1 nud permanent

cat >"$TMP/lab-stats.yaml" <<'EOF'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {name: udp-7001, parent: ingress, pref: 10, protocol: ip, flower: {ip_proto: udp, dst_port: 7001}, actions: [{gact: {control: pass}}]}
      - {name: policed-7002, parent: ingress, pref: 20, protocol: ip, flower: {ip_proto: udp, dst_port: 7002}, actions: [{police: {rate: 8kbit, burst: 2k, exceed: drop}}]}
      - {name: all-out, parent: egress, pref: 10, protocol: all, matchall: {}, actions: [{gact: {control: pass}}]}
      - {name: pass-7003, parent: ingress, pref: 30, protocol: ip, flower: {ip_proto: udp, dst_port: 7003}, actions: [{police: {rate: 1gbit, burst: 64k, conform: pipe, exceed: drop}}, {gact: {control: pass}}]}
EOF
expect_rc 0 ts apply "$TMP/lab-stats.yaml"

send() {
  ip netns exec "$1" "$PY" -c 'import socket,sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[3])): s.sendto(b"x" * 100, (sys.argv[1], int(sys.argv[2])))' "$2" "$3" "$4"
  sleep 0.5
}
# snap NAME: rule -> "packets hits overlimits drops" (first action's), from --format json.
snap() {
  ts stats --format json "$TMP/lab-stats.yaml" | "$PY" -c '
import json, sys
for o in json.load(sys.stdin)["declared"]:
    if o["object"] != "filter": continue
    a = o["actions"][0]["counters"] if o.get("actions") else {}
    print(o["name"], o.get("packets", "-"), o.get("hits", "-"), a.get("overlimits", "-"), a.get("drops", "-"), a.get("packets", "-"))' >"$TMP/$1"
}
col() { awk -v k="$1" -v c="$2" '$1 == k {print $c}' "$TMP/$3"; }
delta() { echo $(($(col "$1" "$2" "$4") - $(col "$1" "$2" "$3"))); }
want() {  # want WHAT GOT EXPECTED
  [ "$2" = "$3" ] && pass "$1: $2" || { fail "$1: $2 (want $3)"; cat "$TMP/s1" "$TMP/s2" 2>/dev/null | sed 's/^/    /'; }
}

echo "# matchall + gact on egress: its own hit count"
snap s0
send "$NS" 10.78.0.2 7100 30
snap s1
want "all-out hits moved" "$(delta all-out 3 s0 s1)" 30
want "all-out packets (= hits) moved" "$(delta all-out 2 s0 s1)" 30
want "all-out's gact counted" "$(delta all-out 6 s0 s1)" 30

echo "# flower + gact: 40 datagrams to udp/7001"
send "$REF" 10.78.0.1 7001 40
snap s2
want "udp-7001 packets moved" "$(delta udp-7001 2 s1 s2)" 40
want "policed-7002 untouched" "$(delta policed-7002 2 s1 s2)" 0

echo "# flower + police: 60 datagrams to udp/7002, 8kbit with a 2k burst"
send "$REF" 10.78.0.1 7002 60
snap s3
seen=$(delta policed-7002 2 s2 s3) exceed=$(delta policed-7002 4 s2 s3) drops=$(delta policed-7002 5 s2 s3)
want "policed-7002 saw every datagram" "$seen" 60
want "exceeded ones were dropped (overlimits = drops)" "$exceed" "$drops"
conform=$((seen - exceed))
[ "$conform" -gt 0 ] && [ "$exceed" -gt 0 ] && pass "conform $conform + exceed $exceed = $seen" ||
  fail "conform $conform, exceed $exceed: want both above 0"
want "udp-7001 untouched" "$(delta udp-7001 2 s2 s3)" 0

echo "# prometheus: parsed, the policer's overlimits under the rule's name"
ts stats --format prometheus "$TMP/lab-stats.yaml" >"$TMP/lab.prom"
if "$PY" -c 'import prometheus_client' 2>/dev/null; then
  OUT=$("$PY" - "$TMP/lab.prom" "$exceed" <<'EOF' 2>&1
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def one(fam, **labels):
    got = [s.value for s in fams[fam].samples if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(got) == 1, (fam, labels, got)
    return got[0]
assert one("tcsync_filter_packets", name="udp-7001") >= 40
assert one("tcsync_action_overlimits", name="policed-7002", action_kind="police") == int(sys.argv[2])
assert one("tcsync_filter_packets", name="all-out", kind="matchall") >= 30
print("parsed", len(fams), "families")
EOF
  ) && pass "prometheus_client: $OUT" || { fail "prometheus parse"; echo "$OUT" | sed 's/^/    /'; }
else
  echo "# (python3-prometheus-client missing in the guest: parse skipped)"
fi

echo "# a two-action flower rule keeps its fingerprint and its name"
OUT=$(tc -n "$NS" -j filter show dev v0 ingress pref 30)
cookies=$("$PY" -c '
import json, sys
for f in json.load(sys.stdin):
    for a in f.get("options", {}).get("actions", []):
        print(a["order"], a.get("cookie", "-"))' <<<"$OUT")
echo "$cookies" | sed 's/^/    /'
grep -q "^1 74637302" <<<"$cookies" && pass "action 1: the fingerprint" || fail "action 1: the fingerprint"
name_hex=$(printf 'tcn\001pass-7003' | od -An -tx1 | tr -d ' \n')
grep -q "^2 $name_hex\$" <<<"$cookies" && pass "action 2: the name ($name_hex)" || fail "action 2: the name ($name_hex)"
expect_rc 0 ts dump
expect_contains "name: pass-7003"
if grep -q "name: all-out\|name: udp-7001" <<<"$OUT"; then fail "one-action fingerprinted rules keep no name"; else pass "one-action fingerprinted rules keep no name"; fi
expect_rc 0 ts stats
expect_contains '"pass-7003"'
expect_rc 0 ts -v diff "$TMP/lab-stats.yaml"
expect_contains "fingerprints: 3 filters in 1 blocks unchanged (terse dump), 0 blocks read in full"
sed 's/name: pass-7003/name: pass-seven/' "$TMP/lab-stats.yaml" >"$TMP/renamed.yaml"
expect_rc 2 ts -v diff "$TMP/renamed.yaml"
expect_contains 'name "pass-7003" -> "pass-seven"'
expect_contains "1 blocks read in full"
expect_rc 0 ts apply "$TMP/renamed.yaml"
expect_rc 0 ts -v diff "$TMP/renamed.yaml"
expect_contains "fingerprints: 3 filters in 1 blocks unchanged (terse dump), 0 blocks read in full"
expect_rc 0 ts stats
expect_contains '"pass-seven"'
finish
