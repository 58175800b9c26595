#!/bin/bash
# u32 root table ids (800:, 801:, ...) are the kernel's, numbered in the
# order a qdisc's u32 lists are made (model/shared_tables.h). A script that
# makes them in another order than tcsync (by parent, chain, pref) gets
# other ids: dump writes them (handle "801::800", an empty list's "801:",
# root_table: "801:" on the first table of a list holding only tables),
# apply makes the lists in the order that gives them, import writes what
# the batch gives, and a live qdisc whose roots differ from the file's has
# its u32 lists made again (diff says why) rather than a silent match.
source "$(dirname "$0")/lib.sh"
make_ns 2
make_ref_ns

# sqm-scripts' simple.qos: the catch-all at pref 999 first.
cat >"$TMP/sqm.tc" <<'B'
qdisc add dev v0 root handle 1: htb default 12
class add dev v0 parent 1: classid 1:1 htb rate 10mbit
class add dev v0 parent 1:1 classid 1:11 htb rate 1mbit ceil 10mbit
class add dev v0 parent 1:1 classid 1:12 htb rate 1mbit ceil 10mbit
class add dev v0 parent 1:1 classid 1:13 htb rate 1mbit ceil 10mbit
filter add dev v0 parent 1:0 protocol all prio 999 u32 match ip protocol 0 0x00 flowid 1:12
filter add dev v0 parent 1:0 protocol ip prio 8 u32 match ip protocol 1 0xff flowid 1:13
filter add dev v0 parent 1:0 protocol ipv6 prio 9 u32 match ip protocol 1 0xff flowid 1:13
B
echo "# sqm order: dump -> flush -> apply"
expect_rc 0 t -b "$TMP/sqm.tc"
snapshot >"$TMP/before.json"
grep -q '800::800' "$TMP/before.json" && grep -q '802::800' "$TMP/before.json" && pass "tc -j shows the root ids" ||
  fail "tc -j shows the root ids"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/sqm.yaml"
sed 's/^/    /' "$TMP/sqm.yaml"
expect_contains 'pref: 999, protocol: all, handle: "800::800"'
expect_contains 'pref: 8, protocol: ip, handle: "801::800"'
expect_contains 'pref: 9, protocol: ipv6, handle: "802::800"'
t qdisc del dev v0 root
expect_rc 0 ts apply "$TMP/sqm.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "sqm: tc -j state after dump + flush + apply equals tc's, root ids too"
expect_rc 0 ts diff "$TMP/sqm.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/sqm.yaml" && pass "sqm: second dump identical" || { fail "sqm: second dump identical"; diff <(echo "$OUT") "$TMP/sqm.yaml"; }

echo "# a live qdisc with tcsync's order, a file with the script's: the lists are made again"
sed -E 's/handle: "80[0-9a-f]::/handle: "::/' "$TMP/sqm.yaml" >"$TMP/plain.yaml"
t qdisc del dev v0 root
expect_rc 0 ts apply "$TMP/plain.yaml"
OUT=$(t filter show dev v0 parent 1:)
expect_contains "pref 8 u32 chain 0 fh 800::800"
expect_rc 0 ts diff "$TMP/plain.yaml"
expect_contains "in sync"  # roots not declared: not compared
expect_rc 2 ts diff "$TMP/sqm.yaml"
expect_contains "- v0: filters u32 1: pref 8 protocol ip (all 1)  (u32 root table 800: -> 801: at pref 8: the kernel numbers a qdisc's root tables anew only when all its u32 lists go)"
expect_contains "+ v0: filter u32 1: pref 999 protocol all handle ::800"
OUT=$(ts diff "$TMP/sqm.yaml" 2>&1 | grep -c "^- " || true)
[ "$OUT" = 3 ] && pass "the three u32 lists go" || fail "the three u32 lists go (got $OUT)"
expect_rc 0 ts apply "$TMP/sqm.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "sqm: re-made lists have the declared roots"
expect_rc 0 ts diff "$TMP/sqm.yaml"
expect_contains "in sync"
t qdisc del dev v0 root

echo "# import gives the roots tc -b gives"
import_check "$TMP/sqm.tc"
t qdisc del dev v0 root
tc -n "$REF" qdisc del dev v0 root

