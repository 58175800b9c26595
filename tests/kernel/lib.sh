# Shared helpers for kernel tests: each test runs tcsync against the real
# kernel inside its own throwaway network namespace, with tc as the reference.
# Usage: source lib.sh; the test gets $TCSYNC, $NS, $TMP, and cleanup on exit.
set -euo pipefail

TCSYNC=$(realpath "${1:?usage: $0 path/to/tcsync}")
EXAMPLES=${TCSYNC_EXAMPLES:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../examples" && pwd)}
if [ "$(id -u)" != 0 ]; then echo "SKIP: kernel tests need root (network namespaces)"; exit 77; fi
NS="tcs-$(basename "$0" .sh | tr _ -)-$$"
NS=${NS:0:40}
TMP=$(mktemp -d)
FAILS=0

REF=""
cleanup() {
  ip netns del "$NS" 2>/dev/null || true
  [ -z "$REF" ] || ip netns del "$REF" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# A namespace with veth pairs v0<->v1 (and v2<->v3 when asked), all up.
make_ns() {
  ip netns add "$NS"
  ip -n "$NS" link set lo up
  ip -n "$NS" link add v0 type veth peer name v1
  ip -n "$NS" link set v0 up
  ip -n "$NS" link set v1 up
  if [ "${1:-}" = 4 ]; then
    ip -n "$NS" link add v2 type veth peer name v3
    ip -n "$NS" link set v2 up
    ip -n "$NS" link set v3 up
  fi
}

# A second namespace with the same links, for `tc -b` as the reference
# (deleted by cleanup too). Usage: make_ref_ns [4]
make_ref_ns() {
  REF="${NS:0:36}-ref"
  ip netns add "$REF"
  ip -n "$REF" link set lo up
  local pairs="v0:v1"
  [ "${1:-}" = 4 ] && pairs="v0:v1 v2:v3"
  for pair in $pairs; do
    ip -n "$REF" link add "${pair%:*}" type veth peer name "${pair#*:}"
    ip -n "$REF" link set "${pair%:*}" up
    ip -n "$REF" link set "${pair#*:}" up
  done
}

ts() { "$TCSYNC" --netns "$NS" "$@"; }
t() { tc -n "$NS" "$@"; }

# The whole tc state of a namespace ($NS unless named) as normalized JSON
# (tc is the reference).
snapshot() { python3 "$(dirname "${BASH_SOURCE[0]}")/tc_snapshot.py" "${1:-$NS}"; }

# del_clsact DEV...: flush $NS by deleting each DEV's clsact (its filters go too).
del_clsact() {
  local dev
  for dev in "$@"; do t qdisc del dev "$dev" clsact; done
}

# The kernel unbinds a deleted rule's actions after an RCU grace period: a
# flush right after the rules go may meet them still bound (EPERM). Retry.
flush_actions() {
  local i
  for i in $(seq 50); do
    tc -n "$NS" actions flush action "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  tc -n "$NS" actions flush action "$1"
}

# expect_held_round_trip DUMP CMD... [-- CMD...]: a state tc cannot make
# (tc_struct.py) comes back from its dump. The caller's `raw` (the structs,
# as tc_struct.py shows them) and `details` (tc's view) wrote
# $TMP/raw.before and $TMP/tc.before; each CMD flushes, then DUMP is
# applied: the same structs, the same tc state, and a second dump is DUMP.
expect_held_round_trip() {
  local dump=$1 cmd=()
  shift
  for a in "$@" --; do
    if [ "$a" = -- ]; then "${cmd[@]}"; cmd=(); else cmd+=("$a"); fi
  done
  expect_rc 0 ts apply "$dump"
  raw >"$TMP/raw.after"
  details >"$TMP/tc.after"
  expect_same_file "$TMP/raw.before" "$TMP/raw.after" "the kernel's structs come back byte for byte"
  expect_same_file "$TMP/tc.before" "$TMP/tc.after" "tc -d -j state comes back"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/dump2.yaml"
  expect_same_file "$dump" "$TMP/dump2.yaml" "a second dump is identical"
}

pass() { echo "ok - $*"; }
fail() { echo "not ok - $*"; FAILS=$((FAILS + 1)); }

# expect_rc RC CMD...: run CMD, compare its exit code, keep its output in $OUT.
expect_rc() {
  local want=$1; shift
  local rc=0
  OUT=$("$@" 2>&1) || rc=$?
  if [ "$rc" = "$want" ]; then pass "rc $want: $*"; else fail "rc $rc (want $want): $*"; echo "$OUT" | sed 's/^/    /'; fi
}

# expect_contains TEXT: $OUT contains TEXT (a fixed string).
expect_contains() {
  if grep -qF -- "$1" <<<"$OUT"; then pass "output has: $1"; else fail "output lacks: $1"; echo "$OUT" | sed 's/^/    /'; fi
}

# expect_not_contains TEXT: $OUT does not contain TEXT (a fixed string).
expect_not_contains() {
  if grep -qF -- "$1" <<<"$OUT"; then fail "output has: $1"; echo "$OUT" | sed 's/^/    /'; else pass "output lacks: $1"; fi
}

SCHEMAS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../schemas" && pwd)

# expect_json_valid SCHEMA FILE [TEXT]: FILE is one line, one JSON object
# valid against SCHEMA (python3-jsonschema), containing TEXT when given.
expect_json_valid() {
  local out
  if out=$(python3 - "$1" "$2" 2>&1 <<'P'
import json, sys, jsonschema
text = open(sys.argv[2]).read()
errs = [e.message for e in jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).iter_errors(json.loads(text))]
if text.count("\n") != 1: errs.append("not one line")
print(errs if errs else "valid")
sys.exit(1 if errs else 0)
P
  ) && { [ -z "${3:-}" ] || grep -qF -- "$3" "$2"; }; then
    pass "$(basename "$2") valid against $(basename "$1")${3:+, has $3}"
  else
    fail "$(basename "$2") against $(basename "$1")${3:+ with $3}: $out"
    sed 's/^/    /' "$2"
  fi
}

expect_same_file() {
  if diff -u "$1" "$2" >"$TMP/diff.out"; then pass "$3"; else fail "$3"; head -60 "$TMP/diff.out" | sed 's/^/    /'; return 1; fi
}

# step NAME SED-EXPR WANT...: one attribute changed gives the minimal plan.
# Applies $TMP/base.yaml (from the base, whatever that takes), writes the
# caller's `base` output edited by SED-EXPR, checks that `diff` lists every
# WANT ("+ ...", "- ...", "~ ..." as fixed strings; "!TEXT": TEXT must not
# appear; "=N": the plan has N steps), applies it, and checks diff is empty.
step() {
  local name=$1 expr=$2; shift 2
  echo "# $name"
  expect_rc 0 ts apply "$TMP/base.yaml"
  base | sed "$expr" >"$TMP/$name.yaml"
  cmp -s "$TMP/$name.yaml" "$TMP/base.yaml" && { fail "$name: the edit changed nothing"; return; }
  expect_rc 2 ts diff "$TMP/$name.yaml"
  local want steps
  for want in "$@"; do
    if [ "${want:0:1}" = "=" ]; then
      steps=$(grep -cE '^ *[-+~] ' <<<"$OUT" || true)
      [ "$steps" = "${want:1}" ] && pass "$name: ${want:1} step(s)" || { fail "$name: $steps steps (want ${want:1})"; echo "$OUT" | sed 's/^/    /'; }
    elif [ "${want:0:1}" = "!" ]; then
      if grep -qF -- "${want:1}" <<<"$OUT"; then fail "$name: plan has ${want:1}"; echo "$OUT" | sed 's/^/    /'; else pass "$name: plan lacks ${want:1}"; fi
    else
      expect_contains "$want"
    fi
  done
  expect_rc 0 ts apply "$TMP/$name.yaml"
  expect_rc 0 ts diff "$TMP/$name.yaml"
  expect_contains "in sync"
}

# acts_batch ACTS [PATTERN DEV]: a tc batch from the file ACTS, one filter's
# action words a line: even lines to flower filters (ip_proto udp) on ingress,
# odd ones to matchall on egress, prio = the line's number, all on v0 but the
# lines holding PATTERN, which go to DEV. Ingress filters first, then egress,
# each by pref: the order tcsync adds them in, so the kernel numbers the
# actions alike in both namespaces.
acts_batch() {
  local acts=$1 pattern=${2:-} other=${3:-} n=0 line dev
  echo "qdisc add dev v0 clsact"
  [ -z "$other" ] || echo "qdisc add dev $other clsact"
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    n=$((n + 1))
    dev=v0
    [ -n "$pattern" ] && [[ $line == *"$pattern"* ]] && dev=$other
    if [ $((n % 2)) = 0 ]; then
      echo "$dev-1 filter add dev $dev ingress prio $n protocol ip flower ip_proto udp $line"
    else
      echo "$dev-2 filter add dev $dev egress prio $n protocol all matchall $line"
    fi
  done <"$acts" | sort -s -k1,1 | cut -d' ' -f2-
}

# Runs between roundtrip's flush and its apply; a test redefines it to wait
# for what the kernel frees late (a deleted rule's own police).
after_flush() { :; }

# roundtrip BATCH DEV...: the state `tc -b BATCH` makes in $NS -> tcsync dump
# -> flush (del_clsact DEV...) -> tcsync apply of the dump: tc -j identical
# (counters aside), diff empty, a second dump identical. Leaves the namespace
# flushed, and $TMP/before.json and $TMP/dump.yaml for the caller's checks.
roundtrip() {
  local batch=$1; shift
  echo "--- tc batch:"; sed 's/^/    /' "$batch"
  expect_rc 0 tc -n "$NS" -b "$batch"
  snapshot >"$TMP/before.json"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/dump.yaml"
  echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
  del_clsact "$@"
  after_flush
  expect_rc 0 ts apply "$TMP/dump.yaml"
  snapshot >"$TMP/after.json"
  expect_same_file "$TMP/before.json" "$TMP/after.json" "tc -j state after dump + flush + apply equals tc's"
  expect_rc 0 ts diff "$TMP/dump.yaml"
  expect_contains "in sync"
  expect_rc 0 ts dump
  cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump identical"; diff <(echo "$OUT") "$TMP/dump.yaml"; }
  del_clsact "$@"
}

# import_check BATCH DEV...: `tcsync import BATCH` + apply in $NS gives the
# state `tc -b BATCH` gives in $REF (make_ref_ns), and diff is empty; then
# flushes $NS (del_clsact DEV...).
import_check() {
  local batch=$1 rc=0; shift
  expect_rc 0 tc -n "$REF" -b "$batch"
  "$TCSYNC" import "$batch" >"$TMP/import.yaml" 2>"$TMP/import.err" || rc=$?
  [ "$rc" = 0 ] && pass "import exits 0" || { fail "import exits $rc"; sed 's/^/    /' "$TMP/import.err"; }
  expect_rc 0 ts apply "$TMP/import.yaml"
  snapshot "$REF" >"$TMP/ref.json"
  snapshot >"$TMP/imported.json"
  expect_same_file "$TMP/ref.json" "$TMP/imported.json" "import + apply gives the state tc -b gives"
  expect_rc 0 ts diff "$TMP/import.yaml"
  expect_contains "in sync"
  del_clsact "$@"
}

# apply_base: writes the caller's `base` output to $TMP/base.yaml (the base
# of step), applies it and checks diff is empty.
apply_base() {
  base >"$TMP/base.yaml"
  expect_rc 0 ts apply "$TMP/base.yaml"
  expect_rc 0 ts diff "$TMP/base.yaml"
}

# replace_step NAME PREF SED-EXPR [WANT...]: a step whose plan replaces the
# flower filter at PREF on v0 ingress (handle 0x1) and does not delete it.
replace_step() {
  local name=$1 pref=$2 expr=$3; shift 3
  local f="v0: filter flower ingress pref $pref protocol ip handle 0x1"
  step "$name" "$expr" "~ $f" "!- $f" "$@"
}

finish() {
  if [ "$FAILS" != 0 ]; then echo "$FAILS check(s) failed"; exit 1; fi
  echo "all checks passed"
}

# tcsync's namespace lock (kernel/lock.h) is an open-file-description lock,
# which flock(1) neither takes nor sees. ofd_lock FD: takes it on the
# shell's descriptor FD (open for writing), waiting while another holds it;
# held until FD is closed. ofd_locked FILE: whether someone holds it.
ofd_lock() {
  python3 -c 'import fcntl, struct, sys
fcntl.fcntl(int(sys.argv[1]), 38, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))  # F_OFD_SETLKW' "$1"
}
ofd_locked() {
  python3 -c 'import fcntl, struct, sys
got = fcntl.fcntl(open(sys.argv[1], "rb"), 36, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))  # F_OFD_GETLK
sys.exit(0 if struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK else 1)' "$1"
}
