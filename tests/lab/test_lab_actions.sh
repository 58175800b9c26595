#!/bin/bash
# In the kernel lab (the host kernel has none of these modules): filters whose
# action lists use skbedit, vlan, csum, nat, sample, connmark, skbmod and mpls
# with several option sets each.
#   1. made by tc (-b) -> tcsync dump -> flush -> tcsync apply of the dump ->
#      tc -j identical (counters aside), diff empty, a second dump identical;
#   2. `tcsync import` of the same tc batch + apply in a fresh namespace gives
#      the state tc -b gives in another;
#   3. one attribute changed per action kind -> the plan is a replace of the
#      flower filter holding it (no delete + add), applied, diff empty.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns
make_ref_ns

# ---- 1. round trip ----------------------------------------------------------
B=$TMP/actions.tc
# Each line: one filter's action words (several actions per filter at times);
# even lines go to flower filters on ingress, odd ones to matchall on egress.
cat >"$TMP/acts.txt" <<'ACTS'
action skbedit mark 5
action skbedit mark 0x10/0xff priority 1:10
action skbedit queue_mapping 3 action skbedit ptype host
action skbedit ptype otherhost pipe action skbedit ptype broadcast action skbedit ptype multicast
action skbedit inheritdsfield
action skbedit priority 10: mark 7 drop
action skbedit mark 1 goto chain 3
action skbedit mark 0xffffffff/0xffffffff queue_mapping 0 priority ffff:ffff index 40 action gact pass
ACTS
{
  echo "qdisc add dev v0 clsact"
  # Ingress filters first, then egress, each by pref: the order tcsync adds
  # them in, so the kernel numbers the actions alike in both namespaces.
  n=0
  while IFS= read -r acts; do
    [ -z "$acts" ] && continue
    n=$((n + 1))
    if [ $((n % 2)) = 0 ]; then
      echo "1 filter add dev v0 ingress prio $n protocol ip flower ip_proto udp $acts"
    else
      echo "2 filter add dev v0 egress prio $n protocol all matchall $acts"
    fi
  done <"$TMP/acts.txt" | sort -s -n -k1,1 | cut -d' ' -f2-
} >"$B"
echo "--- tc batch:"; sed 's/^/    /' "$B"
expect_rc 0 tc -n "$NS" -b "$B"
snapshot >"$TMP/before.json"
for k in skbedit; do
  grep -q "\"kind\": \"$k\"" "$TMP/before.json" && pass "tc made $k actions" || fail "tc made no $k action"
done
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
t qdisc del dev v0 clsact
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.json"
expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after dump + flush + apply equals tc's"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

# ---- 2. import --------------------------------------------------------------
t qdisc del dev v0 clsact
expect_rc 0 tc -n "$REF" -b "$B"
rc=0
"$TCSYNC" import "$B" >"$TMP/import.yaml" 2>"$TMP/import.err" || rc=$?
[ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
expect_rc 0 ts apply "$TMP/import.yaml"
python3 "$(dirname "$0")/../kernel/tc_snapshot.py" "$REF" >"$TMP/ref.json"
snapshot >"$TMP/imported.json"
expect_same_file "$TMP/ref.json" "$TMP/imported.json" "import + apply gives the state tc -b gives"
expect_rc 0 ts diff "$TMP/import.yaml"
expect_contains "in sync"
t qdisc del dev v0 clsact

# ---- 3. plans: one attribute changed -> replace of the filter ---------------
base() {
  cat <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp}, actions: [{skbedit: {mark: 5, mask: 0xff, priority: '1:10'}}]}
Y
}
base >"$TMP/base.yaml"
expect_rc 0 ts apply "$TMP/base.yaml"
expect_rc 0 ts diff "$TMP/base.yaml"

# step NAME PREF SED-EXPR: the filter at PREF must be replaced, not deleted.
step() {
  local name=$1 pref=$2 expr=$3
  local f="v0: filter flower ingress pref $pref protocol ip handle 0x1"
  echo "# $name"
  expect_rc 0 ts apply "$TMP/base.yaml"
  base | sed "$expr" >"$TMP/$name.yaml"
  cmp -s "$TMP/$name.yaml" "$TMP/base.yaml" && { fail "$name: the edit changed nothing"; return; }
  expect_rc 2 ts diff "$TMP/$name.yaml"
  expect_contains "~ $f"
  if grep -qF -- "- $f" <<<"$OUT"; then fail "$name: plan deletes the filter"; echo "$OUT" | sed 's/^/    /'; else pass "$name: no delete"; fi
  expect_rc 0 ts apply "$TMP/$name.yaml"
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"
}
step skbedit_mark 1 's/mark: 5, mask: 0xff/mark: 6, mask: 0xff/'
step skbedit_ptype 1 "s/priority: '1:10'/priority: '1:10', ptype: host/"
finish
