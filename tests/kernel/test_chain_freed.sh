#!/bin/bash
# A chain the kernel made for filters (not explicitly) goes with its last
# filter. A file that declares that chain and none of its filters: apply
# deletes the filters and the kernel frees the chain beside the ACKed
# deletes. Verify (the kernel's echoes since #20) must still see it: the
# device of a delete in a chain other than 0 is read again. The second apply
# makes the chain. (Review finding of session 11: echoes alone said "in sync".)
source "$(dirname "$0")/lib.sh"
make_ns
t qdisc add dev v0 clsact
t filter add dev v0 ingress chain 5 pref 10 protocol ip u32 match ip dst 10.0.0.1/32 classid 1:1
cat >"$TMP/ch.yaml" <<'YAML'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    chains:
      - {parent: ingress, chain: 5}
YAML
expect_rc 1 ts apply "$TMP/ch.yaml"
expect_contains "after the apply the kernel still differs from the files"
expect_contains "+ v0: chain 5 ingress"
expect_rc 0 ts apply "$TMP/ch.yaml"
expect_rc 0 ts diff "$TMP/ch.yaml"
expect_contains "in sync"
OUT=$(t chain show dev v0 ingress)
expect_contains "chain 5"
finish
