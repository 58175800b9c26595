#!/bin/bash
# A u32 bucket past 4,095 rules: the kernel gives every further rule the
# bucket's last id (::fff), so several rules share one handle. tcsync names
# filters by handle and cannot carry them apart; it must say so alike in
# dump, diff and import, never print a dump its own loader refuses nor call
# the state in sync.
source "$(dirname "$0")/lib.sh"
make_ns
python3 - >"$TMP/many.tc" <<'PY'
print("qdisc add dev v0 clsact")
for i in range(4098):
    print("filter add dev v0 ingress protocol ip prio 10 u32 match ip dst 10.%d.%d.%d/32 classid 1:1" % (i >> 16, (i >> 8) & 255, i & 255))
PY
expect_rc 0 tc -n "$NS" -b "$TMP/many.tc"
n=$(t filter show dev v0 ingress | grep -c "fh 800::fff " || true)
[ "$n" = 4 ] && pass "the kernel holds 4 rules named 800::fff (its own and 3 past 4,095)" || fail "the kernel holds 4 rules named 800::fff (got $n)"

expect_rc 1 ts dump
expect_contains "the kernel holds 4 filters named"
expect_contains "u32 gives every rule past 4,095 in one bucket the bucket's last id"

head -4000 "$TMP/many.tc" >"$TMP/fewer.tc"
"$TCSYNC" import "$TMP/fewer.tc" >"$TMP/fewer.yaml" 2>/dev/null
expect_rc 1 ts diff "$TMP/fewer.yaml"
expect_contains "the kernel holds 4 filters named"

OUT=$("$TCSYNC" import "$TMP/many.tc" 2>&1) && fail "import of 4,098 rules in one bucket fails" || pass "import of 4,098 rules in one bucket fails"
expect_contains "many.tc:4097:1: error: a 4,096th rule in one u32 bucket"
finish
