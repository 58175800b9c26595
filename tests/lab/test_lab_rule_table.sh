#!/bin/bash
# In the kernel lab: flower rule tables. A table's first row is parsed in
# full and its later rows reuse that parse, setting only their own values
# (loader.cpp FilterRows); this checks against the kernel that the result is
# the rules themselves: bench/gen.py's flower set as a table applies to the
# state `tc -b` of the same rules gives, diff of the written-out form is in
# sync, one changed row is one replace; a table whose columns reach into the
# actions (police rate, gact control) and a MAC with a mask gives the state
# tc gives too; an error in a later row names its line and column and
# changes nothing.
source "$(dirname "$0")/../kernel/lib.sh"
GEN="$(dirname "$0")/../../bench/gen.py"

echo "# bench/gen.py flower, 3000 rules as a table"
make_ns
make_ref_ns
python3 "$GEN" flower 3000 "$TMP/fl" --change 1 --table
python3 "$GEN" flower 3000 "$TMP/fl-plain"
expect_rc 0 tc -n "$REF" -b "$TMP/fl.tc"
expect_rc 0 ts apply "$TMP/fl.yaml"
snapshot >"$TMP/mine.json"
NS=$REF snapshot >"$TMP/ref.json"
expect_same_file "$TMP/ref.json" "$TMP/mine.json" "flower table apply = tc -b state"
expect_rc 0 ts diff --deep "$TMP/fl-plain.yaml"
expect_contains "in sync"
expect_rc 2 ts diff "$TMP/fl.changed.yaml"
n=$(grep -c '^[~]' <<<"$OUT" || true)
[ "$n" = 30 ] && pass "30 changed rows, 30 replaces" || { fail "$n replaces (want 30)"; echo "$OUT" | head -5 | sed 's/^/    /'; }
grep -q '^[+-]' <<<"$OUT" && fail "the plan deletes or adds" || pass "nothing deleted or added"
ip netns del "$NS"
ip netns del "$REF"

echo "# columns in the actions"
make_ns
make_ref_ns
{
  echo "version: 1"
  echo "devices:"
  echo "  v0:"
  echo "    qdiscs: [{kind: clsact}]"
  echo "    filters:"
  echo "      - template: {parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: tcp}, actions: [{police: {burst: 10k}}, {gact: {}}]}"
  echo "        columns: [handle, flower.src_mac, flower.dst_port, actions.0.police.rate, actions.1.gact.control]"
  echo "        rows:"
  echo "          - 1 02:00:00:00:00:01 80 1mbit drop"
  echo "          - 2 02:00:00:00:01:00/40 443 2mbit pass"
  echo "          - 3 02:00:00:00:02:00/ff:ff:ff:ff:00:00 1000-2000 3mbit pipe"
} >"$TMP/act.yaml"
cat >"$TMP/act.tc" <<'B'
qdisc add dev v0 clsact
filter add dev v0 ingress pref 3 protocol ip handle 1 flower ip_proto tcp src_mac 02:00:00:00:00:01 dst_port 80 action police rate 1mbit burst 10k no_percpu action gact drop no_percpu
filter add dev v0 ingress pref 3 protocol ip handle 2 flower ip_proto tcp src_mac 02:00:00:00:01:00/40 dst_port 443 action police rate 2mbit burst 10k no_percpu action gact pass no_percpu
filter add dev v0 ingress pref 3 protocol ip handle 3 flower ip_proto tcp src_mac 02:00:00:00:02:00/ff:ff:ff:ff:00:00 dst_port 1000-2000 action police rate 3mbit burst 10k no_percpu action gact pipe no_percpu
B
expect_rc 0 tc -n "$REF" -b "$TMP/act.tc"
expect_rc 0 ts apply "$TMP/act.yaml"
TC_SNAPSHOT_DROP=index snapshot >"$TMP/mine.json"
NS=$REF TC_SNAPSHOT_DROP=index snapshot >"$TMP/ref.json"
expect_same_file "$TMP/ref.json" "$TMP/mine.json" "action columns: apply = tc -b state"
expect_rc 0 ts diff --deep "$TMP/act.yaml"
expect_contains "in sync"

echo "# an error in a later row"
snapshot >"$TMP/before.json"
sed -i 's/ 3mbit pipe/ 0 pipe/' "$TMP/act.yaml"
expect_rc 1 ts apply "$TMP/act.yaml"
# `          - 3 02:00:00:00:02:00/ff:ff:ff:ff:00:00 1000-2000 0 pipe`: the rate at column 61.
expect_contains "act.yaml:11:61: error: police rate must be more than 0"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "a bad row changes nothing"
finish
