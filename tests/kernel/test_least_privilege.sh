#!/bin/bash
# validate and offline diff (against a saved dump) need no privilege; apply
# needs CAP_NET_ADMIN (and nothing more) and says so when it lacks it.
source "$(dirname "$0")/lib.sh"
make_ns
F=$EXAMPLES/htb-shaping.yaml
expect_rc 0 ts apply "$F"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/live.yaml"
chmod 755 "$TMP"; chmod 644 "$TMP/live.yaml"
sed 's/rate: 300mbit/rate: 200mbit/' "$F" >"$TMP/changed.yaml"; chmod 644 "$TMP/changed.yaml"
nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all "$@"; }
expect_rc 0 nobody "$TCSYNC" validate "$F"
expect_rc 0 nobody "$TCSYNC" diff --against "$TMP/live.yaml" "$F"
expect_contains "in sync"
expect_rc 2 nobody "$TCSYNC" diff --against "$TMP/live.yaml" "$TMP/changed.yaml"
expect_contains "~ v0: class htb 1:10 parent 1:1  (rate 300mbit -> 200mbit"
# Apply without CAP_NET_ADMIN (root without capabilities, in the namespace).
expect_rc 1 ip netns exec "$NS" setpriv --inh-caps=-all --bounding-set=-all "$TCSYNC" apply "$TMP/changed.yaml"
expect_contains "tcsync: error: apply needs the CAP_NET_ADMIN capability (run it as root); nothing was changed"
expect_rc 0 ts diff "$F"
# Not root at all, outside the namespace (no v0 there): the capability is
# what is said, and alone (no "device 'v0' does not exist" first).
expect_rc 1 nobody "$TCSYNC" apply "$TMP/changed.yaml"
expect_contains "tcsync: error: apply needs the CAP_NET_ADMIN capability (run it as root); nothing was changed"
expect_not_contains "does not exist"
# Apply with CAP_NET_ADMIN alone (root's other capabilities dropped): it
# works; the kind probe, which needs a scratch namespace (CAP_SYS_ADMIN), is
# skipped and says so under -v.
printf 'version: 1\ndevices:\n  v1:\n    qdiscs: [{kind: pfifo, handle: "5:", limit: 100}]\n' >"$TMP/v1.yaml"
chmod 644 "$TMP/v1.yaml"
expect_rc 0 ip netns exec "$NS" setpriv --inh-caps=-all --bounding-set=-all,+net_admin "$TCSYNC" -v apply "$TMP/v1.yaml"
expect_contains "kinds not probed: no scratch network namespace (probing needs CAP_SYS_ADMIN)"
if grep -qx "applied 1 change" <<<"$OUT"; then pass "applied 1 change (singular)"; else fail "no 'applied 1 change' line"; fi
expect_rc 0 ts diff "$TMP/v1.yaml"
finish
