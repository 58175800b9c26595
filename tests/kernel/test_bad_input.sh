#!/bin/bash
# Bad input: exit 1, FILE:LINE:COL on stderr, and the kernel untouched.
source "$(dirname "$0")/lib.sh"
make_ns
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit
snapshot >"$TMP/before.txt"

check_bad() {  # NAME CONTENT EXPECTED-SUBSTRING
  printf '%s' "$2" >"$TMP/$1.yaml"
  for cmd in validate diff apply; do
    expect_rc 1 ts $cmd "$TMP/$1.yaml"
    expect_contains "$3"
  done
}

check_bad broken $'version: 1\ndevices:\n  v0: {qdiscs: [\n' "$TMP/broken.yaml:3:17: error: malformed YAML"
check_bad type $'version: 1\ndevices:\n  v0:\n    classes: [{classid: "1:10", kind: htb, rate: [1]}]\n    qdiscs: [{kind: htb, handle: "1:"}]\n' "$TMP/type.yaml:4:50: error: 'rate' must be a rate such as 100mbit, not a list"
check_bad unknown $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", defalt: "1:10"}]\n' "$TMP/unknown.yaml:4:40: error: unknown key 'defalt' in htb qdisc (did you mean 'default'?)"
check_bad dupkey $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", handle: "2:"}]\n' "$TMP/dupkey.yaml:4:40: error: duplicate key 'handle'"
check_bad dupfilter $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "::1", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n      - {parent: ingress, pref: 1, handle: "::1", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n' "$TMP/dupfilter.yaml:7:9: error: duplicate filter"
# Caret and source line come with the error.
expect_contains '          ^'
check_bad empty '' "$TMP/empty.yaml:1:1: error: empty file"

# A device that does not exist: validate cannot know, diff and apply can.
printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n  nosuchdev:\n    qdiscs: [{kind: clsact}]\n' >"$TMP/nodev.yaml"
expect_rc 0 ts validate "$TMP/nodev.yaml"
for cmd in diff apply; do
  expect_rc 1 ts $cmd "$TMP/nodev.yaml"
  expect_contains "$TMP/nodev.yaml:5:3: error: device 'nosuchdev' does not exist in network namespace $NS"
done
# A mirred target that does not exist: caught before anything is sent.
printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, actions: [{mirred: {action: redirect, dev: nope0}}]}\n' >"$TMP/nomirred.yaml"
expect_rc 1 ts apply "$TMP/nomirred.yaml"
expect_contains "$TMP/nomirred.yaml:6:130: error: mirred target device 'nope0' does not exist"
expect_contains "nothing applied"

# A directory given as a file is said to be one (not "invalid UTF-8").
expect_rc 1 ts validate "$TMP"
expect_contains "$TMP: error: cannot read file: Is a directory"
# An unknown command is named, with the nearest one.
expect_rc 1 "$TCSYNC" valdate "$TMP/nodev.yaml"
expect_contains "tcsync: error: unknown command 'valdate'; did you mean 'validate'?"
# Counts agree with their nouns.
printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, u32: {}}\n' >"$TMP/one.yaml"
expect_rc 0 ts validate "$TMP/one.yaml"
expect_contains "valid: 1 device, 1 qdisc, 0 classes, 1 filter"
expect_rc 0 ts validate "$TMP/nodev.yaml"
expect_contains "valid: 2 devices, 2 qdiscs, 0 classes, 0 filters"

snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "kernel state untouched by every bad input"
finish
