#!/bin/bash
# examples/htb-shaping.yaml on the host kernel: apply, check with tc, idempotence,
# drift made with tc is named exactly by diff, and apply repairs it.
source "$(dirname "$0")/lib.sh"
make_ns
F=$EXAMPLES/htb-shaping.yaml

expect_rc 2 ts diff "$F"
expect_rc 0 ts apply "$F"

# tc is the reference for what landed (iproute2 6.1 prints htb classes as text even with -j).
OUT=$(t class show dev v0)
expect_contains "class htb 1:1 root rate 1Gbit ceil 1Gbit"
expect_contains "class htb 1:10 parent 1:1 prio 1 rate 300Mbit ceil 900Mbit"
expect_contains "class htb 1:20 parent 1:1 prio 2 rate 500Mbit ceil 1Gbit"
expect_contains "class htb 1:30 parent 1:1 leaf 30: prio 7 rate 100Mbit ceil 500Mbit"
OUT=$(t qdisc show dev v0)
expect_contains "qdisc htb 1: root"
expect_contains "default 0x30"
expect_contains "qdisc bfifo 30: parent 1:30 limit 64Kb"
OUT=$(t filter show dev v0 parent 1:)
expect_contains "flowid 1:10"
expect_contains "match 00000016/0000ffff at 20"
expect_contains "match 00060000/00ff0000 at 8"
expect_contains "match 000001bb/0000ffff at 20"

# Idempotence.
expect_rc 0 ts diff "$F"
expect_contains "in sync"
expect_rc 0 ts apply "$F"
expect_contains "in sync"

# Drift: one filter deleted, one class rate changed, a foreign filter added.
H=$(t filter show dev v0 parent 1: pref 20 | grep -o 'fh [0-9a-f]*::[0-9a-f]*' | head -1 | cut -d' ' -f2)
t filter del dev v0 parent 1: pref 20 protocol ip handle "$H" u32
t class change dev v0 parent 1:1 classid 1:10 htb rate 5mbit ceil 900mbit prio 1
t filter add dev v0 parent 1: pref 40 protocol ip u32 match ip dst 192.0.2.1/32 flowid 1:30
expect_rc 2 ts diff "$F"
DIFF=$OUT
[ "$(grep -c '^[-+~]' <<<"$DIFF")" = 3 ] && pass "exactly three steps" || { fail "exactly three steps"; echo "$DIFF"; }
expect_contains "- v0: filters u32 1: pref 40 protocol ip (all 1)  (not in the file)"
expect_contains "~ v0: class htb 1:10 parent 1:1  (rate 5mbit -> 300mbit"
expect_contains "+ v0: filter u32 1: pref 20 protocol ip handle ::1 (web)"

expect_rc 0 ts apply "$F"
expect_rc 0 ts diff "$F"
OUT=$(t filter show dev v0 parent 1:)
if grep -q "c0000201" <<<"$OUT"; then fail "foreign filter removed"; else pass "foreign filter removed"; fi
OUT=$(t class show dev v0 classid 1:10)
expect_contains "rate 300Mbit"

# Removing the file's devices' content: an empty device section deletes all.
printf 'version: 1\ndevices:\n  v0: {}\n' >"$TMP/empty.yaml"
expect_rc 0 ts apply "$TMP/empty.yaml"
OUT=$(t qdisc show dev v0)
if grep -q htb <<<"$OUT"; then fail "htb removed"; else pass "htb removed"; fi
finish
