#!/bin/bash
# bpf filters (cls_bpf, built into this kernel): programs from an object file
# and from a pinned path, compared by tag.
#  1. tc makes the reference state; tcsync applies a hand-written file to the
#     flushed namespace: tc -j identical (program ids aside), diff empty.
#  2. tcsync dump -> flush -> apply of the dump: identical again; a dump
#     applied where its object file is missing fails before sending anything.
#  3. One attribute changed -> the minimal plan.
source "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/bpf" && pwd)
CLANG=$(command -v clang-14 || command -v clang || true)
[ -n "$CLANG" ] || { echo "SKIP: no clang to build the BPF test program"; exit 77; }
BPFFS="$TMP/bpffs"
bpf_cleanup() {
  umount "$BPFFS" 2>/dev/null || true
  cleanup
}
trap bpf_cleanup EXIT INT TERM

"$CLANG" -O2 -target bpf -c "$SRC/cls.c" -o "$TMP/cls.o"
cc -O2 "$SRC/pin.c" -o "$TMP/pin" -lbpf
mkdir "$BPFFS"
mount -t bpf bpf "$BPFFS" || { echo "SKIP: cannot mount a BPF file system (needed to pin a program)"; exit 77; }
"$TMP/pin" "$TMP/cls.o" mark "$BPFFS/marker"
make_ns
export TC_SNAPSHOT_DROP=id  # the kernel numbers every program it loads

# The reference: what tc makes for these words.
tc_state() {
  t qdisc add dev v0 clsact
  t filter add dev v0 ingress pref 10 bpf obj "$TMP/cls.o" sec classifier da
  t filter add dev v0 ingress pref 20 handle 5 bpf obj "$TMP/cls.o" sec classifier classid 1:5
  t filter add dev v0 egress pref 30 bpf object-pinned "$BPFFS/marker" da
  t filter add dev v0 egress pref 40 bpf obj "$TMP/cls.o" sec mark skip_hw action mirred egress mirror dev v1
}
flush() { t qdisc del dev v0 clsact; }
tc_state
snapshot >"$TMP/tc.txt"
grep -q '"bpf_name": "cls.o:\[classifier\]"' "$TMP/tc.txt" && grep -q '"bpf_name": "marker:\[\*fsobj\]"' "$TMP/tc.txt" &&
  pass "tc's labels: file.o:[section], pin:[*fsobj]" || fail "tc's labels"

# 1. The same state written for tcsync.
cat >"$TMP/file.yaml" <<EOF
version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: all, handle: 1, bpf: {object: $TMP/cls.o, section: classifier, direct_action: true}}
      - {parent: ingress, pref: 20, protocol: all, handle: 5, bpf: {object: $TMP/cls.o}, classid: "1:5"}
      - {parent: egress, pref: 30, protocol: all, handle: 1, bpf: {pinned: $BPFFS/marker, direct_action: true}}
      - {parent: egress, pref: 40, protocol: all, handle: 1, bpf: {object: $TMP/cls.o, section: mark, skip_hw: true},
         actions: [{mirred: {action: mirror, direction: egress, dev: v1}, percpu_stats: true}]}
EOF
expect_rc 0 ts diff "$TMP/file.yaml"
expect_contains "in sync"  # tc's state already: the programs' tags are equal
flush
expect_rc 0 ts apply "$TMP/file.yaml"
snapshot >"$TMP/ts.txt"
expect_same_file "$TMP/tc.txt" "$TMP/ts.txt" "tcsync's state equals tc's (tc -j, ids aside)"
expect_rc 0 ts diff "$TMP/file.yaml"
expect_contains "in sync"

# 2. Dump of tc's state -> flush -> apply.
flush
tc_state
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
expect_contains "bpf: {object: cls.o, section: classifier, id: "
expect_contains "name: \"marker:[*fsobj]\", id: "
tag=$(t -j filter show dev v0 ingress pref 10 | python3 -c 'import json,sys; print([f for f in json.load(sys.stdin) if "options" in f][0]["options"]["prog"]["tag"])')
expect_contains "tag: \"$tag\""
flush
# Elsewhere the dump's object file name means nothing: refused, nothing sent.
# The object rules' `id:` goes from this copy: a flushed rule's program lives
# on until an RCU grace period has passed, and tcsync rightly takes a live
# program by id when its file is missing (a quiet machine got there first).
mkdir "$TMP/elsewhere"
sed '/object: cls.o/s/ id: [0-9]*,//' "$TMP/dump.yaml" >"$TMP/elsewhere/dump.yaml"
OUT=$(cd "$TMP/elsewhere" && "$TCSYNC" --netns "$NS" apply "$TMP/elsewhere/dump.yaml" 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && pass "dump applied without its object file: rc 1" || fail "dump applied without its object file: rc $rc"
expect_contains "object cls.o section classifier: No such file or directory"
[ -z "$(t qdisc show dev v0 clsact)" ] && pass "nothing was changed" || fail "something was changed"
# Where the object file is (tc was given the same file), it applies; the
# pinned program is still there, known by its id.
OUT=$(cd "$TMP" && "$TCSYNC" --netns "$NS" apply "$TMP/dump.yaml" 2>&1) && rc=0 || rc=$?
[ "$rc" = 0 ] && pass "dump applied next to its object file" || { fail "dump applied next to its object file: rc $rc"; echo "$OUT"; }
snapshot >"$TMP/again.txt"
expect_same_file "$TMP/tc.txt" "$TMP/again.txt" "dump -> flush -> apply: tc -j identical (ids aside)"
OUT=$(cd "$TMP" && "$TCSYNC" --netns "$NS" diff "$TMP/dump.yaml" 2>&1) && rc=0 || rc=$?
[ "$rc" = 0 ] && grep -q "in sync" <<<"$OUT" && pass "diff of the dump: in sync" || fail "diff of the dump: rc $rc: $OUT"

# A program known only by tag cannot be added: a clear error, nothing sent.
cat >"$TMP/tagonly.yaml" <<EOF
version: 1
devices:
  v1:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: all, handle: 1, bpf: {name: "gone.o:[*x]", tag: 0123456789abcdef}}
