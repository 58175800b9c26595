#!/bin/bash
# In the kernel lab: the action table with gact and police (struct
# tc_police keeps its reference counts elsewhere than tc_gen), bound from
# flower and matchall rules: tc-made state -> tcsync dump -> flush -> apply
# -> tc -j identical (ref/bind too); a police rate change is one replace of
# the table action.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns

actions() {
  for k in gact police; do tc -n "$NS" -j actions ls action $k; done | python3 -c '
import json, sys
out = []
for line in sys.stdin.read().replace("][", "]\n[").splitlines():
    for x in json.loads(line):
        for a in x.get("actions", []):
            a = {k: v for k, v in a.items() if k not in {"order", "installed", "last_used", "first_used", "stats", "not_in_hw", "used_hw_stats"}}
            out.append(json.dumps(a, sort_keys=True))
print("\n".join(sorted(out)))'
}

t qdisc add dev v0 clsact
t actions add action gact drop index 5
t actions add action police rate 1mbit burst 10k conform-exceed drop/pipe index 6
t actions add action gact pass index 9
t filter add dev v0 ingress pref 1 protocol ip flower dst_ip 10.0.0.0/8 action gact index 5
t filter add dev v0 ingress pref 2 protocol all matchall action police index 6 action gact index 5
snapshot >"$TMP/before.txt"
actions >"$TMP/before.act"
grep -q '"bind": 1,.*"index": 6,.*"ref": 2' "$TMP/before.act" && pass "tc: police 6 has ref 2, bind 1" || { fail "police counts"; cat "$TMP/before.act"; }

ts dump --dev v0 >"$TMP/dump.yaml"
sed 's/^/    /' "$TMP/dump.yaml"
n=$(grep -c 'ref: gact/5' "$TMP/dump.yaml" || true)
[ "$n" = 2 ] && pass "gact 5 by ref on both rules" || fail "ref: gact/5 on $n rules"
OUT=$(cat "$TMP/dump.yaml")
expect_contains "{ref: police/6}"
expect_contains "index: 9"

t qdisc del dev v0 clsact
flush_actions gact
flush_actions police
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
actions >"$TMP/after.act"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "filters equal after dump -> flush -> apply"
expect_same_file "$TMP/before.act" "$TMP/after.act" "gact and police tables equal (ref/bind too)"
expect_rc 0 ts diff "$TMP/dump.yaml"

sed 's/rate: 1mbit/rate: 2mbit/' "$TMP/dump.yaml" >"$TMP/rate.yaml"
expect_rc 2 ts diff "$TMP/rate.yaml"
[ "$(grep -c '^[-+~] ' <<<"$OUT")" = 1 ] && pass "one step" || fail "more than one step"
expect_contains "~ action police index 6"
expect_rc 0 ts apply "$TMP/rate.yaml"
expect_rc 0 ts diff "$TMP/rate.yaml"
OUT=$(t actions get action police index 6)
expect_contains "rate 2Mbit"
finish
