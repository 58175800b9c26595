#!/bin/bash
# Ownership scope (`own:`) on the host kernel (htb, clsact, u32): a file owns
# ingress prefs 100-199 and the htb tree 1: of v0, beside another
# controller's clsact filters at ingress prefs 1-2 and egress pref 5.
# Foreign filters outside the scope are left alone (tc -j compared before
# and after) and reported by diff as a comment, not a difference; a foreign
# filter inside the scope is removed and a foreign change to an owned class
# repaired, by apply and by watch; a declared object outside the scope is a
# FILE:LINE:COL error; a plan that would replace a foreign qdisc holding
# foreign objects, and --atomic with a scope, are refused and change nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/watch_lib.sh"
make_ns

# The other controller's objects on v0: clsact, ingress prefs 1-2 (u32 with
# an action-free classid), egress pref 5.
t qdisc add dev v0 clsact
t filter add dev v0 ingress pref 1 protocol ip u32 match ip src 10.1.0.0/16 classid 1:1
t filter add dev v0 ingress pref 2 protocol ip u32 match ip src 10.2.0.0/16 classid 1:2
t filter add dev v0 egress pref 5 protocol ip u32 match ip dst 10.5.0.0/16 classid 1:5

# The foreign part of v0 as tc -j shows it: the filters outside prefs
# 100-199 at the hooks, and no class or qdisc but the clsact.
foreign() {
  for side in ingress egress; do
    tc -n "$NS" -j filter show dev v0 "$side" | python3 -c '
import json, sys
drop = {"stats", "bytes", "packets"}
print(json.dumps([{k: v for k, v in f.items() if k not in drop} for f in json.load(sys.stdin) if not 100 <= f.get("pref", 0) <= 199], sort_keys=True))'
  done
  tc -n "$NS" -j qdisc show dev v0 clsact
}
foreign >"$TMP/foreign.json"

