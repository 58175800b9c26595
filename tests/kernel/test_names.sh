#!/bin/bash
# Rule names kept in the kernel (src/model/name_cookie.h, tcsync.yaml(5)
# FILTERS): u32 + mirred rules with short and long names are applied; tc
# shows each name's cookie bytes on the action that holds it; `dump` without
# the file prints the names (a long one as PREFIX~HASH) and no cookie; the
# namespace is flushed and the dump applied: the second dump is the first
# and tc's state is the same; `stats` with no file names the rules; a
# rename, and a name the file drops, are diffs (exit 2) that apply fixes;
# a state made by tc alone dumps and stats with no names, and a name
# cookie tc sets reads as a name.
source "$(dirname "$0")/lib.sh"
make_ns 4

# The cookie bytes of a name as tc prints them (hex), computed here apart
# from tcsync: "tcn" 1 NAME, or "tcn" 2, 8 bytes, FNV-1a 32 of the whole name.
cookie_of() {
  python3 - "$1" <<'EOF'
import sys
n = sys.argv[1].encode()
if len(n) <= 12:
    print((b"tcn\x01" + n).hex())
else:
    h = 0x811c9dc5
    for c in n:
        h = ((h ^ c) * 0x01000193) & 0xffffffff
    print((b"tcn\x02" + n[:8] + h.to_bytes(4, "big")).hex())
EOF
}
LONG=web-frontend-eu-1
LONG_COOKIE=$(cookie_of "$LONG")
LONG_SPELLED="web-fron~${LONG_COOKIE: -8}"

base() {
  cat <<EOF
version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
      - {kind: clsact}
    classes:
      - {classid: "1:1", rate: 1gbit}
      - {classid: "1:10", parent: "1:1", rate: 100mbit}
      - {classid: "1:30", parent: "1:1", rate: 100mbit}
    filters:
      - name: udp-5001
        parent: "1:"
        pref: 10
        protocol: ip
        u32: {match: [{ip: {protocol: 17, dport: 5001}}]}
        classid: "1:10"
        actions:
          - mirred: {direction: egress, action: mirror, dev: v2}
      - name: classid-only-rule
        parent: "1:"
        pref: 20
        protocol: ip
        u32: {match: [{ip: {protocol: 17, dport: 5003}}]}
        classid: "1:10"
      - name: $LONG
        parent: ingress
        pref: 10
        protocol: ip
        u32: {match: [{ip: {protocol: 17, dport: 5002}}]}
        actions:
          - mirred: {direction: egress, action: mirror, dev: v2}
      # Action 9 is shared: shared-a keeps its name on its second action,
      # shared-b has no action of its own to keep one on.
      - {name: shared-a, parent: ingress, pref: 20, protocol: ip, u32: {match: [{ip: {protocol: 6}}]},
         actions: [{mirred: {direction: egress, action: mirror, dev: v2}, index: 9},
                   {mirred: {direction: egress, action: redirect, dev: v3}}]}
      - {name: shared-b, parent: ingress, pref: 30, protocol: ip, u32: {match: [{ip: {protocol: 1}}]},
         actions: [{mirred: {direction: egress, action: mirror, dev: v2}, index: 9}]}
EOF
}
base >"$TMP/base.yaml"
cp "$TMP/base.yaml" "$TMP/names.yaml"

echo "# validate says once which name the kernel keeps abbreviated"
expect_rc 0 ts validate "$TMP/names.yaml"
expect_contains "warning: name \"$LONG\" is kept in the kernel as \"$LONG_SPELLED\""
if grep -q "classid-only-rule" <<<"$OUT"; then fail "a rule with no action is warned about"; else pass "a rule with no action: nothing said"; fi

