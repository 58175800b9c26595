#!/bin/bash
# In the kernel lab: the fw classifier (the host's kernel lacks it). State
# made with tc -> tcsync dump -> flush -> apply -> tc -j identical, diff
# empty; a changed classid or action is one replace; a changed mask is
# delete + add (one mask per list). FW_STRACE=1 prints tc's bytes for the
# golden unit test.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
if [ -n "${FW_STRACE:-}" ]; then
  t qdisc add dev v0 clsact
  strace -f -e trace=sendmsg -x -s 4000 tc -n "$NS" filter add dev v0 ingress pref 10 protocol ip handle 0xa fw classid 1:1 action gact pass 2>&1 | grep sendmsg
  strace -f -e trace=sendmsg -x -s 4000 tc -n "$NS" filter add dev v0 ingress pref 11 protocol ip handle 0x10/0xff fw indev v1 2>&1 | grep sendmsg
  exit 0
fi
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit
t class add dev v0 parent 1: classid 1:20 htb rate 20mbit
t filter add dev v0 parent 1: pref 10 protocol ip handle 0xa fw classid 1:10
t filter add dev v0 parent 1: pref 10 protocol ip handle 0xb fw classid 1:20
t filter add dev v0 parent 1: pref 20 protocol all handle 0x100/0xf00 fw classid 1:20 indev v1
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 5 protocol all handle 7 fw action gact drop
t filter add dev v1 ingress pref 5 protocol all handle 8 fw action gact pass action mirred egress redirect dev v0
snapshot >"$TMP/ref.txt"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
expect_contains 'handle: "0x100", fw: {mask: 3840, indev: v1}'
t qdisc del dev v0 root
t qdisc del dev v1 clsact
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/ref.txt" "$TMP/now.txt" "fw: dump -> flush -> apply gives tc's state"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
sed -e 's/handle: "0xb", fw: {}, classid: "1:20"/handle: "0xb", fw: {}, classid: "1:10"/' "$TMP/dump.yaml" >"$TMP/classid.yaml"
expect_rc 2 ts diff "$TMP/classid.yaml"
expect_contains '~ v0: filter fw 1: pref 10 protocol ip handle 0xb  (classid 1:20 -> 1:10)'
expect_rc 0 ts apply "$TMP/classid.yaml"
OUT=$(t filter show dev v0 parent 1: pref 10)
expect_contains "handle 0xb classid 1:10"
sed -e 's/mask: 3840/mask: 0xff00/' "$TMP/classid.yaml" >"$TMP/mask.yaml"
expect_rc 2 ts diff "$TMP/mask.yaml"
expect_contains "- v0: filter fw 1: pref 20 protocol all handle 0x100"
expect_contains "+ v0: filter fw 1: pref 20 protocol all handle 0x100"
expect_rc 0 ts apply "$TMP/mask.yaml"
expect_rc 0 ts diff "$TMP/mask.yaml"
finish
