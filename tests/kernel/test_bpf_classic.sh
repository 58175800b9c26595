#!/bin/bash
# Classic BPF programs (tc's `bytecode 'N,code jt jf k,...'`) in bpf filters:
# the kernel keeps and reports the instructions, so they travel whole, with
# nothing to load. Before, a dump of such a rule was refused by the loader
# ("needs its program"); the kernel's tdc cases 23c3 and 4423 make them.
# cls_bpf keeps a list newest first (tdc e0a9): three rules at one pref come
# back in the kernel's order. Here: dump -> flush -> apply -> identical tc -j, diff empty, a changed
# program is a replace; import of tc's words == tc -b.
source "$(dirname "$0")/lib.sh"
make_ns
make_ref_ns
cat >"$TMP/state.tc" <<'B'
qdisc add dev v0 clsact
filter add dev v0 ingress pref 10 protocol ip bpf bytecode '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0' classid 1:1
filter add dev v0 egress pref 20 protocol all bpf bc '1,6 0 0 4294967295' da skip_hw
filter add dev v0 egress pref 30 protocol ip handle 1 bpf bytecode '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0'
filter add dev v0 egress pref 30 protocol ip handle 2 bpf bytecode '4,40 0 0 12,21 0 1 2054,6 0 0 262144,6 0 0 0'
filter add dev v0 egress pref 30 protocol ip handle 100 bpf bytecode '4,40 0 0 12,21 0 1 33024,6 0 0 262144,6 0 0 0'
B
roundtrip "$TMP/state.tc" v0
OUT=$(cat "$TMP/dump.yaml")
expect_contains 'bytecode: "4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0"'

expect_rc 0 ts apply "$TMP/dump.yaml"
sed 's/6 0 0 262144,6 0 0 0/6 0 0 65535,6 0 0 0/' "$TMP/dump.yaml" >"$TMP/changed.yaml"
expect_rc 2 ts diff "$TMP/changed.yaml"
expect_contains "~ v0: filter bpf ingress pref 10 protocol ip"
expect_rc 0 ts apply "$TMP/changed.yaml"
OUT=$(t -j filter show dev v0 ingress)
expect_contains '"k":65535'
del_clsact v0

import_check "$TMP/state.tc" v0
finish