echo "# apply (verified), and tc shows the cookies"
expect_rc 0 ts apply "$TMP/names.yaml"
expect_rc 0 ts diff "$TMP/names.yaml"
expect_contains "in sync"
OUT=$(t -j filter show dev v0 parent 1:)
expect_contains "\"cookie\":\"$(cookie_of udp-5001)\""
OUT=$(t -j filter show dev v0 ingress)
expect_contains "\"cookie\":\"$LONG_COOKIE\""
expect_contains "\"cookie\":\"$(cookie_of shared-a)\""
n=$(python3 -c '
import json, sys
for f in json.load(sys.stdin):
    for a in f.get("options", {}).get("actions", []):
        if "cookie" in a: print(f["pref"], a["order"], a["index"], a["cookie"])' <<<"$OUT")
echo "$n" | sed 's/^/    /'
[ "$(grep -c . <<<"$n")" = 2 ] && pass "two ingress cookies" || fail "two ingress cookies"
grep -q "^20 2 " <<<"$n" && pass "shared-a: the name on action 2" || fail "shared-a: the name on action 2"
grep -q " 9 " <<<"$n" && fail "a cookie on the shared action" || pass "the shared action has no cookie"
grep -q "^30 " <<<"$n" && fail "shared-b has a cookie" || pass "shared-b keeps no name"

echo "# dump without the file prints the names"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump1.yaml"
sed 's/^/    /' "$TMP/dump1.yaml"
expect_contains "name: udp-5001"
expect_contains "name: $LONG_SPELLED"
expect_contains "name: shared-a"
for absent in classid-only-rule shared-b cookie; do
  if grep -qF "$absent" "$TMP/dump1.yaml"; then fail "dump has $absent"; else pass "dump lacks $absent"; fi
done

echo "# flush, apply the dump: the same dump, the same tc state"
snapshot >"$TMP/before.json"
t qdisc del dev v0 root
t qdisc del dev v0 clsact
expect_rc 0 ts apply "$TMP/dump1.yaml"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump2.yaml"
expect_same_file "$TMP/dump1.yaml" "$TMP/dump2.yaml" "dump -> apply -> dump is exact" || true
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after dump + flush + apply equals the file's" || true
# The file's long name equals the kernel's abbreviation.
expect_rc 0 ts diff "$TMP/names.yaml"
expect_contains "in sync"

echo "# stats with no file names the rules by the kernel's names"
expect_rc 0 ts stats
expect_contains "\"udp-5001\" -> 1:10"
expect_contains "\"$LONG_SPELLED\""
expect_contains "\"shared-a\""
expect_rc 0 ts stats --format json
names=$(python3 -c '
import json, sys
r = json.load(sys.stdin)
print(" ".join(sorted(o["name"] for o in r["undeclared"] if o.get("name"))))' <<<"$OUT")
[ "$names" = "shared-a udp-5001 $LONG_SPELLED" ] && pass "json names: $names" || fail "json names: '$names'"
expect_rc 0 ts stats --format prometheus
expect_contains "tcsync_filter_packets_total{dev=\"v0\",kind=\"u32\",name=\"udp-5001\""
expect_contains "name=\"$LONG_SPELLED\""
# With the file, its full name.
expect_rc 0 ts stats "$TMP/names.yaml"
expect_contains "\"$LONG\""

echo "# a rename is a change; so is a name the file drops"
step rename 's/name: udp-5001/name: udp-five/' "~ v0: filter u32 1: pref 10 protocol ip" 'name "udp-5001" -> "udp-five"' "!+ v0" "!- v0"
expect_rc 0 ts dump
expect_contains "name: udp-five"
sed 's/- name: udp-5001$/-/' "$TMP/base.yaml" >"$TMP/unnamed.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 2 ts diff "$TMP/unnamed.yaml"
expect_contains 'name "udp-5001" -> (none)'
expect_rc 0 ts apply "$TMP/unnamed.yaml"
expect_rc 0 ts diff "$TMP/unnamed.yaml"
OUT=$(t -j filter show dev v0 parent 1:)
if grep -q cookie <<<"$OUT"; then fail "the dropped name's cookie is gone"; else pass "the dropped name's cookie is gone"; fi

echo "# a state made by tc alone: no names, and a name cookie tc sets is a name"
t qdisc del dev v0 root
t qdisc del dev v0 clsact
t qdisc add dev v0 clsact
t filter add dev v0 ingress pref 10 protocol ip u32 match ip dport 5002 0xffff action mirred egress mirror dev v2
t filter add dev v0 ingress pref 20 protocol ip u32 match ip dport 5003 0xffff action mirred egress mirror dev v2 cookie 0a0b
expect_rc 0 ts dump
echo "$OUT" >"$TMP/tc.yaml"
if grep -q "name:" "$TMP/tc.yaml"; then fail "a tc state dumps names"; else pass "a tc state dumps no names"; fi
expect_contains 'cookie: "0a0b"'
expect_rc 0 ts stats
expect_contains "filter u32 ingress pref 10 protocol ip handle ::800"
if grep -q '"' <<<"$OUT"; then fail "stats of a tc state names a rule"; else pass "stats of a tc state: rules by identity"; fi
expect_rc 0 ts stats --format json
expect_contains '"undeclared"'
if grep -q '"name"' <<<"$OUT"; then fail "json of a tc state has names"; else pass "json of a tc state: no names"; fi
t filter add dev v0 ingress pref 30 protocol ip u32 match ip dport 5004 0xffff action mirred egress mirror dev v2 cookie "$(cookie_of by-tc)"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/by-tc.yaml"
expect_contains "name: by-tc"
expect_rc 0 ts apply "$TMP/by-tc.yaml"
expect_rc 0 ts diff "$TMP/by-tc.yaml"

finish