site() {  # site RATE [EXTRA-FILTER]: the scoped file
  cat <<YAML
version: 1
devices:
  v0:
    own:
      - {parent: ingress, prefs: 100-199}
      - {qdisc: "1:"}
    qdiscs:
      - {kind: clsact}
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:10", rate: $1, ceil: 20mbit}
      - {classid: "1:30", rate: 1mbit, ceil: 20mbit}
    filters:
      - {parent: ingress, pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
      - {parent: "1:", pref: 10, protocol: ip, u32: {match: [{ip: {dport: 22}}]}, classid: "1:10"}
${2:-}
YAML
}
F=$TMP/site.yaml
site 10mbit >"$F"

echo "# diff: the plan, and the foreign filters as a comment"
expect_rc 2 ts diff "$F"
expect_contains "# v0: 3 filters outside this file's scope left alone (ingress prefs 1-2, egress pref 5)"
expect_contains "+ v0: filter u32 ingress pref 100 protocol ip"
grep -q '^- ' <<<"$OUT" && fail "the plan deletes something" || pass "the plan deletes nothing"

echo "# apply: the owned part made, the foreign part untouched"
expect_rc 0 ts apply "$F"
foreign >"$TMP/after.json"
expect_same_file "$TMP/foreign.json" "$TMP/after.json" "foreign filters and clsact (tc -j) unchanged by apply"
expect_rc 0 ts diff "$F"
expect_contains "in sync"
expect_contains "# v0: 3 filters outside this file's scope left alone"
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"
expect_rc 0 ts --format json diff "$F"
expect_contains '"outside_scope": ["v0: 3 filters outside this file'"'"'s scope left alone (ingress prefs 1-2, egress pref 5)"]'

echo "# a foreign filter outside the scope is no difference"
t filter add dev v0 ingress pref 3 protocol ip u32 match ip src 10.3.0.0/16 classid 1:3
expect_rc 0 ts diff "$F"
expect_contains "# v0: 4 filters outside this file's scope left alone (ingress prefs 1-3, egress pref 5)"
t filter del dev v0 ingress pref 3

echo "# a foreign filter inside the scope, and one in the owned tree: removed"
t filter add dev v0 ingress pref 150 protocol ip u32 match ip src 10.150.0.0/16 classid 1:3
t filter add dev v0 parent 1: pref 20 protocol ip u32 match ip dport 80 0xffff classid 1:30
expect_rc 2 ts diff "$F"
expect_contains "- v0: filters u32 ingress pref 150 protocol ip (all 1)  (not in the file)"
expect_contains "- v0: filters u32 1: pref 20 protocol ip (all 1)  (not in the file)"
expect_rc 0 ts apply "$F"
OUT=$(t filter show dev v0 ingress)
grep -q "pref 150" <<<"$OUT" && fail "the foreign filter at pref 150 is still there" || pass "the foreign filter at pref 150 is gone"
foreign >"$TMP/after.json"
expect_same_file "$TMP/foreign.json" "$TMP/after.json" "foreign filters (tc -j) unchanged by the removal"

echo "# a foreign change to an owned class: repaired"
t class change dev v0 parent 1: classid 1:10 htb rate 5mbit ceil 20mbit
expect_rc 2 ts diff "$F"
expect_contains "~ v0: class htb 1:10 parent 1:  (rate 5mbit -> 10mbit)"
expect_rc 0 ts apply "$F"
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"
snapshot >"$TMP/all.json"

echo "# a step the kernel refuses: rolled back inside the scope, the foreign filters as they were"
site 10mbit '      - {parent: ingress, pref: 101, protocol: ip, u32: {match: [{ip: {dport: 25}}], indev: nosuch0}}' |
  sed 's/rate: 10mbit, ceil/rate: 11mbit, ceil/' >"$TMP/reject.yaml"
expect_rc 1 ts apply "$TMP/reject.yaml"
expect_contains "the kernel is as it was before this apply"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j after the rollback equals before"

echo "# dump shows the whole device; applied as it is it changes nothing, with 'own' added its foreign rules are errors"
expect_rc 0 ts dump --dev v0
echo "$OUT" >"$TMP/dump.yaml"
expect_rc 0 ts apply "$TMP/dump.yaml"
expect_contains "in sync"
sed 's/^  v0:$/  v0:\n    own: [{parent: ingress, prefs: 100-199}, {qdisc: "1:"}]/' "$TMP/dump.yaml" >"$TMP/dump-own.yaml"
expect_rc 1 ts apply "$TMP/dump-own.yaml"
expect_contains "dump-own.yaml:13:9: error: filter u32 ingress pref 1 protocol ip handle ::800 is outside this file's scope"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j unchanged by the dump and the scoped dump"

echo "# dump --scope FILE: only the owned part, with its own:; applied back, nothing changes"
expect_rc 0 ts dump --scope "$F"
echo "$OUT" >"$TMP/scoped-dump.yaml"
expect_contains '- {parent: ingress, prefs: "100-199"}'
expect_contains '- {kind: clsact}'
expect_contains 'pref: 100, protocol: ip'
grep -qE 'pref: (1|2|5),' "$TMP/scoped-dump.yaml" && fail "the scoped dump holds foreign rules" || pass "the scoped dump leaves the foreign rules out"
expect_rc 0 ts apply "$TMP/scoped-dump.yaml"
expect_contains "in sync"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j unchanged by applying the scoped dump"

echo "# a declared filter outside the scope: FILE:LINE:COL error, nothing changed"
site 10mbit '      - {parent: ingress, pref: 50, protocol: ip, u32: {match: [{ip: {dport: 25}}]}}' >"$TMP/out.yaml"
expect_rc 1 ts apply "$TMP/out.yaml"
expect_contains "out.yaml:16:9: error: filter u32 ingress pref 50 protocol ip handle ::1 is outside this file's scope (v0 owns ingress prefs 100-199, qdisc 1: and below: 'own' at $TMP/out.yaml:4:5)"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j unchanged after the loader error"

echo "# --atomic with a scope: refused, nothing changed"
expect_rc 1 ts apply --atomic "$F"
expect_contains "error: --atomic and 'own' do not mix on v0"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j unchanged after --atomic is refused"

echo "# apply --confirm, not confirmed: the way back is the owned part only"
# The owned class goes to 15mbit unconfirmed; meanwhile the other controller
# adds a filter outside the scope. The revert brings 10mbit back and leaves
# that filter alone.
export TCSYNC_RUN_DIR=$TMP/run  # pending files of this test only
site 15mbit >"$TMP/c15.yaml"
expect_rc 0 ts apply --confirm 2 "$TMP/c15.yaml"
t filter add dev v0 ingress pref 3 protocol ip u32 match ip src 10.3.0.0/16 classid 1:3
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 15Mbit ceil 20Mbit"
for _ in $(seq 60); do
  t class show dev v0 | grep -c "1:10 root prio 0 rate 10Mbit" >/dev/null && break
  sleep 0.2
done
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"
t filter show dev v0 ingress | grep -c "pref 3 " >/dev/null && pass "the revert left the foreign filter at pref 3" ||
  { fail "the revert removed the foreign filter at pref 3"; cat "$TMP"/run/*.log; }
t filter del dev v0 ingress pref 3
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j as before the unconfirmed apply"

echo "# a root qdisc in the way that holds foreign objects: refused, nothing changed"
t qdisc add dev v1 root handle 5: htb
t class add dev v1 parent 5: classid 5:1 htb rate 1mbit
t filter add dev v1 parent 5: pref 1 protocol ip u32 match ip dst 10.9.0.0/16 classid 5:1
snapshot >"$TMP/all.json"
cat >"$TMP/v1.yaml" <<'YAML'
version: 1
devices:
  v1:
    own: [{qdisc: "1:"}]
    qdiscs: [{kind: htb, handle: "1:"}]
YAML
expect_rc 1 ts apply "$TMP/v1.yaml"
expect_contains "v1.yaml:5:14: error: qdisc htb 1: root on v1 needs the place of qdisc htb 5: root (handle 5: -> 1:), which is outside this file's scope (qdisc 1: and below) and holds 1 class, 1 filter outside it: refused, nothing changed"
expect_rc 1 ts diff "$TMP/v1.yaml"
snapshot >"$TMP/now.json"
expect_same_file "$TMP/all.json" "$TMP/now.json" "tc -j unchanged after the refusal"

echo "# watch: a foreign change outside the scope is quiet, inside it is drift and repaired"
start_watch -v "$F"
wait_event started
# One tc batch: both changes reach watch together, as two tc runs a few
# milliseconds apart do on a loaded host.
t -b - <<'TC'
filter add dev v0 ingress pref 4 protocol ip u32 match ip src 10.4.0.0/16 classid 1:4
filter add dev v0 ingress pref 120 protocol ip u32 match ip src 10.120.0.0/16 classid 1:3
TC
wait_event drift v0 5 'pref 120'
[[ $EV == *'pref 4 '* ]] && fail "the drift names the foreign filter at pref 4: $EV" || pass "the drift leaves pref 4 out"
wait_event repaired v0
t class change dev v0 parent 1: classid 1:10 htb rate 5mbit ceil 20mbit
wait_event drift v0 5 '(rate 5mbit -> 10mbit)'
wait_event repaired v0
sleep 0.3
OUT=$(t filter show dev v0 ingress)
grep -q "pref 120" <<<"$OUT" && fail "watch left the foreign filter at pref 120" || pass "watch removed the foreign filter at pref 120"
grep -q "pref 4 " <<<"$OUT" && pass "watch left the foreign filter at pref 4" || fail "watch removed the foreign filter at pref 4"
t filter del dev v0 ingress pref 4
foreign >"$TMP/after.json"
expect_same_file "$TMP/foreign.json" "$TMP/after.json" "foreign filters (tc -j) unchanged under watch"
OUT=$(t class show dev v0)
expect_contains "class htb 1:10 root prio 0 rate 10Mbit ceil 20Mbit"
grep -q "a change left alone, outside the files' scope" "$TMP/watch.err" && pass "watch -v counts the change outside the scope" ||
  { fail "watch -v says nothing of the change outside the scope"; sed 's/^/    /' "$TMP/watch.err"; }
[ "$(grep -c '"event":"drift"' "$EVENTS")" = 2 ] && pass "two drift events (the pref 4 filter was none)" || { fail "drift events: $(grep -c '"event":"drift"' "$EVENTS") (want 2)"; sed 's/^/    /' "$EVENTS"; }
stop_watch

[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
