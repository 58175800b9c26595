#!/bin/bash
# In the kernel lab: the fast no-op check. tcsync-made flower rules carry a
# fingerprint cookie; diff/apply read such a block with a terse dump and
# call it unchanged when every rule's fingerprint matches (-v says so), and
# read it in full otherwise. A rule changed behind tcsync's back that kept
# its cookie is the documented limit: only --deep sees it. The fingerprint
# is never shown by dump nor counted as drift.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns

base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, handle: 1, flower: {dst_ip: 10.0.0.1, ip_proto: tcp, dst_port: 80}, actions: [{gact: {control: drop}}]}
      - {parent: ingress, pref: 10, protocol: ip, handle: 2, flower: {dst_ip: 10.0.0.2}, actions: [{gact: {control: pass}}, {gact: {control: drop}}]}
      - {parent: ingress, pref: 20, protocol: ip, handle: 1, flower: {src_ip: 10.1.0.0/16, src_mac: "02:00:00:00:10:00/40", dst_mac: 02:00:00:00:00:01}, actions: [{gact: {control: drop}}]}
      - {parent: egress, pref: 5, protocol: all, matchall: {}, actions: [{gact: {control: pass}}]}
Y
}
base >"$TMP/f.yaml"
TERSE="fingerprints: 3 filters in 1 blocks unchanged (terse dump)"

expect_rc 0 ts apply "$TMP/f.yaml"
expect_rc 0 ts -v diff "$TMP/f.yaml"
expect_contains "in sync"
expect_contains "$TERSE"
expect_rc 0 ts -v apply "$TMP/f.yaml"
expect_contains "$TERSE"
expect_rc 0 ts diff --deep "$TMP/f.yaml"
expect_contains "in sync"

# The cookie is in the kernel (tc shows it), not in tcsync's dump.
COOKIE=$(t -j filter show dev v0 ingress pref 10 | python3 -c '
import json, sys
for f in json.load(sys.stdin):
    if str(f.get("options", {}).get("handle")) in ("1", "0x1"):
        print(f["options"]["actions"][0]["cookie"])')
[ ${#COOKIE} = 32 ] && pass "tc shows a 16-byte cookie on the first action: $COOKIE" || fail "no fingerprint cookie: '$COOKIE'"
expect_rc 0 ts dump
if grep -q cookie <<<"$OUT"; then fail "dump shows the fingerprint as a cookie"; else pass "dump shows no cookie"; fi

# Changed behind tcsync's back, same cookie: the terse path cannot see it,
# --deep does, and apply --deep repairs it.
t filter replace dev v0 ingress pref 10 handle 1 protocol ip flower dst_ip 10.0.0.9 ip_proto tcp dst_port 80 \
  action gact drop cookie "$COOKIE" no_percpu
expect_rc 0 ts diff "$TMP/f.yaml"
expect_contains "in sync"
expect_rc 2 ts diff --deep "$TMP/f.yaml"
expect_contains "dst_ip 10.0.0.9 -> 10.0.0.1"
expect_rc 0 ts apply --deep "$TMP/f.yaml"
expect_rc 0 ts -v diff --deep "$TMP/f.yaml"
expect_contains "in sync"
if grep -qF "fingerprints:" <<<"$OUT"; then fail "--deep used the terse dump"; else pass "--deep reads everything"; fi

# Changed behind tcsync's back without the cookie: caught by the full read.
t filter replace dev v0 ingress pref 10 handle 2 protocol ip flower dst_ip 10.0.0.2 action gact pass action gact pass
expect_rc 2 ts -v diff "$TMP/f.yaml"
expect_contains "1 blocks read in full"
expect_rc 0 ts apply "$TMP/f.yaml"
expect_rc 0 ts -v diff "$TMP/f.yaml"
expect_contains "$TERSE"

# A rule added, a rule deleted by tc: the terse read sees the keys.
t filter add dev v0 ingress pref 10 handle 3 protocol ip flower dst_ip 10.0.0.3 action gact drop
expect_rc 2 ts -v diff "$TMP/f.yaml"
expect_contains "- v0: filter flower ingress pref 10 protocol ip handle 0x3"
expect_rc 0 ts apply "$TMP/f.yaml"
t filter del dev v0 ingress pref 20 handle 1 protocol ip flower
expect_rc 2 ts diff "$TMP/f.yaml"
expect_contains "+ v0: filter flower ingress pref 20 protocol ip handle 0x1"
expect_rc 0 ts apply "$TMP/f.yaml"

# The file changed: the fingerprint differs, the full read gives the plan.
base | sed 's/dst_port: 80}/dst_port: 443}/' >"$TMP/g.yaml"
expect_rc 2 ts -v diff "$TMP/g.yaml"
expect_contains "dst_port 80 -> 443"
expect_contains "1 blocks read in full"
expect_rc 0 ts apply "$TMP/g.yaml"
expect_rc 0 ts -v diff "$TMP/g.yaml"
expect_contains "$TERSE"

# Rules made by tc (no fingerprints): in sync, read in full, never replaced.
t qdisc del dev v0 clsact
t qdisc add dev v0 clsact
t filter add dev v0 ingress pref 10 handle 1 protocol ip flower dst_ip 10.0.0.1 ip_proto tcp dst_port 80 action gact drop no_percpu
t filter add dev v0 ingress pref 10 handle 2 protocol ip flower dst_ip 10.0.0.2 action gact pass no_percpu action gact drop no_percpu
t filter add dev v0 ingress pref 20 handle 1 protocol ip flower src_ip 10.1.0.0/16 src_mac 02:00:00:00:10:00/40 dst_mac 02:00:00:00:00:01 action gact drop no_percpu
t filter add dev v0 egress pref 5 protocol all matchall action gact pass no_percpu
expect_rc 0 ts -v diff "$TMP/f.yaml"
expect_contains "in sync"
expect_contains "1 blocks read in full"
finish
