#!/usr/bin/env python3
"""The schemas under schemas/ are what they claim to be:
- tcsync.schema.json is byte for byte what `tcsync schema` prints (so the
  committed file follows the kind tables; regenerate it after adding a kind),
- both files are valid JSON Schemas (draft 2020-12),
- every examples/*.yaml, read by python3-yaml as any editor or CI tool would,
  validates, and so does what `tcsync import` writes,
- the schema rejects what tcsync rejects (it is not vacuous),
- what `validate` and `import` print with --format json follows
  report.schema.json, errors and all.

usage: schema_test.py path/to/tcsync SOURCE_DIR
"""
import difflib
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import yaml

TCSYNC, ROOT = sys.argv[1], sys.argv[2]
fails = 0


def check(ok, what, detail=""):
    global fails
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        fails += 1
        if detail:
            print("    " + detail.rstrip().replace("\n", "\n    "))


def run(*args, stdin=None):
    return subprocess.run([TCSYNC, *args], input=stdin, capture_output=True, text=True)


generated = run("schema").stdout
path = os.path.join(ROOT, "schemas", "tcsync.schema.json")
committed = open(path).read() if os.path.exists(path) else ""
check(generated == committed, "schemas/tcsync.schema.json is the output of `tcsync schema`",
      "".join(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                   "schemas/tcsync.schema.json", "tcsync schema", n=1))[:4000] +
      "\nregenerate: tcsync schema > schemas/tcsync.schema.json")

schema = json.loads(generated)
plan_schema = json.load(open(os.path.join(ROOT, "schemas", "plan.schema.json")))
report_schema = json.load(open(os.path.join(ROOT, "schemas", "report.schema.json")))
for name, s in (("tcsync.schema.json", schema), ("plan.schema.json", plan_schema),
                ("report.schema.json", report_schema)):
    try:
        jsonschema.Draft202012Validator.check_schema(s)
        check(True, name + " is a valid draft 2020-12 schema")
    except jsonschema.SchemaError as e:
        check(False, name + " is a valid draft 2020-12 schema", str(e))

validator = jsonschema.Draft202012Validator(schema)


def errors(doc):
    return "\n".join("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in validator.iter_errors(doc))


examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))
check(len(examples) > 0, "examples/ has YAML files")
for f in examples:
    with open(f) as fh:
        doc = yaml.safe_load(fh)
    errs = errors(doc)
    check(not errs, "examples/%s validates" % os.path.basename(f), errs)
    # tcsync itself agrees.
    r = run("validate", f)
    check(r.returncode == 0, "tcsync validate examples/%s" % os.path.basename(f), r.stderr)

batch = """qdisc add dev v0 root handle 1: htb default 10
class add dev v0 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit
filter add dev v0 parent 1: protocol ip prio 5 u32 match ip dst 10.0.0.0/8 match ip dport 53 0xffff flowid 1:10
qdisc add dev v1 clsact
filter add dev v1 ingress protocol ip prio 1 u32 match u32 0 0 action mirred egress redirect dev v0
"""
with tempfile.NamedTemporaryFile("w", suffix=".tc") as tf:
    tf.write(batch)
    tf.flush()
    r = run("import", tf.name)
check(r.returncode == 0, "tcsync import of a batch file", r.stderr)
if r.returncode == 0:
    errs = errors(yaml.safe_load(r.stdout))
    check(not errs, "what tcsync import writes validates", errs + "\n" + r.stdout)

report_validator = jsonschema.Draft202012Validator(report_schema)


def report(what, r, want_rc, check_doc):
    """`tcsync --format json ...` printed one line of JSON that follows
    report.schema.json, exited want_rc, and check_doc(doc) holds."""
    try:
        doc = json.loads(r.stdout)
    except ValueError as e:
        check(False, what + ": stdout is JSON", "%s\n%s" % (e, r.stdout + r.stderr))
        return
    errs = "\n".join(e.message for e in report_validator.iter_errors(doc))
    check(not errs, what + ": follows report.schema.json", errs + "\n" + r.stdout)
    check(r.returncode == want_rc and r.stdout.count("\n") == 1 and not r.stderr,
          what + ": exit %d, one line, nothing on stderr" % want_rc, "rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    check(check_doc(doc), what + ": content", r.stdout)


with tempfile.TemporaryDirectory() as tmp:
    good, broken, tc_bad = (os.path.join(tmp, n) for n in ("good.yaml", "broken.yaml", "bad.tc"))
    open(good, "w").write(open(examples[0]).read())
    open(broken, "w").write('version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: "1:", defalt: "1:10"}]\n'
                            '    classes: [{classid: "1:10", rate: 10mbt}]\n')
    open(tc_bad, "w").write("qdisc add dev v0 root handle 1: htb default 10\nqdisc add dev v0 root handle 2: nosuchkind\n")
    report("validate --format json of a good file", run("--format", "json", "validate", good), 0,
           lambda d: d["valid"] and d["errors"] == 0 and d["diagnostics"] == [])
    report("validate --format json of a broken file", run("--format", "json", "validate", broken), 1,
           lambda d: not d["valid"] and d["errors"] == 2 and
           [(x["file"], x["line"], x["column"], x["severity"]) for x in d["diagnostics"]] ==
           [(broken, 4, 40, "error"), (broken, 5, 39, "error")] and "defalt" in d["diagnostics"][0]["message"])
    report("import --format json of a good batch", run("--format", "json", "import", "-", stdin=batch), 0,
           lambda d: d["ok"] and yaml.safe_load(d["yaml"])["devices"]["v1"]["qdiscs"][0]["kind"] == "clsact")
    report("import --format json of a bad batch", run("--format", "json", "import", tc_bad), 1,
           lambda d: not d["ok"] and "yaml" not in d and d["errors"] >= 1 and
           all(x["file"] == tc_bad for x in d["diagnostics"] if x["severity"] == "error"))
r = run("--format", "json", "schema")
check(r.returncode == 0 and r.stdout == generated, "schema --format json prints the schema (it is JSON)")

bad = {"version": 1, "devices": {"v0": {"qdiscs": [{"kind": "htb", "handle": "1:", "rate2q": 10}]}}}
check(bool(errors(bad)), "an unknown key is rejected by the schema")
bad = {"version": 1, "devices": {"v0": {"classes": [{"classid": 110, "rate": "1mbit"}]}}}
check(bool(errors(bad)), "a handle read as a number (1:50 unquoted is 110 in YAML 1.1) is rejected")

# A filter's own police: the police action's fields, on the kinds that take
# it (FilterOps::old_police_attr), never with actions.
def police_filter(kind, **more):
    f = {"parent": "ingress", "pref": 1, kind: {}, "police": {"rate": "1mbit", "burst": "10k", "exceed": "drop"}}
    f.update(more)
    return {"version": 1, "devices": {"v0": {"filters": [f]}}}
check(not errors(police_filter("fw")), "a fw filter's own police validates", errors(police_filter("fw")))
check(bool(errors(police_filter("flower"))), "a flower filter's own police is rejected (flower has none)")
check(bool(errors(police_filter("fw", actions=[{"gact": {"control": "drop"}}]))), "police and actions together are rejected")
bad = police_filter("u32")
bad["devices"]["v0"]["filters"][0]["police"]["rat"] = "1mbit"
check(bool(errors(bad)), "an unknown key in a filter's police is rejected")

print("all checks passed" if not fails else "%d check(s) failed" % fails)
sys.exit(1 if fails else 0)
