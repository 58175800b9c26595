#!/bin/bash
# tcsync import: a tc batch file imported and applied by tcsync makes the
# same kernel state (tc -j, tc_snapshot.py) as `tc -b` of that file, in two
# throwaway namespaces with the same links. Then: idempotence, and a bad
# line reported as FILE:LINE:COL with nothing on stdout.
source "$(dirname "$0")/lib.sh"
make_ns 4
make_ref_ns 4

B=$TMP/site.tc
cat >"$B" <<'EOF'
# An htb tree with u32 classifiers, a hashed table, clsact with mirred.
qdisc add dev v0 root handle 1: htb default 30 r2q 20
class add dev v0 parent 1: classid 1:1 htb rate 1Gbit
class add dev v0 parent 1:1 classid 1:10 htb rate 300mbit ceil 900mbit prio 1
class add dev v0 parent 1:1 classid 1:20 htb rate 200mbit ceil 1gbit prio 2 burst 32k cburst 64k
class add dev v0 parent 1:1 classid 1:30 htb rate 100mbit ceil 500mbit prio 7
qdisc add dev v0 parent 1:30 handle 30: bfifo limit 64kb
qdisc add dev v0 parent 1:20 handle 20: pfifo limit 500
filter add dev v0 parent 1: protocol ip prio 10 u32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 1:10
filter add dev v0 parent 1: protocol ip prio 10 u32 match ip dst 10.9.0.0/16 match ip sport 1024 0xfc00 classid 1:20
filter add dev v0 parent 1: protocol ipv6 prio 30 u32 match ip6 dst fd00::/8 flowid 1:20
filter add dev v0 parent 1: protocol ip u32 match u32 0x0a000000 0xff000000 at 16 classid 1:10
filter add dev v0 parent 1: protocol ip u32 match ip dst 192.168.0.0/16 classid 1:30
filter add dev v0 parent 1: prio 40 handle 2: protocol ip u32 divisor 256
filter add dev v0 parent 1: prio 40 protocol ip u32 ht 800:: match ip dst 10.1.0.0/16 hashkey mask 0x000000ff at 16 link 2:
filter add dev v0 parent 1: prio 40 protocol ip u32 ht 2: sample ip dst 10.1.0.10 match ip dst 10.1.0.10 flowid 1:10
filter add dev v0 parent 1: prio 40 protocol ip u32 ht 2:b: match ip dst 10.1.0.11 flowid 1:20
qdisc add dev v2 root handle 5: tbf rate 10mbit burst 10kb limit 30000
qdisc add dev v1 clsact
filter add dev v1 ingress protocol ip prio 10 u32 match ip src 10.0.0.0/8 action mirred egress redirect dev v0
filter add dev v1 ingress protocol arp prio 20 u32 match u32 0 0 at 0 action mirred egress mirror dev v0 pipe
filter add dev v1 egress protocol ip prio 5 handle ::7 u32 match ip tos 0x10 0xff action mirred egress mirror dev v2 action mirred egress redirect dev v3
# tc's words as tc reads them (tc_words in the kind tables): ICMPv6 in u32,
# a second classid (the last wins), a handle without its colon, tbf's
# bucket in the kernel's own ticks (latency 25001us) with a qdisc in its
# class 1:1, ingress with its handle after the kind, an action bound by
# index alone.
filter add dev v0 parent 1: protocol ipv6 prio 31 u32 match ip6 icmp_type 128 0xff match ip6 icmp_code 0 0xff flowid 1:10
filter add dev v0 parent 1: protocol ip prio 50 u32 match ip dst 10.5.0.0/16 classid 1:10 classid 1:20
qdisc add dev v3 root handle 7 tbf rate 3mbit burst 15k latency 25ms
qdisc add dev v3 parent 7:1 handle 70: pfifo limit 100
qdisc add dev v2 ingress handle ffff:
filter add dev v2 parent ffff: protocol ip prio 1 u32 match ip src 10.2.0.0/16 action mirred egress redirect dev v0 index 9
filter add dev v2 parent ffff: protocol ip prio 2 u32 match ip src 10.3.0.0/16 action mirred index 9
EOF

