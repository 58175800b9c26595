#!/bin/bash
# u32 root ids when hash tables live at a later pref than the rules that
# link to them (issue 38 item 7). The dump writes no root ids when the
# lists' roots are 800:, 801:... in pref order, so apply must make the
# lists in pref order even where a rule of an early list links to a table
# of a later one: the rule waits for the table rather than the table's
# list being made early. Checked on item 7's layout and on a seeded random
# family of layouts: dump -> flush -> apply gives tc's root ids, or diff
# names the difference (never "in sync" with other ids).
source "$(dirname "$0")/lib.sh"
make_ns

# The filters as `tc -j filter show` gives them, one a line, sorted: the
# handles carry the root ids; the order the kernel lists a pref's hash
# tables in (newest first) is no id and not compared.
filters() {
  tc -n "$NS" -j filter show dev v0 parent 1: | python3 -c '
import json, sys
for f in json.load(sys.stdin):
    if "options" in f: print(json.dumps(f, sort_keys=True))' | sort
}

# Item 7: pref 9's table 1:, linked by a rule its script put into pref 5's
# root (ht 800::); prefs 6 and 7 in between.
cat >"$TMP/item7.tc" <<'B'
qdisc add dev v0 root handle 1: htb
class add dev v0 parent 1: classid 1:1 htb rate 1mbit
filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 1.1.1.1/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 6 u32 match ip dst 1.1.1.2/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 7 u32 match ip dst 1.1.1.3/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 9 handle 1: u32 divisor 1
filter add dev v0 parent 1: protocol ip prio 9 u32 ht 1: match ip dst 1.1.1.4/32 classid 1:1
filter add dev v0 parent 1: protocol ip prio 9 u32 ht 800:: link 1: match ip src 10.0.0.0/8
B

# round_trip NAME: dump the namespace's state, delete the qdisc, apply the
# dump; the tc -j state (root ids in every handle) must come back, or diff
# must say the file and the kernel differ.
round_trip() {
  local name=$1
  filters >"$TMP/before.json"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/$name.yaml"
  t qdisc del dev v0 root
  # apply checks the kernel after its changes: where the order it can take
  # gives other roots than the dump declares, it fails saying so.
  local arc=0
  ts apply "$TMP/$name.yaml" >"$TMP/apply.out" 2>&1 || arc=$?
  if [ "$arc" = 0 ] || { [ "$arc" = 1 ] && grep -q "(u32 root table .* -> .*: at pref" "$TMP/apply.out"; }; then
    pass "$name: apply rc $arc"
  else
    fail "$name: apply rc $arc"
    sed 's/^/    /' "$TMP/apply.out"
  fi
  filters >"$TMP/after.json"
  if diff -u "$TMP/before.json" "$TMP/after.json" >"$TMP/diff.out"; then
    pass "$name: dump -> flush -> apply gives tc's root ids"
    expect_rc 0 ts diff "$TMP/$name.yaml"
    expect_contains "in sync"
  else
    # Other ids: acceptable only when diff says so.
    local rc=0
    ts diff "$TMP/$name.yaml" >"$TMP/diff2.out" 2>&1 || rc=$?
    if [ "$rc" = 2 ]; then
      pass "$name: other root ids, and diff names the difference"
    else
      fail "$name: other root ids after apply, diff rc $rc"
      sed 's/^/    /' "$TMP/$name.tc" "$TMP/$name.yaml"
      head -40 "$TMP/diff.out" | sed 's/^/    /'
    fi
  fi
  t qdisc del dev v0 root
}

echo "# item 7: a table of pref 9 linked from pref 5's root, prefs 6 and 7 between"
expect_rc 0 t -b "$TMP/item7.tc"
OUT=$(t filter show dev v0 parent 1:)
expect_contains "pref 9 u32 chain 0 fh 803: ht divisor 1"
round_trip item7
expect_rc 0 ts apply "$TMP/item7.yaml"
OUT=$(t filter show dev v0 parent 1:)
expect_contains "pref 6 u32 chain 0 fh 801: ht divisor 1"
expect_contains "pref 9 u32 chain 0 fh 803: ht divisor 1"
expect_contains "pref 5 u32 chain 0 fh 800::801 order 2049 key ht 800 bkt 0 link 1:"
t qdisc del dev v0 root

# A random layout: 3-5 lists at distinct prefs, made in a random order
# (each with a plain rule, or empty), some holding hash tables; then links
# from the roots of lists to tables of other lists (mostly later prefs),
# each added from a random list's prio (`ht 80N::` reaches any root).
gen_layout() {
  python3 - "$1" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1]))
prefs = sorted(r.sample(range(2, 20), r.randint(3, 5)))
made = prefs[:] if r.random() < 0.6 else r.sample(prefs, len(prefs))
print("qdisc add dev v0 root handle 1: htb")
print("class add dev v0 parent 1: classid 1:1 htb rate 1mbit")
root, tables, n = {}, [], 0
def ip():
    global n
    n += 1
    return "10.%d.%d.0/24" % (n // 200, n % 200)
for i, p in enumerate(made):
    root[p] = 0x800 + i
    pre = "filter add dev v0 parent 1: protocol ip prio %d" % p
    if r.random() < 0.25:
        print(pre + " u32")  # the list alone: it holds only what others add
    else:
        print(pre + " u32 match ip dst %s classid 1:1" % ip())
    for _ in range(r.choice([0, 0, 1, 2])):
        t = len(tables) + 1
        tables.append((t, p))
        print(pre + " handle %x: u32 divisor 1" % t)
        print(pre + " u32 ht %x: match ip dst %s classid 1:1" % (t, ip()))
for t, p in tables:
    for _ in range(r.choice([0, 1, 1, 2])):
        earlier = [q for q in prefs if q < p] or prefs
        src = r.choice(earlier if r.random() < 0.8 else prefs)
        by = r.choice(prefs)
        print("filter add dev v0 parent 1: protocol ip prio %d u32 ht %x:: link %x: match ip src %s"
              % (by, root[src], t, ip()))
PY
}

SEEDS=${U32_ROOT_SEEDS:-24}
for seed in $(seq 1 "$SEEDS"); do
  gen_layout "$seed" >"$TMP/rand$seed.tc"
  if ! t -b "$TMP/rand$seed.tc" >/dev/null 2>&1; then
    fail "rand$seed: tc -b refused the layout"
    sed 's/^/    /' "$TMP/rand$seed.tc"
    t qdisc del dev v0 root 2>/dev/null || true
    continue
  fi
  round_trip "rand$seed"
done
finish
