#!/bin/bash
# The action table (top-level `actions:`) with mirred, the one action kind
# this host's kernel has: tc-made table actions and shared ones survive
# dump -> flush -> apply unchanged (reference counts too), a table action's
# option is one in-place replace, an action dropped from the file goes once
# nothing binds it, one bound elsewhere stays, and a failed apply rolls the
# table back.
source "$(dirname "$0")/lib.sh"
make_ns 4

# The action table as tc reports it, with ref/bind (they tell a table action,
# refcnt > bindcnt, from a filter's own one); the kernel's number of an
# action one filter owns (ref = bind = 1) is its bookkeeping, masked.
actions() {
  tc -n "$NS" -j actions ls action mirred | python3 -c '
import json, sys
acts = [a for x in json.load(sys.stdin) for a in x.get("actions", [])]
drop = {"order", "installed", "last_used", "first_used", "stats", "not_in_hw", "used_hw_stats"}
out = []
for a in acts:
    a = {k: v for k, v in a.items() if k not in drop}
    if a.get("ref") == 1 and a.get("bind") == 1:
        a["index"] = "private"
    out.append(json.dumps(a, sort_keys=True))
print("\n".join(sorted(out)))'
}
rule() { echo "protocol all u32 match u32 0 0"; }

t qdisc add dev v0 clsact
t actions add action mirred egress redirect dev v1 index 7
t actions add action mirred egress mirror dev v1 index 8        # in the table, bound by nothing
t filter add dev v0 ingress pref 1 $(rule) action mirred index 7
t filter add dev v0 ingress pref 2 $(rule) action mirred index 7
t filter add dev v0 ingress pref 3 $(rule) action mirred egress mirror dev v1 index 20   # shared, no table
t filter add dev v0 ingress pref 4 $(rule) action mirred index 20
t filter add dev v0 ingress pref 5 $(rule) action mirred egress redirect dev v1          # its own
snapshot >"$TMP/before.txt"
actions >"$TMP/before.act"
grep -q '"bind": 2, .*"index": 7, .*"ref": 3' "$TMP/before.act" && pass "tc: table action 7 has ref 3, bind 2" ||
  { fail "tc's counts for index 7"; cat "$TMP/before.act"; }

# The dump: the table holds 7 and 8, filters refer to 7, the shared 20 keeps
# its index on both rules, the single-use action prints none.
ts dump --dev v0 >"$TMP/dump.yaml"
OUT=$(cat "$TMP/dump.yaml")
expect_contains "actions:"
expect_contains "  - {mirred: {action: redirect, dev: v1, control: stolen}, index: 7, percpu_stats: true}"
expect_contains "  - {mirred: {action: mirror, dev: v1, control: pipe}, index: 8, percpu_stats: true}"
n=$(grep -c 'ref: mirred/7' "$TMP/dump.yaml" || true)
[ "$n" = 2 ] && pass "both rules of action 7 say ref: mirred/7" || fail "ref: mirred/7 on $n rules (want 2)"
n=$(grep -c 'index: 20' "$TMP/dump.yaml" || true)
[ "$n" = 2 ] && pass "the shared action prints its index on both rules" || fail "index: 20 on $n rules (want 2)"
n=$(grep -c 'index: ' "$TMP/dump.yaml" || true)
[ "$n" = 4 ] && pass "the single-use action prints no index" || { fail "$n indexes printed (want 4: 7, 8, 20, 20)"; cat "$TMP/dump.yaml"; }
expect_rc 0 ts diff "$TMP/dump.yaml"

# Flush filters and actions; apply the dump; tc sees the same.
t qdisc del dev v0 clsact
flush_actions mirred
[ -z "$(tc -n "$NS" actions ls action mirred | grep index || true)" ] && pass "flushed" || fail "actions left after flush"
expect_rc 0 ts apply "$TMP/dump.yaml"
expect_contains "+ action mirred index 7"
snapshot >"$TMP/after.txt"
actions >"$TMP/after.act"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "filters equal after dump -> flush -> apply"
expect_same_file "$TMP/before.act" "$TMP/after.act" "action table equal (ref/bind too) after dump -> flush -> apply"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
cp "$TMP/dump.yaml" "$TMP/base.yaml"

# A table action's option: one replace of the action, no filter step.
sed 's/action: redirect, dev: v1, control: stolen}, index: 7/action: mirror, dev: v1, control: pipe}, index: 7/' \
  "$TMP/base.yaml" >"$TMP/opt.yaml"
expect_rc 2 ts diff "$TMP/opt.yaml"
[ "$(grep -c '^[-+~] ' <<<"$OUT")" = 1 ] && pass "one step" || fail "more than one step"
expect_contains "~ action mirred index 7  (action redirect -> mirror, control stolen -> pipe)"
expect_rc 0 ts apply "$TMP/opt.yaml"
OUT=$(t actions get action mirred index 7)
expect_contains "Egress Mirror to device v1) pipe"
expect_contains "ref 3 bind 2"
expect_rc 0 ts diff "$TMP/opt.yaml"

