#!/bin/bash
# Size tables (tc-stab(8)): sqm-scripts' link-layer option puts one on every
# HTB. The kernel reports the spec, not the table; tcsync writes it as
# `stab: {...}` and sends the spec tc would (model/size_table.h), the table
# computed as tc computes it. Here: import == tc -b (tc -j), dump -> flush ->
# apply == tc's state, diff says in sync with it and names it when it
# differs, a changed overhead is applied; before, import refused `stab`.
source "$(dirname "$0")/lib.sh"
make_ns
make_ref_ns
cat >"$TMP/stab.tc" <<'B'
qdisc add dev v0 root handle 1: stab linklayer eth overhead 34 htb default 10
class add dev v0 parent 1: classid 1:10 htb rate 20mbit ceil 20mbit overhead 34 linklayer ethernet
qdisc add dev v1 root handle 1: stab overhead 44 mpu 96 linklayer adsl htb default 10
class add dev v1 parent 1: classid 1:10 htb rate 2mbit linklayer atm overhead 44
B
# tc -j shows a size table only with -d: compare those too.
detailed() { for d in v0 v1; do tc -n "$1" -d -j qdisc show dev $d; echo; done; }
expect_rc 0 tc -n "$REF" -b "$TMP/stab.tc"
"$TCSYNC" import "$TMP/stab.tc" >"$TMP/import.yaml" && pass "import exits 0" || fail "import of stab lines"
expect_rc 0 ts apply "$TMP/import.yaml"
detailed "$REF" >"$TMP/ref.d.json"
detailed "$NS" >"$TMP/imported.d.json"
expect_same_file "$TMP/ref.d.json" "$TMP/imported.d.json" "import + apply: tc -d -j qdisc show equals tc -b's (size tables included)"
grep -q '"stab":{"linklayer":"atm","overhead":44,"mpu":96,"mtu":2047,"tsize":512}' "$TMP/ref.d.json" && pass "tc -d reports the adsl size table" || fail "tc -d reports no size table: $(cat "$TMP/ref.d.json")"
for d in v0 v1; do t qdisc del dev $d root; done
OUT=$(cat "$TMP/import.yaml")
expect_contains 'stab: {linklayer: ethernet, overhead: 34}'
expect_contains 'stab: {overhead: 44, mpu: 96, linklayer: adsl}'

expect_rc 0 tc -n "$NS" -b "$TMP/stab.tc"
snapshot >"$TMP/before.json"
detailed "$NS" >"$TMP/before.d.json"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
expect_contains "stab: {linklayer: atm, overhead: 44, mpu: 96, mtu: 2047, tsize: 512}"
for d in v0 v1; do t qdisc del dev $d root; done
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after dump + flush + apply equals tc's"
detailed "$NS" >"$TMP/after.d.json"
expect_same_file "$TMP/before.d.json" "$TMP/after.d.json" "tc -d -j qdisc show after dump + flush + apply equals tc's"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"

# Without the size table the file is not the kernel (never a silent match).
sed 's/, stab: {linklayer: ethernet, overhead: 34}//' "$TMP/dump.yaml" >"$TMP/nostab.yaml"
expect_rc 2 ts diff "$TMP/nostab.yaml"
expect_contains "stab {linklayer: ethernet, overhead: 34} -> (none)"
sed 's/overhead: 34}/overhead: 38}/' "$TMP/dump.yaml" >"$TMP/changed.yaml"
expect_rc 2 ts diff "$TMP/changed.yaml"
expect_contains "stab {linklayer: ethernet, overhead: 34} -> {linklayer: ethernet, overhead: 38}"
expect_rc 0 ts apply "$TMP/changed.yaml"
OUT=$(t -d -j qdisc show dev v0)
expect_contains '"overhead":38'
finish
