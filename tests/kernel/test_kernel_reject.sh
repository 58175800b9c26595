#!/bin/bash
# A step the kernel rejects: its message is reported against the YAML line
# that produced it, with what was and was not applied.
source "$(dirname "$0")/lib.sh"
make_ns
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
expect_rc 1 ts apply "$TMP/reject.yaml"
expect_contains "$TMP/reject.yaml:9:9: error: kernel rejected add of v0 filter u32 1: pref 5 protocol ip"
expect_contains "(Invalid argument)"
expect_contains "applied 2 of 3 steps; 1 failed, 0 not sent"
expect_contains "+ v0: qdisc htb 1: root"
# What landed is what the report says.
OUT=$(t class show dev v0)
expect_contains "class htb 1:10"
finish
