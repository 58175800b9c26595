#!/bin/bash
# In the kernel lab: never silent. Kinds tcsync has no table for (qdisc
# ets with its classes; every filter kind of 6.1 has one now) and
# attributes its tables do not read (flower mpls_label and mpls_bos, red's
# qevent block, a size table) made with tc -> tcsync dump -> flush -> apply
# of the dump -> tc -j identical, diff in sync, a second dump identical;
# and a file without them is not in sync.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
for d in v0 v1 v2 v3; do ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done

t qdisc add dev v0 root handle 1: stab linklayer ethernet overhead 34 ets bands 3 strict 1 quanta 1500 3000
t qdisc add dev v1 root handle 2: prio
t filter add dev v1 parent 2: pref 1 handle 1 protocol ip cgroup action simple sdata "hello world"
t filter add dev v1 parent 2: pref 2 protocol ip u32 match ip dst 10.0.0.9/32 action ife encode allow mark dst 02:00:00:00:00:01
t qdisc add dev v2 clsact
t filter add dev v2 ingress pref 3 protocol mpls_uc flower mpls_label 100 mpls_bos 1 action drop
t qdisc add dev v3 root handle 3: red limit 400000 avpkt 1000 probability 0.1 min 30000 max 90000 qevent early_drop block 10
t qdisc add dev v3 ingress_block 10 clsact
t filter add block 10 pref 1 protocol ip matchall action drop

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
for w in "kind: ets" "stab: {linklayer: ethernet, overhead: 34}" "flower: {raw_options"; do
  grep -qF "$w" "$TMP/dump.yaml" && pass "dump has: $w" || fail "dump lacks: $w"
done
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"

# Flush what tc made, then apply the dump.
for d in v0 v1 v3; do t qdisc del dev $d root; done
for d in v2 v3; do t qdisc del dev $d clsact; done
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j after dump + flush + apply equals what tc made"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump differs"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

# Without the bytes no table reads (and without the size table, read as
# `stab` since session 11), the file is not in sync, and says where.
sed 's/flower: {raw_options: "[0-9a-f]*"}/flower: {}/; s/, raw_attrs: "[0-9a-f]*"//; s/, stab: {[^}]*}//' "$TMP/dump.yaml" >"$TMP/plain.yaml"
expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "(stab {linklayer: ethernet, overhead: 34} -> (none)"
expect_contains "(unread options attrs 70, 68 -> (none))"
finish