# tdc 1fe6's state: pref 99 made first (800:, with table 43:), pref 98
# after (801:), whose rule went into 43: and left its own list empty.
cat >"$TMP/1fe6.tc" <<'B'
qdisc add dev v1 ingress
filter add dev v1 ingress protocol ip prio 99 handle 43: u32 divisor 1
filter add dev v1 ingress protocol ip prio 98 u32 ht 43: match tcp src 22 FFFF classid 1:3
B
echo "# tdc 1fe6: dump -> flush -> apply"
expect_rc 0 t -b "$TMP/1fe6.tc"
snapshot >"$TMP/before.json"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/1fe6.yaml"
sed 's/^/    /' "$TMP/1fe6.yaml"
expect_contains '{parent: ingress, pref: 98, protocol: ip, empty: u32, handle: "801:"}'
t qdisc del dev v1 ingress
expect_rc 0 ts apply "$TMP/1fe6.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "1fe6: tc -j state after dump + flush + apply equals tc's, root ids too"
expect_rc 0 ts diff "$TMP/1fe6.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/1fe6.yaml" && pass "1fe6: second dump identical" || { fail "1fe6: second dump identical"; diff <(echo "$OUT") "$TMP/1fe6.yaml"; }
t qdisc del dev v1 ingress

# Hash tables a script gives ids of 800: and above: the dump shows them as
# it shows roots (divisor 1), and a get of the list's root tells them apart.
cat >"$TMP/ht.tc" <<'B'
qdisc add dev v0 ingress
filter add dev v0 parent ffff: protocol ip prio 5 handle 900: u32 divisor 1
filter add dev v0 parent ffff: protocol ip prio 5 handle 901: u32 divisor 256
filter add dev v0 parent ffff: protocol ip prio 5 u32 ht 900: match ip dst 10.0.0.1/32 classid 1:1
filter add dev v0 parent ffff: protocol ip prio 5 u32 ht 901:7: match ip dst 10.0.0.7/32 classid 1:2
filter add dev v0 parent ffff: protocol ip prio 5 u32 link 900: match ip src 10.1.0.0/16
filter add dev v0 parent ffff: protocol ip prio 5 u32 link 901: hashkey mask 0x000000ff at 16 match ip src 10.2.0.0/16
B
# TC_U32_TERMINAL other than tcsync would set it: read, not recomputed.
cat >"$TMP/term.tc" <<'B'
filter add dev v0 parent ffff: protocol ip prio 6 u32 match ip dst 10.9.0.0/16 classid 0
filter add dev v0 parent ffff: protocol ip prio 6 handle ::5 u32 match ip dst 10.8.0.0/16
filter replace dev v0 parent ffff: protocol ip prio 6 handle 801::5 u32 match ip dst 10.8.0.0/16 classid 1:5
B
echo "# hash tables 900: (divisor 1) and 901: (divisor 256), linked from root-table rules; TERMINAL as tc left it"
expect_rc 0 t -b "$TMP/ht.tc"
expect_rc 0 t -b "$TMP/term.tc"
snapshot >"$TMP/before.json"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/ht.yaml"
sed 's/^/    /' "$TMP/ht.yaml"
expect_contains 'handle: "900:", u32: {divisor: 1}'
expect_contains 'handle: "901:", u32: {divisor: 256}'
expect_contains 'handle: "900::800", u32: {ht: "900:"'
expect_contains 'handle: "901:7:800", u32: {ht: "901:7:"'
expect_contains 'link: "900:"'
expect_contains 'terminal: true}}'         # classid 0: terminal, no classid shown
expect_contains 'terminal: false}, classid: "1:5"'  # replace kept the old selector's flags
expect_rc 0 ts diff "$TMP/ht.yaml"
expect_contains "in sync"
t qdisc del dev v0 ingress
expect_rc 0 ts apply "$TMP/ht.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "explicit 900:/901: tables: tc -j state after dump + flush + apply equals tc's"
expect_rc 0 ts diff "$TMP/ht.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/ht.yaml" && pass "explicit tables: second dump identical" || { fail "explicit tables: second dump identical"; diff <(echo "$OUT") "$TMP/ht.yaml"; }
echo "# a file without table 900: (nor its rule, nor the link to it): a difference"
grep -v -e '"900:"' -e '900::' "$TMP/ht.yaml" >"$TMP/no900.yaml"
expect_rc 2 ts diff "$TMP/no900.yaml"
expect_contains "pref 5 protocol ip handle 900:"
echo "# a rule of 900: written without 'ht' is still the table's where the file declares it"
sed -E 's/u32: \{ht: "900:", /u32: {/' "$TMP/ht.yaml" >"$TMP/noht.yaml"
expect_rc 0 ts diff "$TMP/noht.yaml"
expect_contains "in sync"
t qdisc del dev v0 ingress
echo "# import gives the tables tc -b gives"
import_check "$TMP/ht.tc"
t qdisc del dev v0 ingress
tc -n "$REF" qdisc del dev v0 ingress

