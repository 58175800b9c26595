#!/bin/bash
# A step the kernel rejects: its message is reported against the YAML field
# (or line) that produced it; by default what landed is rolled back (the kernel is
# compared in full with its state before); with --on-error=stop the report
# says exactly what was applied.
source "$(dirname "$0")/lib.sh"
make_ns
t qdisc add dev v0 root handle 9: tbf rate 1mbit burst 10kb limit 20kb
cat >"$TMP/reject.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "1:10", rate: 10mbit}
    filters:
      - {parent: "1:", pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}], indev: nosuch0}}
Y
snapshot >"$TMP/before.txt"
expect_rc 1 ts apply "$TMP/reject.yaml"
# The kernel names the attribute it refused (TCA_U32_INDEV, NLMSGERR_ATTR_OFFS):
# the error points at that field's value, the object's line is a note.
expect_contains "$TMP/reject.yaml:9:94: error: kernel rejected add of v0 filter u32 1: pref 5 protocol ip handle ::1: indev: Network device not found (Invalid argument)"
expect_contains "$TMP/reject.yaml:9:9: note: in this object"
expect_contains "tcsync: 3 of 4 steps applied; 1 failed, 0 not sent"
expect_contains "tcsync: rolled back"
expect_contains "the kernel is as it was before this apply"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "rollback restored the state found (tbf 9: back, htb gone)"

expect_rc 1 ts apply --on-error=stop "$TMP/reject.yaml"
expect_contains "tcsync: 3 of 4 steps applied; 1 failed, 0 not sent"
expect_contains "not rolled back (--on-error=stop); the kernel holds these steps:"
expect_contains "- v0: qdisc tbf 9: root  (kind tbf -> htb)"
expect_contains "+ v0: qdisc htb 1: root"
expect_contains "+ v0: class htb 1:10 parent 1:"
OUT=$(t class show dev v0)
expect_contains "class htb 1:10"
expect_rc 2 ts diff "$TMP/reject.yaml"
expect_contains "+ v0: filter u32 1: pref 5 protocol ip handle ::1"
finish
