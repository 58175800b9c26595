#!/bin/bash
# apply verifies from the kernel's echoes (docs/verify.md): each object sent
# comes back as the kernel stored it and is compared with the file's, with
# no second full dump; and a request the kernel takes while storing
# something else is reported (exit 1).
source "$(dirname "$0")/lib.sh"
make_ns
# tcsync's own figures: "N steps by their echo (R of them read back), M
# without one[ (devices read again)]".
verify_line() { grep -F "tcsync: verify:" <<<"$OUT" || true; }

# 1. A tree and its rules from empty: every step verified by its echo.
python3 "$(dirname "$0")/gen_u32.py" 2000 >"$TMP/a.yaml"
expect_rc 0 ts -v apply "$TMP/a.yaml"
expect_contains "tcsync: verify: 2003 steps by their echo (0 of them read back), 0 without one"
expect_rc 0 ts diff "$TMP/a.yaml"

# 1b. Filter requests go in datagrams of at most 3584 bytes: the kernel
# builds each filter's notification (the echo) as large as the datagram
# that carried it (batch_sender.cpp kFilterDatagram). The 2000 rules went
# out in many sendmsgs, none larger; the state is the file's.
t qdisc del dev v0 root 2>/dev/null || true
t qdisc del dev v0 ingress 2>/dev/null || true
strace -f -e trace=sendmsg -o "$TMP/st" "$TCSYNC" --netns "$NS" -q apply "$TMP/a.yaml" >/dev/null 2>&1 || fail "apply under strace"
read -r n big max < <(awk '/sendmsg\(/ && / = [0-9]+$/ {n++; v=$NF+0; if (v>m) m=v; if (v>3584) b++} END {print n+0, b+0, m+0}' "$TMP/st")
if [ "$n" -ge 20 ] && [ "$big" -eq 0 ]; then pass "2003 steps in $n sendmsgs, the largest $max bytes (none over 3584)"
else fail "sendmsgs: $n, $big over 3584 bytes (largest $max)"; fi
expect_rc 0 ts diff "$TMP/a.yaml"

# 2. A change of 1% of the rules (their classid): u32 echoes a replaced rule
# as it was before (its change leaves the reported node on the old one), so
# each is read back with one get; still no dump.
python3 - "$TMP/a.yaml" >"$TMP/b.yaml" <<'PY'
import sys
for i, line in enumerate(open(sys.argv[1]).read().splitlines()):
    if "u32:" in line and i % 100 == 0: line = line.replace('"1:10"', '"1:20"')
    print(line)
PY
expect_rc 0 ts -v apply "$TMP/b.yaml"
expect_contains "tcsync: verify: 20 steps by their echo (20 of them read back), 0 without one"
expect_rc 0 ts diff "$TMP/b.yaml"
n=$(t filter show dev v0 | grep -c "flowid 1:20" || true)
[ "$n" = 20 ] && pass "20 rules classify to 1:20" || fail "$n rules classify to 1:20 (want 20)"

# 3. Where no echo tells: a chain add (the kernel notifies RTM_NEWCHAIN
# without the sender's NLM_F_ECHO), so the devices are read again.
cat >"$TMP/chain.yaml" <<'Y'
version: 1
devices:
  v1:
    qdiscs: [{kind: clsact}]
    chains: [{parent: ingress, chain: 5}]
Y
expect_rc 0 ts -v apply "$TMP/chain.yaml"
expect_contains "1 without one (devices read again)"
expect_rc 0 ts diff "$TMP/chain.yaml"

# 4. A mismatch only the kernel's answer shows. A rule's action that names
# the index of an action that exists already is bound to that one and its
# own parameters are dropped (mirred init: "exists && bind" returns at
# once): the kernel acknowledges the rule, but it redirects to lo, not v1.
# (v1 is not in the file: its rule and action 7 are not tcsync's to plan.)
t filter add dev v1 ingress pref 1 protocol ip u32 match u32 0 0 action mirred egress redirect dev lo index 7
cat >"$TMP/bind.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - parent: ingress
        pref: 10
        protocol: ip
        u32: {match: [{ip: {src: 10.0.0.0/8}}]}
        actions:
          - mirred: {direction: egress, action: redirect, dev: v1}
            index: 7
Y
expect_rc 1 ts -v apply "$TMP/bind.yaml"
expect_contains "tcsync: verify: 2 steps by their echo (0 of them read back), 0 without one"
expect_contains "after the apply the kernel still differs from the files"
expect_contains "~ v0: filter u32 ingress pref 10 protocol ip"
expect_contains "(mirred dev lo -> v1)"
# ... and it is so: the rule's action is the old one.
OUT=$(t filter show dev v0 ingress)
expect_contains "mirred (Egress Redirect to device lo)"
# --no-verify trusts the ACKs: exit 0 on the same state.
expect_rc 0 ts apply --no-verify "$TMP/bind.yaml"
finish
