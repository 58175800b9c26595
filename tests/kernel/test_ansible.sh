#!/bin/bash
# The Ansible module (packaging/ansible) under a real ansible-playbook run:
# an inventory of three "hosts" that are network namespaces (connection
# local, a netns var), all driven in parallel as a fleet would be.
#   --check        reports changed on every host and changes nothing (tc says so)
#   run            changes them, with the plan returned as data
#   run again      changed=false everywhere
#   --check --diff shows tcsync's plan for a host that drifted
#   a bad file     fails with tcsync's FILE:LINE:COL text
# Needs Debian's ansible-core (scripts/install-deps.sh --tests installs it).
source "$(dirname "$0")/lib.sh"
command -v ansible-playbook >/dev/null || { echo "FAIL: ansible-playbook missing: run scripts/install-deps.sh --tests"; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
HOSTS=(lab1 lab2 lab3)
declare -A NSOF
for h in "${HOSTS[@]}"; do NSOF[$h]="${NS:0:34}-$h"; done
cleanup_all() {
  for h in "${HOSTS[@]}"; do ip netns del "${NSOF[$h]}" 2>/dev/null || true; done
  cleanup
}
trap cleanup_all EXIT INT TERM
for h in "${HOSTS[@]}"; do
  n=${NSOF[$h]}
  ip netns add "$n"
  ip -n "$n" link set lo up
  ip -n "$n" link add v0 type veth peer name v1
  ip -n "$n" link set v0 up
  ip -n "$n" link set v1 up
done

# Ansible keeps its state in the test's own directory.
export ANSIBLE_HOME=$TMP/home ANSIBLE_LOCAL_TEMP=$TMP/local ANSIBLE_REMOTE_TEMP=$TMP/remote
export ANSIBLE_COLLECTIONS_PATH=$SRC/packaging/ansible ANSIBLE_COLLECTIONS_PATHS=$SRC/packaging/ansible
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_HOST_KEY_CHECKING=0
export ANSIBLE_CALLBACKS_ENABLED=ansible.builtin.tree ANSIBLE_CALLBACK_TREE_DIR=$TMP/tree

{
  echo "labs:"
  echo "  vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3, tcsync_bin: $TCSYNC}"
  echo "  hosts:"
  for h in "${HOSTS[@]}"; do echo "    $h: {netns: ${NSOF[$h]}}"; done
} >"$TMP/inventory.yml"
cat >"$TMP/play.yml" <<'EOF'
- hosts: labs
  gather_facts: false
  tasks:
    - name: tc state as the file says
      tcsync.tcsync.tcsync:
        src: "{{ site }}"
        netns: "{{ netns }}"
        binary: "{{ tcsync_bin }}"
EOF
SITE=$EXAMPLES/htb-shaping.yaml

# play RC ARGS...: ansible-playbook with the inventory; output in $OUT.
play() {
  local want=$1; shift
  rm -rf "$TMP/tree"
  local rc=0
  OUT=$(ansible-playbook -i "$TMP/inventory.yml" "$TMP/play.yml" "$@" 2>&1) || rc=$?
  if [ "$rc" = "$want" ]; then pass "ansible-playbook $* exits $want"; else fail "ansible-playbook $* exits $rc (want $want)"; echo "$OUT" | sed 's/^/    /'; fi
}
# recap HOST: that host's PLAY RECAP line.
recap() { grep -E "^$1 +:" <<<"$OUT" | tr -s ' '; }
# result HOST EXPR: a Python expression over the module's result `r`.
result() { python3 -c "import json,sys; r=json.load(open('$TMP/tree/$1')); print($2)"; }

play 0 -e "site=$SITE" --check
for h in "${HOSTS[@]}"; do
  [[ "$(recap $h)" == *"ok=1 changed=1 unreachable=0 failed=0"* ]] && pass "$h: check mode reports changed" || fail "$h: check mode: $(recap $h)"
  [ "$(result $h "r['plan']['command'], r['changes'] > 0")" = "diff True" ] && pass "$h: the plan is returned as data" ||
    fail "$h: plan: $(result $h "r.get('plan')")"
  [ -z "$(tc -n "${NSOF[$h]}" class show dev v0)" ] && pass "$h: check mode changed nothing (tc shows no class)" ||
    fail "$h: check mode changed the kernel"
done

play 0 -e "site=$SITE"
for h in "${HOSTS[@]}"; do
  [[ "$(recap $h)" == *"ok=1 changed=1 unreachable=0 failed=0"* ]] && pass "$h: apply reports changed" || fail "$h: apply: $(recap $h)"
  [ "$(result $h "r['plan']['command'], all(s['status'] == 'ok' for s in r['plan']['steps'])")" = "apply True" ] &&
    pass "$h: apply's plan has every step ok" || fail "$h: apply plan: $(result $h "r.get('plan')")"
  OUT2=$(tc -n "${NSOF[$h]}" class show dev v0)
  grep -qF "class htb 1:10 parent 1:1 prio 1 rate 300Mbit ceil 900Mbit" <<<"$OUT2" && pass "$h: tc shows the classes" || fail "$h: tc: $OUT2"
done

play 0 -e "site=$SITE"
for h in "${HOSTS[@]}"; do
  [[ "$(recap $h)" == *"ok=1 changed=0 unreachable=0 failed=0"* ]] && pass "$h: second run reports changed=false" || fail "$h: second run: $(recap $h)"
done

# Drift on one host: check + diff mode names it and leaves it.
tc -n "${NSOF[lab2]}" class change dev v0 parent 1:1 classid 1:10 htb rate 100mbit ceil 900mbit prio 1
play 0 -e "site=$SITE" --check --diff
[[ "$(recap lab2)" == *"changed=1"* && "$(recap lab1)" == *"changed=0"* ]] && pass "only the drifted host reports changed" ||
  fail "drift: $(recap lab1) / $(recap lab2)"
expect_contains "~ v0: class htb 1:10 parent 1:1  (rate 100mbit -> 300mbit"
grep -qF "rate 100Mbit" <<<"$(tc -n "${NSOF[lab2]}" class show dev v0)" && pass "check --diff left the drift in place" || fail "check --diff changed lab2"

# A file tcsync rejects: the task fails with tcsync's FILE:LINE:COL text.
sed 's/rate: 300mbit/rate: 300mbitt/' "$SITE" >"$TMP/bad.yaml"
line=$(grep -n "300mbitt" "$TMP/bad.yaml" | cut -d: -f1)
play 2 -e "site=$TMP/bad.yaml" --limit lab1
[[ "$(recap lab1)" == *"failed=1"* ]] && pass "lab1: bad file fails the task" || fail "lab1: bad file: $(recap lab1)"
MSG=$(result lab1 "r['msg']")
grep -qE "^$TMP/bad.yaml:$line:[0-9]+: error: 'rate' must be a rate such as 100mbit, not '300mbitt'" <<<"$MSG" &&
  pass "the failure is tcsync's FILE:LINE:COL text" || fail "failure text: $MSG"
finish
