#!/bin/bash
# `dump --format json`: state made with tc -> JSON dump (valid JSON, the YAML
# dump's keys and structure) -> flush -> `apply` of the JSON file -> tc -j
# identical to the original (counters aside), diff of the JSON empty.
source "$(dirname "$0")/lib.sh"
make_ns 4

t qdisc add dev v0 root handle 1: htb default 30
t class add dev v0 parent 1: classid 1:1 htb rate 1gbit
t class add dev v0 parent 1:1 classid 1:10 htb rate 300mbit ceil 900mbit prio 1
t class add dev v0 parent 1:1 classid 1:30 htb rate 1mbit
t qdisc add dev v0 parent 1:10 handle 10: pfifo limit 50
t filter add dev v0 parent 1: prio 5 protocol ip u32 match ip dst 10.0.0.0/8 match ip dport 22 0xffff flowid 1:10
t filter add dev v0 parent 1: prio 6 protocol all u32 match u32 0x0800ffff 0xffffffff at 12 flowid 1:30
t filter add dev v0 parent 1: prio 7 handle 2: protocol ip u32 divisor 16
t filter add dev v0 parent 1: prio 7 protocol ip u32 link 2: hashkey mask 0x0000000f at 16 match ip dst 172.16.0.0/16
t filter add dev v0 parent 1: prio 7 protocol ip u32 ht 2:5: match ip dst 172.16.0.5 flowid 1:10
t qdisc add dev v1 clsact
t filter add dev v1 ingress prio 1 protocol ip u32 match ip src 10.0.0.0/8 action mirred egress redirect dev v0
t filter add dev v1 egress prio 2 protocol all u32 match u32 0 0 classid 1:10 action mirred egress mirror dev v2
t qdisc add dev v2 root handle 5: tbf rate 200mbit burst 64kb limit 100kb

snapshot >"$TMP/before.json"
expect_rc 0 ts dump --format json
echo "$OUT" >"$TMP/dump.json"
echo "--- dump --format json:"; sed 's/^/    /' "$TMP/dump.json"
if python3 -m json.tool "$TMP/dump.json" >/dev/null; then pass "the dump is JSON"; else fail "the dump is JSON"; fi
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
if python3 - "$TMP/dump.json" "$TMP/dump.yaml" <<'P'
import json, sys, yaml
j, y = json.load(open(sys.argv[1])), yaml.safe_load(open(sys.argv[2]))
if j != y:
    print("    json: " + json.dumps(j, sort_keys=True)[:2000] + "\n    yaml: " + json.dumps(y, sort_keys=True)[:2000])
    sys.exit(1)
P
then pass "JSON and YAML dumps hold the same document"; else fail "JSON and YAML dumps hold the same document"; fi
grep -qF '"handle": "1:"' "$TMP/dump.json" && pass 'handles are strings ("1:")' || fail 'handles are strings ("1:")'

t qdisc del dev v0 root
t qdisc del dev v1 clsact
t qdisc del dev v2 root
snapshot >"$TMP/flushed.json"
if cmp -s "$TMP/before.json" "$TMP/flushed.json"; then fail "flush changed something"; else pass "flushed"; fi

expect_rc 0 ts apply "$TMP/dump.json"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after JSON dump + flush + apply equals the original"
expect_rc 0 ts diff "$TMP/dump.json"
expect_contains "in sync"
expect_rc 0 ts dump --format json
cmp -s <(echo "$OUT") "$TMP/dump.json" && pass "second JSON dump identical" || { fail "second JSON dump identical"; diff <(echo "$OUT") "$TMP/dump.json" | head -20; }
finish
