#!/bin/bash
# Two builds of tcsync on the same inputs, every output compared byte for
# byte: what a change that must not change behaviour (a refactoring) shows.
#
#   bench/compare_builds.sh BUILD_A BUILD_B
#
# BUILD_x: a build directory holding tcsync, or the binary itself. Prints
# each output that differs (a unified diff) and a count; exits 1 if any
# differs. Without root only the file side runs (validate, schema, import,
# the bad inputs); as root also the kernel side, in throwaway network
# namespaces: the plan of each example against an empty namespace (diff,
# text and JSON), apply with each build, the dump of each (text and JSON),
# and a diff of the applied state against the file (in sync: nothing).
set -uo pipefail

bin_of() { if [ -d "$1" ]; then echo "$1/tcsync"; else echo "$1"; fi; }
A=$(realpath "$(bin_of "${1:?usage: $0 BUILD_A BUILD_B}")")
B=$(realpath "$(bin_of "${2:?usage: $0 BUILD_A BUILD_B}")")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
NS="tcs-cmp-$$"
cleanup() {
  ip netns del "$NS-a" 2>/dev/null || true
  ip netns del "$NS-b" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

SAME=0 DIFF=0
# compare NAME CMD...: runs CMD with each build (the word TCSYNC replaced
# by it), stdout, stderr and exit code kept apart; paths of TMP and the
# binary are the same in both runs, so no output differs by them.
compare() {
  local name=$1 out
  shift
  for side in a b; do
    # One path for both (usage lines print argv[0]).
    ln -sfn "$([ $side = a ] && echo "$A" || echo "$B")" "$TMP/tcsync"
    local args=()
    for w in "$@"; do args+=("${w//TCSYNC/$TMP/tcsync}"); done
    out="$TMP/out.$side"
    {
      "${args[@]}" >"$out.stdout" 2>"$out.stderr"
      echo "rc=$?" >"$out.rc"
    }
    cat "$out.stdout" "$out.stderr" "$out.rc" >"$TMP/$side.all"
  done
  if cmp -s "$TMP/a.all" "$TMP/b.all"; then
    SAME=$((SAME + 1))
  else
    DIFF=$((DIFF + 1))
    echo "== DIFFERS: $name"
    diff -u "$TMP/a.all" "$TMP/b.all" | head -40
  fi
}

# --- The file side: no kernel ---------------------------------------------
FILES=("$ROOT"/examples/*.yaml "$ROOT"/tests/fuzz/corpus/loader/*.yaml)

# Bad inputs: those of tests/kernel/test_bad_input.sh, and one for each
# error about a kind's capability (empty lists, root tables, handle spaces).
mkdir -p "$TMP/bad"
bad() { printf '%s' "$2" >"$TMP/bad/$1.yaml"; }
bad broken $'version: 1\ndevices:\n  v0: {qdiscs: [\n'
bad type $'version: 1\ndevices:\n  v0:\n    classes: [{classid: "1:10", kind: htb, rate: [1]}]\n    qdiscs: [{kind: htb, handle: "1:"}]\n'
bad unknown $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", defalt: "1:10"}]\n'
bad dupkey $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", handle: "2:"}]\n'
bad dupfilter $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "::1", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n      - {parent: ingress, pref: 1, handle: "::1", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n'
bad empty ''
bad nomirred $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, actions: [{mirred: {action: redirect, dev: nope0}}]}\n'
bad emptyword $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, empty: "U-32"}\n'
bad emptyflower $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, empty: flower}\n'
bad emptyhandle $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "7:", empty: u32}\n'
bad roottable_flower $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, root_table: "801:", flower: {}}\n'
bad roottable_rule $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "::1", root_table: "801:", u32: {}}\n'
bad roottable_value $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "2:", root_table: "7:", u32: {divisor: 1}}\n'
bad u32handle $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "x::", u32: {}}\n'
bad unreachable_root $'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - {parent: ingress, pref: 1, handle: "805::1", u32: {}}\n'
python3 - "$TMP/bad/full_bucket.yaml" <<'EOF'
import sys
rules = "".join('      - {parent: ingress, pref: 1, u32: {match: [{u32: {value: %d, mask: 0xffffffff, at: 0}}]}}\n' % i
                for i in range(4096))
open(sys.argv[1], "w").write("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + rules)
EOF
BAD=("$TMP"/bad/*.yaml)

for f in "${FILES[@]}" "${BAD[@]}"; do
  compare "validate $(basename "$f")" TCSYNC validate "$f"
  compare "validate --format json $(basename "$f")" TCSYNC --format json validate "$f"
done
compare "schema" TCSYNC schema
# The schema as JSON values (a change of layout alone shows above, not here).
compare "schema (as JSON, layout aside)" sh -c 'TCSYNC schema | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True, indent=1))"'
compare "--help" TCSYNC --help

# import: tc lines, with the errors of a line tc would take and tcsync cannot.
cat >"$TMP/import.tc" <<'EOF'
qdisc add dev v0 clsact
filter add dev v0 ingress pref 1 handle 2: u32 divisor 4
filter add dev v0 ingress pref 1 u32 ht 800: match ip protocol 6 0xff hashkey mask 0x000000ff at 20 link 2:
filter add dev v0 ingress pref 1 u32 ht 2:1: match ip dst 10.0.0.1/32 action drop
filter add dev v0 egress pref 2 protocol ip flower dst_ip 10.0.0.2 action pass
qdisc add dev v1 root handle 1: htb default 10
class add dev v1 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit
filter add dev v1 parent 1: pref 3 u32 match ip sport 80 0xffff flowid 1:10
EOF
printf 'qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1\n' >"$TMP/import_bad.tc"
compare "import" TCSYNC import "$TMP/import.tc"
compare "import (no kind)" TCSYNC import "$TMP/import_bad.tc"

# --- The kernel side: root, throwaway namespaces ---------------------------
if [ "$(id -u)" = 0 ]; then
  KFILES=("$ROOT"/examples/*.yaml)
  for f in "${KFILES[@]}"; do
    n=$(basename "$f" .yaml)
    for side in a b; do
      ip netns del "$NS-$side" 2>/dev/null
      ip netns add "$NS-$side"
      ip -n "$NS-$side" link set lo up
      for p in "v0 v1" "v2 v3"; do
        set -- $p
        ip -n "$NS-$side" link add "$1" type veth peer name "$2"
        ip -n "$NS-$side" link set "$1" up
        ip -n "$NS-$side" link set "$2" up
      done
      ip -n "$NS-$side" link add eth0 type dummy 2>/dev/null && ip -n "$NS-$side" link set eth0 up
    done
    # The plan against an empty namespace (both builds read the same one).
    compare "$n: diff (empty)" TCSYNC --netns "$NS-a" diff "$f"
    compare "$n: diff --format json (empty)" TCSYNC --netns "$NS-a" --format json diff "$f"
    # Each build applies in its own namespace; the dumps must agree, and
    # each build reads both namespaces alike.
    "$A" --netns "$NS-a" apply -q "$f" >/dev/null 2>&1
    "$B" --netns "$NS-b" apply -q "$f" >/dev/null 2>&1
    for side in a b; do
      compare "$n: dump of the state build $side applied" TCSYNC --netns "$NS-$side" dump
      compare "$n: dump --format json of the state build $side applied" TCSYNC --netns "$NS-$side" --format json dump
      compare "$n: diff after build $side applied" TCSYNC --netns "$NS-$side" diff "$f"
    done
    "$A" --netns "$NS-a" dump >"$TMP/dump.a" 2>&1
    "$A" --netns "$NS-b" dump >"$TMP/dump.b" 2>&1
    if cmp -s "$TMP/dump.a" "$TMP/dump.b"; then
      SAME=$((SAME + 1))
    else
      DIFF=$((DIFF + 1))
      echo "== DIFFERS: $n: the state build A applied and the state build B applied"
      diff -u "$TMP/dump.a" "$TMP/dump.b" | head -40
    fi
  done
  # A device that does not exist: the error of diff (kernel side).
  compare "nodev: diff" TCSYNC --netns "$NS-a" diff "$TMP/bad/nomirred.yaml"
  compare "nomirred: apply" TCSYNC --netns "$NS-a" apply "$TMP/bad/nomirred.yaml"
else
  echo "(not root: the kernel side skipped)"
fi

echo "compare_builds: $SAME outputs the same, $DIFF differ"
[ "$DIFF" = 0 ]
