#!/bin/bash
# schemas/plan.schema.json against real output: `--format json` of diff
# (changes, in sync), apply (statuses), apply --dry-run and an apply the
# kernel refuses (errno, kernel_message), in a throwaway namespace.
source "$(dirname "$0")/../kernel/lib.sh"
SCHEMA="$(cd "$(dirname "$0")/../.." && pwd)/schemas/plan.schema.json"
make_ns
F=$EXAMPLES/htb-shaping.yaml
n=0
# run RC ARGS...: tcsync --format json ARGS in the namespace; keep stdout.
run() {
  local want=$1; shift
  n=$((n + 1))
  local rc=0
  "$TCSYNC" --netns "$NS" --format json "$@" >"$TMP/plan$n.json" 2>"$TMP/err$n" || rc=$?
  if [ "$rc" = "$want" ]; then pass "rc $want: $*"; else fail "rc $rc (want $want): $*"; sed 's/^/    /' "$TMP/err$n"; fi
}
run 2 diff "$F"
run 0 apply --dry-run "$F"
run 0 apply "$F"
run 0 diff "$F"
run 0 apply "$F"
sed 's/rate: 300mbit/rate: 200mbit/' "$F" >"$TMP/changed.yaml"
run 2 diff "$TMP/changed.yaml"
cat >"$TMP/reject.yaml" <<'Y'
version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "1:"}]
    filters:
      - {parent: "1:", pref: 5, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}], indev: nosuch0}}
Y
run 1 apply --on-error=stop "$TMP/reject.yaml"
run 1 apply "$TMP/reject.yaml"
# A file error: refused before anything is sent, still a report on stdout.
printf 'version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", defualt: 10}]\n' >"$TMP/bad.yaml"
run 1 apply "$TMP/bad.yaml"
# A scoped device with a foreign rule outside its scope: outside_scope.
tc -n "$NS" qdisc add dev v1 clsact
tc -n "$NS" filter add dev v1 ingress pref 1 protocol ip u32 match ip src 10.1.0.0/16
cat >"$TMP/scoped.yaml" <<'Y'
version: 1
devices:
  v1:
    own: [{parent: ingress, prefs: 100-199}]
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 100, protocol: ip, u32: {match: [{ip: {dport: 22}}]}}
Y
run 2 diff "$TMP/scoped.yaml"

OUT=$(python3 - "$SCHEMA" "$TMP"/plan*.json <<'P'
import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
seen = set()
for f in sys.argv[2:]:
    text = open(f).read()
    doc = json.loads(text)
    errs = [e.message for e in v.iter_errors(doc)]
    print(("ok" if not errs else "BAD") + " %s %s %d steps %s" % (f.rsplit("/", 1)[1], doc.get("command"), len(doc.get("steps", [])), errs))
    if doc["changes"] != len(doc["steps"]): print("BAD changes != len(steps) in " + f)
    if text.count("\n") != 1: print("BAD not one line: " + f)
    if doc.get("outside_scope"): seen.add("outside_scope")
    if "result" in doc: seen.add("result:%s/%s" % (doc["result"], doc.get("rolled_back", "-")))
    for e in doc.get("diagnostics", []):
        if e["severity"] == "error": seen.add("error:%s:%s:" % ((e["file"] or "-").rsplit("/", 1)[-1], e["line"]))
    if doc["command"] == "apply" and "result" not in doc: print("BAD apply without result: " + f)
    for s in doc["steps"]:
        seen.add(s["op"]); seen.add(s.get("status", "-"))
        if s.get("status") == "failed": seen.add("kernel_message:" + s["kernel_message"])
print("seen: " + " ".join(sorted(seen)) + " ")
P
)
echo "$OUT" | sed 's/^/    /'
if grep -q BAD <<<"$OUT"; then fail "every plan validates against plan.schema.json"; else pass "every plan validates against plan.schema.json"; fi
expect_contains " add "
expect_contains " change "
expect_contains " ok "
expect_contains " failed "
expect_contains "kernel_message:Network device not found"
expect_contains " outside_scope "
expect_contains " result:applied/- "
expect_contains " result:failed/False "
expect_contains " result:failed/True "
expect_contains " result:refused/- "
expect_contains " error:bad.yaml:4:"
finish