expect_rc 0 tc -n "$REF" -b "$B"
rc=0
"$TCSYNC" import "$B" >"$TMP/site.yaml" 2>"$TMP/import.err" || rc=$?
[ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
expect_rc 0 ts apply "$TMP/site.yaml"

# u32 root tables get ids (800:, 801:...) in the order prefs appear, which is
# the kernel's choice, not state: both sides name them by pref and protocol.
normalize() {
  python3 -c '
import json, re, sys
s = json.load(sys.stdin)
for st in s.values():
    for fl in st["filters"].values():
        if not isinstance(fl, list): continue
        names = {}
        for f in fl:
            o = f.get("options", {})
            m = re.fullmatch(r"(8[0-9a-f]{2}):", o.get("fh", ""))
            if m and "ht_divisor" in o: names[m.group(1)] = "root-%s-%s" % (f["pref"], f["protocol"])
        for f in fl:
            o = f.get("options", {})
            ht = o.get("fh", "").split(":")[0]
            if ht in names: o["fh"] = names[ht] + o["fh"][len(ht):]
            if o.get("key_ht") in names: o["key_ht"] = names[o["key_ht"]]
print(json.dumps(s, indent=1, sort_keys=True))'
}
python3 "$(dirname "$0")/tc_snapshot.py" "$REF" | normalize >"$TMP/ref.json"
snapshot | normalize >"$TMP/tcsync.json"
grep -q '"kind": "u32"' "$TMP/ref.json" && grep -q '"mirred_action": "redirect"' "$TMP/ref.json" &&
  pass "reference state has u32 rules and mirred" || fail "reference state is missing u32 rules or mirred"
expect_same_file "$TMP/ref.json" "$TMP/tcsync.json" "import + apply gives the state tc -b gives"
expect_rc 0 ts diff "$TMP/site.yaml"
expect_contains "in sync"

# A bad line: FILE:LINE:COL on stderr, no YAML on stdout, exit 1.
sed 's/match ip dst 10.9.0.0\/16/match ip dts 10.9.0.0\/16/' "$B" >"$TMP/bad.tc"
rc=0
"$TCSYNC" import "$TMP/bad.tc" >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
[ "$rc" = 1 ] && pass "bad file: exit 1" || fail "bad file: exit $rc"
[ ! -s "$TMP/bad.out" ] && pass "bad file: nothing on stdout" || fail "bad file: output on stdout"
OUT=$(cat "$TMP/bad.err")
expect_contains "$TMP/bad.tc:10:62: error: unknown 'ip' match 'dts'"
# ---- tc's other spellings, on the kinds this kernel has (issue 37) --------------
# Rates with a decimal point and capital unit prefixes (tc_util.c get_rate:
# strtod, units in any case), classic bpf's bytecode in shell quotes and from
# a file (bytecode-file: a line break a comma), and an action chain that goes
# on without `action` after an action's words (m_action.c parse_action).
for n in "$NS" "$REF"; do
  for d in v0 v1 v2 v3; do
    tc -n "$n" qdisc del dev "$d" root 2>/dev/null || true
    tc -n "$n" qdisc del dev "$d" clsact 2>/dev/null || true
    tc -n "$n" qdisc del dev "$d" ingress 2>/dev/null || true
  done
done
printf '4\n40 0 0 12\n21 0 1 2048\n6  0 0 262144\n6 0 0 0\n' >"$TMP/prog.bpf"
W=$TMP/words.tc
cat >"$W" <<EOF2
qdisc add dev v0 root handle 1: htb default 10
class add dev v0 parent 1: classid 1:1 htb rate 10000000.0kbit
class add dev v0 parent 1:1 classid 1:10 htb rate 250.0Kbit ceil 1.5Mbit burst 1.5kb
class add dev v0 parent 1:1 classid 1:20 htb rate 10KBps ceil 1GBit
class add dev v0 parent 1:1 classid 1:30 htb rate 0.5mbit ceil 2.25MBps cburst 2.5KB
qdisc add dev v1 clsact
filter add dev v1 ingress protocol all prio 1 bpf bytecode "4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0" action mirred egress mirror dev v2 pipe mirred egress redirect dev v3
filter add dev v1 ingress protocol all prio 2 bpf bytecode-file $TMP/prog.bpf action mirred egress mirror dev v2
filter add dev v1 egress protocol ip prio 3 u32 match ip dst 10.0.0.1/32 action mirred egress mirror dev v2 mirred egress redirect dev v3
EOF2
expect_rc 0 tc -n "$REF" -b "$W"
rc=0
"$TCSYNC" import "$W" >"$TMP/words.yaml" 2>"$TMP/words.err" || rc=$?
[ "$rc" = 0 ] && pass "import of tc's other spellings exits 0" || { fail "import of tc's other spellings exits $rc"; sed 's/^/    /' "$TMP/words.err"; }
expect_rc 0 ts apply "$TMP/words.yaml"
snapshot "$REF" >"$TMP/ref-words.json"
snapshot >"$TMP/words.json"
grep -q '"kind": "bpf"' "$TMP/ref-words.json" && grep -q 'rate 250Kbit ceil 1500Kbit' "$TMP/ref-words.json" &&
  pass "reference state has the bpf rules and the 250.0Kbit class" || fail "reference state lacks bpf or the 250.0Kbit class"
expect_same_file "$TMP/ref-words.json" "$TMP/words.json" "import + apply gives the state tc -b gives (decimal rates, quoted and file bytecode, chained actions)"
expect_rc 0 ts diff "$TMP/words.yaml"
expect_contains "in sync"
# ... and what dump prints applies back to it after a flush.
expect_rc 0 ts dump
echo "$OUT" >"$TMP/words-dump.yaml"
t qdisc del dev v0 root
t qdisc del dev v1 clsact
expect_rc 0 ts apply "$TMP/words-dump.yaml"
snapshot >"$TMP/words-again.json"
expect_same_file "$TMP/ref-words.json" "$TMP/words-again.json" "dump -> flush -> apply gives the same state"
expect_rc 0 ts diff "$TMP/words-dump.yaml"
expect_contains "in sync"
finish
