#!/bin/bash
# tcsync stats on real traffic: a known number of UDP datagrams through a
# veth shows up exactly in the counters of the rules and classes the file
# names (htb classes, u32 rules with mirred, on egress and ingress); the
# Prometheus output is accepted by a real parser (prometheus_client) and
# written atomically with --output; the dot output renders with graphviz
# and holds every declared class; a state made by tc alone is counted too,
# a root table's rule apart from a hash table 900:'s rule of one node id.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import prometheus_client' 2>/dev/null || { echo "SKIP: python3-prometheus-client missing"; exit 77; }
command -v dot >/dev/null || { echo "SKIP: graphviz missing (dot)"; exit 77; }

# NS holds v0 (and v2, the mirror target); v1 lives in a peer namespace,
# so that datagrams really cross the veth (between two addresses of one
# namespace they would take lo). No IPv6 and fixed neighbours: nothing but
# the test's own datagrams crosses v0.
make_ns 4
REF="${NS:0:36}-ref"  # deleted by lib.sh's cleanup
ip netns add "$REF"
ip -n "$NS" link set v1 netns "$REF"
for ns in "$NS" "$REF"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip -n "$REF" link set lo up
ip -n "$REF" link set v1 up
ip -n "$NS" addr add 10.77.0.1/24 dev v0
ip -n "$REF" addr add 10.77.0.2/24 dev v1
mac() { ip -n "$1" -j link show "$2" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }
ip -n "$NS" neigh replace 10.77.0.2 lladdr "$(mac "$REF" v1)" dev v0 nud permanent
ip -n "$REF" neigh replace 10.77.0.1 lladdr "$(mac "$NS" v0)" dev v1 nud permanent

cat >"$TMP/stats.yaml" <<'EOF'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
      - {kind: clsact}
    classes:
      - {classid: "1:1", rate: 1gbit}
      - {classid: "1:10", parent: "1:1", rate: 100mbit, ceil: 1gbit}
      - {classid: "1:30", parent: "1:1", rate: 100mbit, ceil: 1gbit}
    filters:
      - name: udp-5001
        parent: "1:"
        pref: 10
        protocol: ip
        u32: {match: [{ip: {protocol: 17, dport: 5001}}]}
        classid: "1:10"
        actions:
          - mirred: {direction: egress, action: mirror, dev: v2}
      - name: in-udp-5002
        parent: ingress
        pref: 10
        protocol: ip
        u32: {match: [{ip: {protocol: 17, dport: 5002}}]}
        actions:
          - mirred: {direction: egress, action: mirror, dev: v2}
EOF
expect_rc 0 ts apply "$TMP/stats.yaml"
# A class nobody declared: listed apart.
t class add dev v0 parent 1:1 classid 1:99 htb rate 1mbit

# send NS ADDR PORT N: N datagrams of 100 bytes, then a pause for the queue to drain.
send() {
  ip netns exec "$1" "$PY" -c 'import socket,sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[3])): s.sendto(b"x" * 100, (sys.argv[1], int(sys.argv[2])))' "$2" "$3" "$4"
  sleep 0.3
}
# counters FILE... : "KEY PACKETS" per object of `tcsync stats --format json`
# (KEY: a rule's name, a class's or qdisc's id; undeclared ones prefixed "?").
counters() {
  ts stats --format json "$@" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
for side, rows in (("", r["declared"]), ("?", r["undeclared"])):
    for o in rows:
        key = o.get("name") or o["id"]
        if o["object"] == "filter": pk = o.get("packets", "-")
        else: pk = o.get("counters", {}).get("packets", "-")
        print(side + key.replace(" ", "_"), pk)'
}
get() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
# moved KEY BEFORE AFTER WANT: the packet count of KEY moved by exactly WANT.
moved() {
  local b a
  b=$(get "$1" "$2") a=$(get "$1" "$3")
  # A count that is no number ("-": no counters read) fails, never an
  # arithmetic error that the `if` swallows.
  if [[ $b =~ ^[0-9]+$ && $a =~ ^[0-9]+$ ]] && [ "$((a - b))" = "$4" ]; then pass "$1 moved by $4 ($b -> $a)"
  else fail "$1 moved from '$b' to '$a' (want +$4)"; cat "$3" | sed 's/^/    /'; fi
}

echo "# egress: 37 datagrams to udp/5001 go through rule udp-5001 into class 1:10"
counters "$TMP/stats.yaml" >"$TMP/c0"
send "$NS" 10.77.0.2 5001 37
counters "$TMP/stats.yaml" >"$TMP/c1"
moved udp-5001 "$TMP/c0" "$TMP/c1" 37
moved 1:10 "$TMP/c0" "$TMP/c1" 37
moved 1:1 "$TMP/c0" "$TMP/c1" 37
moved 1: "$TMP/c0" "$TMP/c1" 37
moved 1:30 "$TMP/c0" "$TMP/c1" 0
moved in-udp-5002 "$TMP/c0" "$TMP/c1" 0
moved "?1:99" "$TMP/c0" "$TMP/c1" 0

