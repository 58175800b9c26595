#!/bin/bash
# examples/ingress-redirect.yaml: packets arriving on v1 really leave via v0
# (counted on the redirect action), and a changed target is a replace.
source "$(dirname "$0")/lib.sh"
make_ns
F=$EXAMPLES/ingress-redirect.yaml
expect_rc 0 ts apply "$F"
OUT=$(t filter show dev v1 ingress)
expect_contains "mirred (Egress Redirect to device v0) stolen"
expect_contains "mirred (Egress Mirror to device v0) pipe"
expect_contains "match 0a000000/ff000000 at 12"
expect_rc 0 ts diff "$F"

# Traffic: an IPv4 packet from 10.1.2.3 sent into v0 arrives on v1's ingress,
# matches, and is counted by the redirect rule.
ip -n "$NS" addr add 10.1.2.3/24 dev v0
ip -n "$NS" neigh add 10.1.2.4 lladdr 02:00:00:00:00:01 dev v0
ip netns exec "$NS" ping -c 3 -i 0.2 -W 1 10.1.2.4 >/dev/null 2>&1 || true
pk=$(t -s -j filter show dev v1 ingress | python3 -c '
import json,sys
n=0
for f in json.load(sys.stdin):
    for a in f.get("options",{}).get("actions",[]):
        if a.get("mirred_action")=="redirect": n+=a.get("stats",{}).get("packets",0)
print(n)')
[ "$pk" -ge 3 ] && pass "redirect rule counted $pk packets" || fail "redirect rule counted $pk packets (want >= 3)"

# Changing the mirred target is an in-place replace of that filter.
sed 's/action: redirect, dev: v0/action: redirect, dev: v1/' "$F" >"$TMP/changed.yaml"
expect_rc 2 ts diff "$TMP/changed.yaml"
expect_contains "~ v1: filter u32 ingress pref 10 protocol ip"
expect_contains "mirred dev v0 -> v1"
expect_rc 0 ts apply "$TMP/changed.yaml"
expect_rc 0 ts diff "$TMP/changed.yaml"
OUT=$(t filter show dev v1 ingress)
expect_contains "mirred (Egress Redirect to device v1) stolen"
finish
