#!/bin/bash
# A value the kernel cannot hold is refused, never sent cut to its wire
# (issue 38): bfifo's limit is a u32 of bytes; 4294967295 is applied and read
# back exactly, 4294967296 (which the kernel would hold as 0) is refused at
# its line with the kernel untouched. tbf's latency becomes a u32 limit in
# bytes: the longest that fits at the rate applies, 5000s (read back as 705s
# before) is refused.
source "$(dirname "$0")/lib.sh"
make_ns
# No IPv6 on the links: its autoconfiguration's packets would move the
# counters the before/after comparisons read.
ip netns exec "$NS" sysctl -qw net.ipv6.conf.v0.disable_ipv6=1 net.ipv6.conf.v1.disable_ipv6=1
bfifo() {
  cat <<Y
version: 1
devices:
  v0:
    qdiscs: [{kind: bfifo, handle: "1:", limit: $1}]
Y
}
bfifo 4294967295 >"$TMP/max.yaml"
expect_rc 0 ts apply "$TMP/max.yaml"
OUT=$(t -j qdisc show dev v0)
expect_contains '"kind":"bfifo","handle":"1:","root":true,"refcnt":3,"options":{"limit":4294967295}'
expect_rc 0 ts diff "$TMP/max.yaml"
OUT=$(ts dump --dev v0)
expect_contains 'limit: "4294967295b"'
state() { t -s qdisc show dev v0; }
state >"$TMP/before.txt"
bfifo 4294967296 >"$TMP/past.yaml"
for cmd in validate diff apply; do
  expect_rc 1 ts $cmd "$TMP/past.yaml"
  expect_contains "$TMP/past.yaml:4:49: error: 'limit' is 4294967296, past the most the kernel holds: 4294967295b (u32)"
  state >"$TMP/now.txt"
  expect_same_file "$TMP/before.txt" "$TMP/now.txt" "$cmd: the kernel untouched"
done

tbf() {
  cat <<Y
version: 1
devices:
  v0:
    qdiscs: [{kind: tbf, handle: "1:", rate: 10mbit, burst: 10kb, latency: $1}]
Y
}
# At 10mbit (1250000 bytes/s) with 10kb of burst, a limit of 4294967295
# bytes is 3435.965644 s of latency: the longest whole us that fits.
tbf 3435965644us >"$TMP/tmax.yaml"
expect_rc 0 ts apply "$TMP/tmax.yaml"
OUT=$(ts dump --dev v0)
expect_contains 'limit: "4294967295b"'
expect_rc 0 ts diff "$TMP/tmax.yaml"
state >"$TMP/before.txt"
tbf 5000s >"$TMP/tpast.yaml"
for cmd in validate diff apply; do
  expect_rc 1 ts $cmd "$TMP/tpast.yaml"
  expect_contains "$TMP/tpast.yaml:4:76: error: 'latency' is 5000s, past the most the kernel holds at this rate and burst: 3435965644us (it becomes the limit, a u32 of bytes)"
  state >"$TMP/now.txt"
  expect_same_file "$TMP/before.txt" "$TMP/now.txt" "$cmd: the kernel untouched"
done
finish
