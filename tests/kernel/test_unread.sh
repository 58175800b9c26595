#!/bin/bash
# Never silent: what the kernel holds and no kind table reads (a qdisc's
# size table, an action's hw_stats and skip_hw flags) is carried by dump as
# the kernel's bytes, compared by diff, and sent back by apply exactly.
# Made with tc (the reference); compared with `tc -d -j` (details show stab).
source "$(dirname "$0")/lib.sh"
make_ns 4

t qdisc add dev v0 root handle 1: stab linklayer ethernet overhead 34 htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit
# The kernel takes a ceil below the rate: tcsync warns, never refuses it.
t class add dev v0 parent 1: classid 1:20 htb rate 10mbit ceil 5mbit
t qdisc add dev v0 parent 1:10 handle 10: pfifo limit 100
t qdisc add dev v3 root handle 3: stab overhead 18 linklayer ethernet pfifo limit 100
# ATM: the kernel keeps a table it does not report; tcsync computes it again.
t qdisc add dev v2 root handle 2: stab linklayer atm overhead -4 mpu 64 tbf rate 1mbit burst 10k latency 50ms
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 1 protocol ip u32 match ip dst 10.0.0.1/32 \
  action mirred egress redirect dev v3 hw_stats immediate
t filter add dev v1 ingress pref 2 protocol ip u32 skip_hw match ip dst 10.0.0.2/32 \
  action mirred egress redirect dev v3 skip_hw
t actions add action mirred egress mirror dev v3 index 6 skip_hw

# used_hw_stats says which counters an offload attempt settled on: an
# observation of the kernel, not configuration.
details() { for d in v0 v1 v2 v3; do tc -n "$NS" -d -j qdisc show dev $d; tc -n "$NS" -d -j filter show dev $d ingress; done
            tc -n "$NS" -j actions show action mirred | python3 -c 'import json,sys; a=json.load(sys.stdin); [x.pop("stats",None) for t in a for x in t.get("actions",[])]; print(json.dumps(a))'; }
strip_stats() { python3 -c '
import json,sys
def clean(o):
    if isinstance(o, dict): return {k: clean(v) for k, v in o.items() if k not in ("stats","bytes","packets","drops","overlimits","requeues","backlog","qlen","lastused","last_used","first_used","firstused","installed","expires","used_hw_stats","direct_packets_stat")}
    if isinstance(o, list): return [clean(x) for x in o]
    return o
for line in sys.stdin:
    line=line.strip()
    if line: print(json.dumps(clean(json.loads(line)), sort_keys=True))'; }
details | strip_stats >"$TMP/before.txt"
grep -q '"overhead": 34' "$TMP/before.txt" && pass "tc reports the size table" || fail "tc -d -j shows no stab: $(head -c 300 "$TMP/before.txt")"

# A file that says nothing of them is not in sync: the difference is named.
cat >"$TMP/plain.yaml" <<'YAML'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:10"}
      - {kind: pfifo, parent: "1:10", handle: "10:", limit: 100}
    classes:
      - {classid: "1:10", rate: 10mbit}
YAML
expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "stab {linklayer: ethernet, overhead: 34} -> (none)"  # read since session 11: named as the file spells it

expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
grep -q 'raw_attrs' "$TMP/dump.yaml" && pass "dump carries raw_attrs" || fail "dump has no raw_attrs"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_rc 0 ts validate "$TMP/dump.yaml"
expect_contains "warning: ceil 5mbit is below rate 10mbit"
expect_rc 1 ts validate --strict "$TMP/dump.yaml"

# Flush, apply the dump: the kernel holds the same, details included.
for d in v0 v2 v3; do t qdisc del dev $d root; done
t qdisc del dev v1 clsact
flush_actions mirred
expect_rc 0 ts apply "$TMP/dump.yaml"
details | strip_stats >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -d -j after dump + apply equals what tc made"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump differs"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

# The plain file takes the size tables away again, and says so.
expect_rc 0 ts apply "$TMP/plain.yaml"
tc -n "$NS" -d qdisc show dev v0 | grep -c overhead >/dev/null && fail "stab still on v0 after the plain file" || pass "plain file removed the stab"

# Raw bytes that are not whole attributes are refused at their line.
sed 's/raw_attrs: "0c0007/raw_attrs: "0d0007/' "$TMP/dump.yaml" >"$TMP/bad.yaml"
expect_rc 1 ts validate "$TMP/bad.yaml"
expect_contains "is not a run of netlink attributes"
finish
