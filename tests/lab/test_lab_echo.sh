#!/bin/bash
# In the kernel lab: apply verifies from the kernel's echoes (docs/verify.md)
# for kinds the host lacks: the action table (RTM_NEWACTION echoes), flower
# and matchall rules, an htb tree with fq_codel leaves, a 1% change, and
# --atomic (the spare slot, then the switch rule's replace). Every step is
# verified by its echo: no dump after the apply ("0 without one"); but a
# device whose requests are most of it is read back whole (sections 4, 5).
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
verified() { expect_contains "$1 steps by their echo ($2 of them read back), 0 without one"; }

# 1. tc-made state -> dump -> flush -> apply back, verified by echoes.
t qdisc add dev v0 clsact
t actions add action gact drop index 5
t actions add action police rate 1mbit burst 10k conform-exceed drop/pipe index 6
t filter add dev v0 ingress pref 1 protocol ip flower dst_ip 10.0.0.0/8 action gact index 5
t filter add dev v0 ingress pref 2 protocol all matchall action police index 6 action gact index 5
t qdisc add dev v1 root handle 1: htb default 10
t class add dev v1 parent 1: classid 1:10 htb rate 10mbit
t class add dev v1 parent 1: classid 1:20 htb rate 20mbit ceil 40mbit
t qdisc add dev v1 parent 1:10 handle 10: fq_codel
t qdisc add dev v1 parent 1:20 handle 20: fq_codel target 2ms
# (fq_codel's flow classes, and their filter lists, come and go with the
# packets queued: left out.)
snapshot | grep -v "class fq_codel\|\"parent [12]0:[0-9a-f]" >"$TMP/before.txt"
ts dump >"$TMP/dump.yaml"
t qdisc del dev v0 clsact
t qdisc del dev v1 root
flush_actions gact
flush_actions police
expect_rc 0 ts -v apply "$TMP/dump.yaml"
# (6.1's matchall echoes a new rule as no rule, *arg left on the old head:
# that one is read back.)
verified 10 1
snapshot | grep -v "class fq_codel\|\"parent [12]0:[0-9a-f]" >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "the state applied back is tc's"
expect_rc 0 ts diff "$TMP/dump.yaml"

# 2. A change: the table's police rate (an action replace), a flower key (a
# replace flower echoes as the new rule) and a class rate (a change).
sed -e 's/rate: 1mbit/rate: 2mbit/' -e 's|10.0.0.0/8|10.0.0.0/16|' -e 's/rate: 20mbit/rate: 30mbit/' \
  "$TMP/dump.yaml" >"$TMP/changed.yaml"
cmp -s "$TMP/dump.yaml" "$TMP/changed.yaml" && fail "the edit changed nothing"
expect_rc 0 ts -v apply "$TMP/changed.yaml"
verified 3 0
expect_rc 0 ts diff "$TMP/changed.yaml"
OUT=$(t filter show dev v0 ingress)
expect_contains "dst_ip 10.0.0.0/16"

# 3. --atomic (on v2): 200 flower rules built in a slot, the switch rule last; then
# 1% of them changed: the other slot and one switch replace. (Under 256
# requests a device: by echoes; section 4 has the read-back of a whole device.)
rules() {  # rules PORT_OF_EVERY_100TH
  echo "version: 1"; echo "devices:"; echo "  v2:"; echo "    qdiscs: [{kind: clsact}]"; echo "    filters:"
  for i in $(seq 0 199); do
    p=$((10000 + i)); [ $((i % 100)) = 0 ] && p=$(($1 + i))
    echo "      - {parent: ingress, pref: 10, protocol: ip, flower: {ip_proto: udp, dst_port: $p}, actions: [{gact: {control: drop}}]}"
  done
}
rules 10000 >"$TMP/a.yaml"
rules 20000 >"$TMP/b.yaml"
expect_rc 0 ts -v apply --atomic "$TMP/a.yaml"
verified 202 0  # the clsact, 200 rules in slot 0, the switch
expect_rc 0 ts diff --atomic "$TMP/a.yaml"
expect_rc 0 ts -v apply --atomic "$TMP/b.yaml"
expect_contains "0 without one"
expect_rc 0 ts diff --atomic "$TMP/b.yaml"
OUT=$(t filter show dev v2 ingress)
expect_contains "goto chain 200000000"

# 4. A device whose requests are most of it (400 flower rules on v3, from
# empty) is sent without echoes and read back with one dump, cheaper than
# 400 echoes (docs/verify.md, apply/verify_by_dump.h); a mismatch only the
# kernel shows is caught there as well: the last rule's mirred names index
# 7, which a rule on v1 holds already, so the kernel binds that action
# (redirect to lo) and drops the rule's own parameters.
t qdisc add dev v1 clsact
t filter add dev v1 ingress pref 1 protocol ip flower action mirred egress redirect dev lo index 7
flower400() {  # flower400 LAST_ACTION
  echo "version: 1"; echo "devices:"; echo "  v3:"; echo "    qdiscs: [{kind: clsact}]"; echo "    filters:"
  for i in $(seq 1 399); do
    echo "      - {parent: ingress, pref: 10, protocol: ip, flower: {ip_proto: udp, dst_port: $i}, actions: [{gact: {control: drop}}]}"
  done
  echo "      - {parent: ingress, pref: 10, protocol: ip, flower: {ip_proto: udp, dst_port: 400}, actions: [$1]}"
}
flower400 "{gact: {control: drop}}" >"$TMP/whole.yaml"
expect_rc 0 ts -v apply "$TMP/whole.yaml"
expect_contains "0 steps by their echo (0 of them read back), 0 without one, 401 by reading their devices back whole"
# ... each rule compared as it is read (VerifySieve) and, equal, not held
# (but the list's first).
expect_contains "(399 rules equal as read)"
expect_rc 0 ts diff "$TMP/whole.yaml"
t qdisc del dev v3 clsact
flower400 "{mirred: {direction: egress, action: redirect, dev: v2}, index: 7}" >"$TMP/bound.yaml"
expect_rc 1 ts -v apply "$TMP/bound.yaml"
# (a difference: read again whole for the report, so none counted as equal)
expect_contains "401 by reading their devices back whole (0 rules equal as read)"
expect_contains "after the apply the kernel still differs from the files"
expect_contains "(mirred dev lo -> v2)"
# --no-verify trusts the ACKs: exit 0 on the same state.
expect_rc 0 ts apply --no-verify "$TMP/bound.yaml"

# 5. The read-back through the sieve with a chain the file does not declare
# (the kernel makes chain 1 for its rules and dumps it): one rule of each
# list stays held, so the plan sees chain 1 holding rules on both sides and
# does not plan it away: verified, 600 - 2 rules equal as read.
t qdisc del dev v3 clsact
{
  echo "version: 1"; echo "devices:"; echo "  v3:"; echo "    qdiscs: [{kind: clsact}]"; echo "    filters:"
  for c in 0 1; do
    for i in $(seq 1 300); do
      echo "      - {parent: ingress, chain: $c, pref: 10, protocol: ip, flower: {ip_proto: tcp, dst_port: $i}, actions: [{gact: {control: drop}}]}"
    done
  done
} >"$TMP/chained.yaml"
expect_rc 0 ts -v apply "$TMP/chained.yaml"
expect_contains "601 by reading their devices back whole (598 rules equal as read)"
OUT=$(t chain show dev v3 ingress)
expect_contains "chain 1"
expect_rc 0 ts diff "$TMP/chained.yaml"
finish
