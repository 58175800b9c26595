#!/bin/bash
# In the kernel lab: the basic classifier with ematch trees (the host's
# kernel has neither cls_basic nor the em_* modules). Filters made with tc
# (and, or, not, nesting; cmp, meta, u32, nbyte) -> tcsync dump
# -> flush -> apply -> tc's state identical, diff empty; one changed value in
# one expression is one replace of that filter.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
# tc 6.1 needs a word after the expression (classid, action...).
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit
t class add dev v0 parent 1: classid 1:20 htb rate 20mbit
t filter add dev v0 parent 1: pref 10 protocol all basic match 'cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not meta(nf_mark eq 5)' classid 1:10
t filter add dev v0 parent 1: pref 10 protocol all basic match 'u32(u16 0x800 0xffff at 12) or u32(u8 0x45 0xff at 1)' classid 1:20
t filter add dev v0 parent 1: pref 20 protocol ip basic match 'cmp(u8 at 9 eq 6) and (meta(nf_mark eq 1) or not (u32(u32 0x01020304 0xffffffff at nexthdr+4) and meta(pkt_len gt 100))) and (cmp(u32 at 0 layer transport trans lt 3))' classid 1:20
t filter add dev v0 parent 1: pref 30 protocol all basic match 'meta(priority mask 0xff gt 3) or meta(vlan shift 2 lt 7) or not meta(nf_mark eq priority)' classid 1:10
t filter add dev v0 parent 1: pref 40 protocol all basic match 'nbyte("abc" at 2 layer 1) and (cmp(u8 at 0 eq 1))' classid 1:10
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 5 protocol all basic match 'meta(rt_classid eq 3) and (meta(tc_index eq 4) or meta(fwmark eq 9))' action gact drop
t filter add dev v1 ingress pref 6 protocol all basic classid 1:1 action gact pass
# tc_snapshot falls back to sorted text lines (tc -j prints ematch trees as
# text inside its JSON); the plain listing keeps each tree's line order.
text() { t filter show dev v0 parent 1:; t filter show dev v1 ingress; }
snapshot >"$TMP/ref.txt"
text >"$TMP/ref-text.txt"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
expect_contains 'cmp(u16 at 0 layer link mask 0xffff eq 2048) and not meta(nf_mark eq 5)'
expect_contains 'u32(u16 0x800 0xffff at 12) or u32(u8 0x45 0xff at 1)'
expect_contains 'cmp(u8 at 9 layer network eq 6) and (meta(nf_mark eq 1) or not (u32(u32 0x1020304 0xffffffff at nexthdr+4) and meta(pkt_len gt 100))) and (cmp(u32 at 0 layer transport trans lt 3))'
expect_contains 'nbyte(\"abc\" at 2 layer network) and (cmp(u8 at 0 layer network eq 1))'
expect_contains 'meta(rt_classid eq 3) and (meta(tc_index eq 4) or meta(nf_mark eq 9))'
t qdisc del dev v0 root
t qdisc del dev v1 clsact
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/now.txt"
text >"$TMP/now-text.txt"
expect_same_file "$TMP/ref.txt" "$TMP/now.txt" "basic: dump -> flush -> apply gives tc's state (tc -j)"
expect_same_file "$TMP/ref-text.txt" "$TMP/now-text.txt" "basic: same trees, line for line (tc filter show)"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
# One value in one expression: a replace of that filter only.
sed -e 's/and not meta(nf_mark eq 5)/and not meta(nf_mark eq 6)/' "$TMP/dump.yaml" >"$TMP/mark.yaml"
expect_rc 2 ts diff "$TMP/mark.yaml"
expect_contains '~ v0: filter basic 1: pref 10 protocol all handle 0x1'
expect_contains 'meta(nf_mark eq 6)'
steps=$(grep -cE '^\s*[-+~] ' <<<"$OUT" || true)
[ "$steps" = 1 ] && pass "one step in the plan" || { fail "plan has $steps steps"; echo "$OUT" | sed 's/^/    /'; }
expect_rc 0 ts apply "$TMP/mark.yaml"
OUT=$(t filter show dev v0 parent 1: pref 10)
expect_contains "meta(nf_mark eq 6)"
expect_contains "u32(08000000/ffff0000 at 12)"
expect_rc 0 ts diff "$TMP/mark.yaml"
expect_contains "in sync"
# A file's expression in another spelling is the same state.
sed -e 's/layer link mask 0xffff eq 2048/layer 0 mask 65535 eq 0x800/' -e 's/meta(nf_mark eq 9)/meta(fwmark eq 011)/' "$TMP/mark.yaml" >"$TMP/spelled.yaml"
[ "$(grep -c 'eq 0x800\|eq 011' "$TMP/spelled.yaml")" = 2 ] && pass "spelled.yaml respells two matches" || fail "spelled.yaml: the edit missed"
expect_rc 0 ts diff "$TMP/spelled.yaml"
expect_contains "in sync"
# tc 6.1 cannot make meta(dev eq "NAME") (it sends the device as an int
# against a string: EINVAL); tcsync sends both sides as strings.
sed -e 's|^\(\s*\)- {parent: "1:", pref: 40,|\1- {parent: "1:", pref: 50, protocol: all, basic: {match: '"'"'meta(dev eq "v0") or meta(sk_bind_if eq "v1")'"'"'}, classid: "1:10"}\n&|' "$TMP/spelled.yaml" >"$TMP/dev.yaml"
grep -q 'pref: 50' "$TMP/dev.yaml" && pass "dev.yaml has the new filter" || fail "dev.yaml lacks the new filter"
expect_rc 2 ts diff "$TMP/dev.yaml"
expect_contains '+ v0: filter basic 1: pref 50 protocol all handle 0x1'
expect_rc 0 ts apply "$TMP/dev.yaml"
OUT=$(t filter show dev v0 parent 1: pref 50)
expect_contains 'meta(dev eq v0)'
expect_rc 0 ts diff "$TMP/dev.yaml"
expect_contains "in sync"
finish
