#!/bin/bash
# percpu_stats: tcsync's actions carry TCA_ACT_FLAGS_NO_PERCPU_STATS unless
# the file says `percpu_stats: true` (tc's `no_percpu` is the reference);
# tc-made actions are not replaced for the flag unless a file declares it.
source "$(dirname "$0")/lib.sh"
make_ns

rule() {  # rule EXTRA: one u32 rule with a mirred action, EXTRA in the action
  cat >"$TMP/f.yaml" <<YAML
version: 1
devices:
  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, handle: "::1", u32: {match: [{ip: {dst: 10.0.0.1}}]},
         actions: [{mirred: {action: redirect, dev: v1}$1}]}
YAML
}
no_percpu() { t -j filter show dev v0 ingress | grep -c '"no_percpu":true' || true; }

rule ""
expect_rc 0 ts apply "$TMP/f.yaml"
[ "$(no_percpu)" = 1 ] && pass "default: the kernel reports no_percpu" || fail "default: no_percpu expected"
expect_rc 0 ts dump
grep -q percpu_stats <<<"$OUT" && fail "dump of a tcsync-made action names percpu_stats" || pass "dump omits the default"

rule ", percpu_stats: true"
expect_rc 2 ts diff "$TMP/f.yaml"
expect_contains "mirred percpu_stats false -> true"
expect_rc 0 ts apply "$TMP/f.yaml"
[ "$(no_percpu)" = 0 ] && pass "percpu_stats: true: no flag" || fail "percpu_stats: true still has no_percpu"
expect_rc 0 ts dump
expect_contains "percpu_stats: true"

# The same rule made by tc (per-CPU stats): in sync with a file that says nothing.
t qdisc del dev v0 clsact
t qdisc add dev v0 clsact
t filter add dev v0 ingress prio 1 handle 800::1 protocol ip u32 match ip dst 10.0.0.1/32 action mirred egress redirect dev v1
rule ""
expect_rc 0 ts diff "$TMP/f.yaml"
expect_contains "in sync"
rule ", percpu_stats: false"
expect_rc 2 ts diff "$TMP/f.yaml"
expect_contains "mirred percpu_stats true -> false"
expect_rc 0 ts apply "$TMP/f.yaml"
[ "$(no_percpu)" = 1 ] && pass "percpu_stats: false replaced tc's action" || fail "percpu_stats: false not applied"
expect_rc 0 ts diff "$TMP/f.yaml"
expect_contains "in sync"
finish
