#!/bin/bash
# Empty filter lists are state: a (pref, protocol) list the kernel holds with
# no rule in it (`tc filter add ... u32` with no options; the list a u32 rule
# leaves behind when it goes into another pref's table, as the kernel's tdc
# case 1fe6 does). The lists are made in pref order here: the kernel names
# u32 root tables 800:, 801:... in the order lists are made, and tcsync makes
# them in pref order (a file cannot name root tables). Dropped, apply would never make them and diff would say
# "in sync" without them. Here: dump carries them (`empty: u32`), apply makes
# them, diff sees them missing, a file that drops one deletes the list, and
# the loader refuses an empty list beside rules of its own.
source "$(dirname "$0")/lib.sh"
make_ns
cat >"$TMP/state.tc" <<'B'
qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 5 u32
filter add dev v0 ingress protocol ip prio 97 handle 43: u32 divisor 1
filter add dev v0 ingress protocol ip prio 98 u32 ht 43: match tcp src 22 FFFF classid 1:3
qdisc add dev v1 clsact
filter add dev v1 egress protocol all prio 7 u32
B
roundtrip "$TMP/state.tc" v0 v1  # leaves $TMP/dump.yaml, and flushes
expect_rc 0 ts apply "$TMP/dump.yaml"
OUT=$(cat "$TMP/dump.yaml")
expect_contains "{parent: ingress, pref: 5, protocol: ip, empty: u32}"
expect_contains "{parent: ingress, pref: 98, protocol: ip, empty: u32}"
expect_contains "{parent: egress, pref: 7, protocol: all, empty: u32}"

# Gone from the kernel: diff says so (never a silent match), apply makes it.
t filter del dev v0 ingress protocol ip prio 5
expect_rc 2 ts diff "$TMP/dump.yaml"
expect_contains "+ v0: filter u32 ingress pref 5 protocol ip (empty list)"
expect_rc 0 ts apply "$TMP/dump.yaml"
OUT=$(t filter show dev v0 ingress)
expect_contains "filter protocol ip pref 5 u32 chain 0"

# Dropped from the file: the list is deleted.
grep -v "pref: 5, protocol: ip, empty" "$TMP/dump.yaml" >"$TMP/less.yaml"
expect_rc 2 ts diff "$TMP/less.yaml"
expect_contains "- v0: filters u32 ingress pref 5 protocol ip (all 1)  (not in the file)"
expect_rc 0 ts apply "$TMP/less.yaml"
OUT=$(t filter show dev v0 ingress)
if grep -q "pref 5 " <<<"$OUT"; then fail "pref 5 deleted"; else pass "pref 5 deleted"; fi
expect_contains "pref 98 u32"

# The loader: an empty list holds nothing of its own, and never sits beside rules.
cat >"$TMP/bad.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 5, protocol: ip, empty: u32, classid: "1:1"}
      - {parent: ingress, pref: 6, protocol: ip, empty: u32}
      - {parent: ingress, pref: 6, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}]}}
Y
expect_rc 1 ts validate "$TMP/bad.yaml"
expect_contains "bad.yaml:6:62: error: an empty u32 list has no 'classid': it holds no rule"
expect_contains "bad.yaml:7:9: error: pref 6 is declared 'empty' but holds a rule (at $TMP/bad.yaml:8:9): leave 'empty' out"
finish