echo "# ingress: 23 datagrams from the peer to udp/5002 hit rule in-udp-5002"
send "$REF" 10.77.0.1 5002 23
counters "$TMP/stats.yaml" >"$TMP/c2"
moved in-udp-5002 "$TMP/c1" "$TMP/c2" 23
moved udp-5001 "$TMP/c1" "$TMP/c2" 0

echo "# json: follows schemas/stats.schema.json"
SCHEMA=$(dirname "$0")/../../schemas/stats.schema.json
ts stats --format json "$TMP/stats.yaml" >"$TMP/stats.json"
OUT=$("$PY" -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
print("valid")' "$TMP/stats.json" "$SCHEMA" 2>&1) && pass "stats --format json follows stats.schema.json" || { fail "stats json schema"; echo "$OUT" | tail -5 | sed 's/^/    /'; }

echo "# text: the file's names and lines; the undeclared class apart"
expect_rc 0 ts stats "$TMP/stats.yaml"
expect_contains "filter u32 1: pref 10 protocol ip handle ::1 \"udp-5001\" -> 1:10  ($TMP/stats.yaml:12)"
expect_contains "class htb 1:10 parent 1:1  ($TMP/stats.yaml:9)"
expect_contains "not in the files:"
expect_contains "class htb 1:99 parent 1:1"

echo "# prometheus: a real parser reads it; the rule's counter is by its name"
check_prom() {
  "$PY" - "$1" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def one(fam, **labels):
    got = [s.value for s in fams[fam].samples if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(got) == 1, (fam, labels, got)
    return got[0]
# prometheus_client names a counter's family without _total.
assert fams["tcsync_filter_packets"].type == "counter"
assert one("tcsync_filter_packets", name="udp-5001", dev="v0", declared="true") == 37
assert one("tcsync_filter_packets", name="in-udp-5002", declared="true") == 23
assert one("tcsync_class_packets", classid="1:10") == 37
assert one("tcsync_class_packets", classid="1:99", declared="false") == 0
assert fams["tcsync_class_backlog_bytes"].type == "gauge"
assert fams["tcsync_qdisc_queue_packets"].type == "gauge"
assert one("tcsync_action_packets", name="udp-5001", action="1", action_kind="mirred") == 37
assert one("tcsync_declared_missing") == 0
print("parsed", len(fams), "families")
EOF
}
ts stats --format prometheus "$TMP/stats.yaml" >"$TMP/out.prom"
OUT=$(check_prom "$TMP/out.prom" 2>&1) && pass "prometheus_client parses it: $OUT" || { fail "prometheus parse"; echo "$OUT" | sed 's/^/    /'; }
mkdir "$TMP/textfile"
expect_rc 0 ts stats --format prometheus --output "$TMP/textfile/tcsync.prom" "$TMP/stats.yaml"
OUT=$(check_prom "$TMP/textfile/tcsync.prom" 2>&1) && pass "--output file parses: $OUT" || { fail "--output parse"; echo "$OUT" | sed 's/^/    /'; }
left=$(ls -A "$TMP/textfile")
[ "$left" = tcsync.prom ] && pass "--output leaves only the .prom file" || fail "--output left: $left"
expect_rc 1 ts stats --format prometheus --output "$TMP/no/such/dir/x.prom" "$TMP/stats.yaml"
expect_contains "cannot write"

echo "# dot: renders with graphviz, every declared class and rule in the picture"
ts stats --format dot "$TMP/stats.yaml" >"$TMP/tree.dot"
if dot -Tsvg "$TMP/tree.dot" >"$TMP/tree.svg" 2>"$TMP/dot.err" && [ ! -s "$TMP/dot.err" ]; then pass "dot -Tsvg accepts it"
else fail "dot -Tsvg"; sed 's/^/    /' "$TMP/dot.err"; fi
for want in "htb 1:1" "htb 1:10" "htb 1:30" "htb 1:" "udp&#45;5001" "in&#45;udp&#45;5002"; do
  grep -qF ">$want<" "$TMP/tree.svg" && pass "svg has $want" || fail "svg lacks $want"
done

echo "# --dev: one device a time, and only without files"
expect_rc 0 ts stats --dev v2
expect_rc 0 ts stats --dev v0
expect_contains "class htb 1:99 parent 1:1"
expect_rc 1 ts stats --dev v0 "$TMP/stats.yaml"
expect_contains "--dev is for a run without files"

echo "# --watch draws a table with rates"
OUT=$(timeout 2.5 "$TCSYNC" --netns "$NS" stats --watch 1 "$TMP/stats.yaml" 2>&1 || true)
expect_contains "PKT/S"
expect_contains "udp-5001"
# Into a file (not a terminal): frames one after another under their time,
# no screen escapes.
timeout 2.5 "$TCSYNC" --netns "$NS" stats --watch 1 "$TMP/stats.yaml" >"$TMP/watch.out" 2>/dev/null || true
grep -q $'\x1b' "$TMP/watch.out" && fail "stats --watch into a file: screen escapes in it" || pass "stats --watch into a file: no escapes"
frames=$(grep -c '^--- [0-9-]*T[0-9:.]*Z$' "$TMP/watch.out" || true)
[ "$frames" -ge 2 ] && pass "stats --watch into a file: $frames frames under their time" || fail "stats --watch into a file: $frames frames"

echo "# a state made by tc alone: stats without files names what the kernel holds"
t qdisc del dev v0 root
t qdisc del dev v0 clsact
t qdisc add dev v0 root handle 2: htb default 2
t class add dev v0 parent 2: classid 2:1 htb rate 10mbit
t class add dev v0 parent 2: classid 2:2 htb rate 10mbit
t filter add dev v0 parent 2: pref 3 protocol ip u32 match ip dport 6001 0xffff flowid 2:1 action mirred egress mirror dev v2
# and a shared block (clsact ingress_block 30) with a rule of its own
t qdisc add dev v0 ingress_block 30 clsact
t filter add block 30 protocol ip pref 4 u32 match ip dport 6002 0xffff action mirred egress mirror dev v2
counters >"$TMP/t0"
send "$NS" 10.77.0.2 6001 19
counters >"$TMP/t1"
send "$REF" 10.77.0.1 6002 11  # (the ICMP errors NS answers go out through 2:2: checked before)
counters >"$TMP/t2"
moved "?2:1" "$TMP/t0" "$TMP/t1" 19
moved "?2:2" "$TMP/t0" "$TMP/t1" 0
moved "?2:_pref_3_protocol_ip_handle_::800" "$TMP/t0" "$TMP/t1" 19
moved "?block_30_pref_4_protocol_ip_handle_::800" "$TMP/t1" "$TMP/t2" 11
moved "?2:_pref_3_protocol_ip_handle_::800" "$TMP/t1" "$TMP/t2" 0
expect_rc 0 ts stats --format prometheus
expect_contains 'tcsync_filter_packets_total{dev="v0",kind="u32",name="2: pref 3 protocol ip handle ::800",parent="2:"} 19'

echo "# a root table's rule and a rule of table 900: with one node id (801::5, 900::5): each its own counters"
t filter add dev v0 parent 2: pref 7 protocol ip handle 900: u32 divisor 1  # the list's root: 801: (pref 3 has 800:)
t filter add dev v0 parent 2: pref 7 protocol ip handle 900::5 u32 ht 900: match ip dport 6003 0xffff flowid 2:1 action mirred egress mirror dev v2
t filter add dev v0 parent 2: pref 7 protocol ip handle 801::5 u32 match ip dport 6004 0xffff flowid 2:1 action mirred egress mirror dev v2
t filter add dev v0 parent 2: pref 7 protocol ip handle 801::6 u32 link 900: match ip dport 6003 0xffff
counters >"$TMP/t3"
send "$NS" 10.77.0.2 6004 7
counters >"$TMP/t4"
send "$NS" 10.77.0.2 6003 13
counters >"$TMP/t5"
moved "?2:_pref_7_protocol_ip_handle_::5" "$TMP/t3" "$TMP/t4" 7
moved "?2:_pref_7_protocol_ip_handle_900::5" "$TMP/t3" "$TMP/t4" 0
moved "?2:_pref_7_protocol_ip_handle_900::5" "$TMP/t4" "$TMP/t5" 13
moved "?2:_pref_7_protocol_ip_handle_::5" "$TMP/t4" "$TMP/t5" 0

echo "# dot of a tree of 300 leaf classes stays legible: 12 drawn, the rest folded and counted"
{
  echo "class add dev v0 parent 2: classid 2:5 htb rate 1mbit"
  for i in $(seq 256 555); do printf 'class add dev v0 parent 2:5 classid 2:%x htb rate 100kbit\n' "$i"; done
} >"$TMP/leaves.tc"
t -b "$TMP/leaves.tc"
ts stats --format dot --dev v0 >"$TMP/big.dot"
grep -qF '288 more leaf classes' "$TMP/big.dot" && pass "288 of 300 leaves folded into one node" || fail "no fold node"
n=$(grep -c '\[label="htb 2:[0-9a-f]*\\n' "$TMP/big.dot" || true)
[ "$n" -le 20 ] && pass "$n class nodes drawn" || fail "$n class nodes drawn (want at most 20)"
if dot -Tsvg "$TMP/big.dot" >"$TMP/big.svg" 2>"$TMP/dot.err" && [ ! -s "$TMP/dot.err" ]; then pass "dot -Tsvg renders it"
else fail "dot -Tsvg of the big tree"; sed 's/^/    /' "$TMP/dot.err"; fi
finish