# Lists that hold only hash tables and their rules show their root in no
# entry: the dumper asks for it and writes it on the list's first table
# (root_table). Made here in the reverse of tcsync's order: pref 7 800:,
# pref 6 801:, pref 5 (a rule of its root) 802:; two table-only lists, so
# neither root follows from the others.
cat >"$TMP/only.tc" <<'B'
qdisc add dev v0 root handle 1: htb
class add dev v0 parent 1: classid 1:1 htb rate 1mbit
filter add dev v0 parent 1: protocol ip prio 7 handle 3: u32 divisor 16
filter add dev v0 parent 1: protocol ip prio 6 handle 2: u32 divisor 256
filter add dev v0 parent 1: protocol ip prio 6 u32 ht 2:1: match ip dst 1.2.3.4/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 7 u32 ht 3:2: match ip dst 1.2.3.5/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 1.2.3.6/32 classid 1:1
B
echo "# lists holding only hash tables: dump -> flush -> apply keeps their roots"
expect_rc 0 t -b "$TMP/only.tc"
snapshot >"$TMP/before.json"
OUT=$(t filter get dev v0 parent 1: protocol ip prio 6 handle 801: u32)
expect_contains "pref 6 u32 chain 0 fh 801: ht divisor 1"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/only.yaml"
sed 's/^/    /' "$TMP/only.yaml"
expect_contains 'pref: 6, protocol: ip, handle: "2:", root_table: "801:", u32: {divisor: 256}'
expect_contains 'pref: 7, protocol: ip, handle: "3:", root_table: "800:", u32: {divisor: 16}'
expect_contains 'pref: 5, protocol: ip, handle: "802::800"'
t qdisc del dev v0 root
expect_rc 0 ts apply "$TMP/only.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "table-only lists: tc -j state after dump + flush + apply equals tc's, root ids too"
expect_rc 0 ts diff "$TMP/only.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/only.yaml" && pass "table-only lists: second dump identical" || { fail "table-only lists: second dump identical"; diff <(echo "$OUT") "$TMP/only.yaml"; }
echo "# a file giving pref 6 and 7 each other's roots: a difference, the lists made again"
sed -e 's/root_table: "801:"/root_table: "8XX:"/' -e 's/root_table: "800:"/root_table: "801:"/' -e 's/root_table: "8XX:"/root_table: "800:"/' \
  "$TMP/only.yaml" >"$TMP/swapped.yaml"
expect_rc 2 ts diff "$TMP/swapped.yaml"
expect_contains "(u32 root table 801: -> 800: at pref 6: the kernel numbers a qdisc's root tables anew only when all its u32 lists go)"
expect_rc 0 ts apply "$TMP/swapped.yaml"
OUT=$(t filter get dev v0 parent 1: protocol ip prio 6 handle 800: u32)
expect_contains "pref 6 u32 chain 0 fh 800: ht divisor 1"
expect_rc 0 ts diff "$TMP/swapped.yaml"
expect_contains "in sync"
expect_rc 2 ts diff "$TMP/only.yaml"
echo "# roots not declared: not compared"
sed -E -e 's/, root_table: "80[0-9a-f]:"//' -e 's/handle: "80[0-9a-f]::/handle: "::/' "$TMP/only.yaml" >"$TMP/onlyplain.yaml"
expect_rc 0 ts diff "$TMP/onlyplain.yaml"
expect_contains "in sync"
t qdisc del dev v0 root
echo "# import gives the roots tc -b gives to lists holding only tables"
import_check "$TMP/only.tc"
grep -qF 'root_table: "801:"' "$TMP/import.yaml" && pass "import writes root_table" || { fail "import writes root_table"; sed 's/^/    /' "$TMP/import.yaml"; }
t qdisc del dev v0 root
tc -n "$REF" qdisc del dev v0 root

echo "# a root no order gives: a warning, nothing made again"
cat >"$TMP/far.yaml" <<'Y'
version: 1
devices:
  v1:
    qdiscs:
      - {kind: ingress, handle: "ffff:"}
    filters:
      - {parent: ingress, pref: 5, protocol: ip, handle: "805::1", u32: {match: [{ip: {protocol: 1}}]}, classid: "1:1"}
Y
expect_rc 0 ts apply "$TMP/far.yaml"
OUT=$(ts diff "$TMP/far.yaml" 2>&1)
expect_contains "warning: v1: the u32 list ingress chain 0 pref 5 protocol ip declares root table 805:"
expect_contains "in sync"
t qdisc del dev v1 ingress
finish