EOF
expect_rc 1 ts apply "$TMP/tagonly.yaml"
expect_contains "tagonly.yaml:6:9: error: bpf filter: no program to send for tag 0123456789abcdef: the file knows it only by its tag"
[ -z "$(t qdisc show dev v1 clsact)" ] && pass "nothing was changed on v1" || fail "v1 was changed"
# A tag that is not the object's program's: an error, whatever the plan.
sed "s|bpf: {object: $TMP/cls.o, section: classifier, direct_action: true}|bpf: {object: $TMP/cls.o, section: classifier, tag: 0123456789abcdef, direct_action: true}|" \
  "$TMP/file.yaml" >"$TMP/badtag.yaml"
expect_rc 1 ts diff "$TMP/badtag.yaml"
expect_contains "badtag.yaml:6:9: error: bpf filter: object $TMP/cls.o section classifier, tag 0123456789abcdef: the program found has tag $tag"

# 3. Minimal plans, from the hand-written file.
base() { cat "$TMP/file.yaml"; }
cp "$TMP/file.yaml" "$TMP/base.yaml"
step classid 's|classid: "1:5"|classid: "1:6"|' "~ v0: filter bpf ingress pref 20 protocol all handle 0x5  (classid 1:5 -> 1:6)" "!- v0" "!+ v0"
mark_tag=$(t -j filter show dev v0 egress pref 30 | python3 -c 'import json,sys; print([f for f in json.load(sys.stdin) if "options" in f][0]["options"]["prog"]["tag"])')
step program 's|object: '"$TMP"'/cls.o}|object: '"$TMP"'/cls.o, section: mark}|' \
  "~ v0: filter bpf ingress pref 20 protocol all handle 0x5  (tag $tag -> $mark_tag)" "!- v0" "!+ v0"
step direct_action '0,/direct_action: true}/s//direct_action: false}/' "~ v0: filter bpf ingress pref 10 protocol all handle 0x1  (direct_action true -> false)" "!- v0"
step skip_hw 's/section: mark, skip_hw: true/section: mark/' "- v0: filter bpf egress pref 40" "+ v0: filter bpf egress pref 40"
# The same program from elsewhere (pinned -> its object's section) is the
# same rule: compared by tag, not by where the file finds it.
expect_rc 0 ts apply "$TMP/base.yaml"
sed "s|pinned: $BPFFS/marker|object: $TMP/cls.o, section: mark|" "$TMP/base.yaml" >"$TMP/moved.yaml"
expect_rc 0 ts diff "$TMP/moved.yaml"
expect_contains "in sync"

# 4. A refused step after a program replace and a delete: the rollback puts
# the old programs back (held open by id: the object file is not at hand
# for the live rules' "cls.o").
expect_rc 0 ts apply "$TMP/base.yaml"
prog_id() { t -j filter show dev v0 "$1" pref "$2" | python3 -c 'import json,sys; print([f for f in json.load(sys.stdin) if "options" in f][0]["options"]["prog"]["id"])'; }
id10=$(prog_id ingress 10); id20=$(prog_id ingress 20)
snapshot >"$TMP/before.txt"
{ sed -e '/pref: 10,/d' -e 's|object: '"$TMP"'/cls.o}|object: '"$TMP"'/cls.o, section: mark}|' "$TMP/base.yaml"
  echo "  v1:"
  echo "    qdiscs: [{kind: clsact}]"
  echo "    filters:"
  echo "      - {parent: ingress, pref: 99, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}], indev: nosuch0}}"
} >"$TMP/refused.yaml"
expect_rc 1 ts apply "$TMP/refused.yaml"
expect_contains "the kernel is as it was before this apply"
expect_contains "3 of 4 steps applied; 1 failed"
snapshot >"$TMP/now.txt"
expect_same_file "$TMP/before.txt" "$TMP/now.txt" "refused apply: state as before"
[ "$(prog_id ingress 10)" = "$id10" ] && [ "$(prog_id ingress 20)" = "$id20" ] &&
  pass "the same programs (ids $id10, $id20) are back" || fail "programs after rollback: $(prog_id ingress 10) $(prog_id ingress 20), want $id10 $id20"
finish