# An unbound table action dropped from the file is deleted.
grep -v 'index: 8' "$TMP/opt.yaml" >"$TMP/no8.yaml"
expect_rc 2 ts diff "$TMP/no8.yaml"
expect_contains "- action mirred index 8  (not in the file)"
expect_rc 0 ts apply "$TMP/no8.yaml"
OUT=$(t actions ls action mirred)
grep -q "index 8 " <<<"$OUT" && fail "action 8 still there" || pass "action 8 deleted"
# Every table action is bound by a dumped rule now: dump takes them from the
# filter dump (the table is only listed, tersely); the file is the same.
ts dump --dev v0 >"$TMP/dump2.yaml"
OUT=$(cat "$TMP/dump2.yaml")
expect_contains "  - {mirred: {action: mirror, dev: v1, control: pipe}, index: 7, percpu_stats: true}"
n=$(grep -c 'ref: mirred/7' "$TMP/dump2.yaml" || true)
[ "$n" = 2 ] && pass "bound table action: both rules say ref: mirred/7" || { fail "ref: mirred/7 on $n rules (want 2)"; cat "$TMP/dump2.yaml"; }
expect_rc 0 ts diff "$TMP/dump2.yaml"
expect_contains "in sync"

# Action 7 and its rules dropped: the rules go first, the action last.
grep -v 'index: 7\|ref: mirred/7' "$TMP/no8.yaml" >"$TMP/no7.yaml"
expect_rc 2 ts diff "$TMP/no7.yaml"
last=$(grep '^[-+~] ' <<<"$OUT" | tail -1)
[ "$last" = "- action mirred index 7  (not in the file)" ] && pass "the action is deleted after its rules" ||
  { fail "last step: $last"; echo "$OUT"; }
expect_rc 0 ts apply "$TMP/no7.yaml"
OUT=$(t actions ls action mirred)
grep -q "index 7 " <<<"$OUT" && fail "action 7 still there" || pass "action 7 deleted"
expect_rc 0 ts diff "$TMP/no7.yaml"

# A table action the file does not declare, bound by a rule on a device the
# file leaves alone, stays (the kernel would refuse: EPERM).
t actions add action mirred egress redirect dev v3 index 9
t qdisc add dev v2 clsact
t filter add dev v2 ingress pref 1 $(rule) action mirred index 9
expect_rc 0 ts diff "$TMP/no7.yaml"
expect_contains "in sync"
# A dump of every device lists 9, which no v0 rule binds: the table is read in full.
OUT=$(ts dump)
expect_contains "  - {mirred: {action: redirect, dev: v3, control: stolen}, index: 9, percpu_stats: true}"
# A dump of v0 alone, whose rules bind no table action now (20 is shared
# by two rules, in no table), says nothing of the table: the namespace's,
# not v0's. Applied, that file leaves the table alone.
ts dump --dev v0 >"$TMP/v0.yaml"
OUT=$(cat "$TMP/v0.yaml")
grep -q '^actions:' "$TMP/v0.yaml" && fail "dump --dev v0 prints the table" || pass "dump --dev v0 prints no table"
expect_not_contains "index: 9,"
expect_contains "index: 20"
expect_rc 0 ts diff "$TMP/v0.yaml"
actions >"$TMP/v0-before.act"
expect_rc 0 ts apply "$TMP/v0.yaml"
actions >"$TMP/v0-after.act"
expect_same_file "$TMP/v0-before.act" "$TMP/v0-after.act" "dump --dev v0 applied: the table untouched (9 stays)"
# ... and once nothing binds it, it goes.
t qdisc del dev v2 clsact
# (the kernel unbinds after an RCU grace period: wait for bind 0)
for i in $(seq 50); do
  t -j actions get action mirred index 9 | grep -c '"bind":0' >/dev/null && break
  sleep 0.1
done
expect_rc 2 ts diff "$TMP/no7.yaml"
expect_contains "- action mirred index 9  (not in the file)"
expect_rc 0 ts apply "$TMP/no7.yaml"

# A failed apply rolls the table back: a replace and a create that landed
# are undone when a later rule is refused.
t actions add action mirred egress redirect dev v1 index 30
cat "$TMP/no7.yaml" >"$TMP/good.yaml"
sed -i 's/^actions:/actions:\n  - {mirred: {action: redirect, dev: v1}, index: 30}/' "$TMP/good.yaml"
grep -q "^actions:" "$TMP/good.yaml" || sed -i 's/^devices:/actions:\n  - {mirred: {action: redirect, dev: v1}, index: 30}\ndevices:/' "$TMP/good.yaml"
expect_rc 0 ts apply "$TMP/good.yaml"
snapshot >"$TMP/rb-before.txt"
actions >"$TMP/rb-before.act"
sed 's/{mirred: {action: redirect, dev: v1}, index: 30}/{mirred: {action: mirror, dev: v1}, index: 30}\n  - {mirred: {action: mirror, dev: v3}, index: 31}/' \
  "$TMP/good.yaml" >"$TMP/bad.yaml"
cat >>"$TMP/bad.yaml" <<'Y'
      - {parent: ingress, pref: 9, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}], indev: nosuch0}, actions: [{ref: mirred/31}]}
Y
expect_rc 2 ts diff "$TMP/bad.yaml"
expect_contains "~ action mirred index 30"
expect_contains "+ action mirred index 31"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "the kernel is as it was before this apply"
snapshot >"$TMP/rb-after.txt"
actions >"$TMP/rb-after.act"
expect_same_file "$TMP/rb-before.txt" "$TMP/rb-after.txt" "rollback: filters as before"
expect_same_file "$TMP/rb-before.act" "$TMP/rb-after.act" "rollback: action table as before (31 gone, 30 redirect again)"
finish
