#!/usr/bin/env python3
"""`tcsync import` of every vendored tdc case (tests/tdc/cases), to compare
two builds' imports byte for byte (a change that should keep import's
output, such as moving a kind's name into its kind).

usage: scripts/tdc-import.py TCSYNC DIR > out.txt

Each case's setup and command, with tdc's names as tdc_roundtrip.py gives
them, are written once to DIR/<file>-<id>.sh (kept, so a second build reads
the same paths and its diagnostics name the same files), then imported; the
output is each case's exit code, stdout and stderr in corpus order. Lines
that are not tc's are import's to skip (it warns), as in a shell script;
the setup's `tc actions flush` lines are left out (below)."""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "tdc"))
from tdc_roundtrip import substitute  # noqa: E402  (the runner's own names for $TC, $DEV1...)


def commands(case):
    # `actions flush` empties the table before a case: import refuses it
    # (it reads what a script makes), and every action case's output would
    # be that one error.
    for step in case.get("setup", []):
        cmd = step[0] if isinstance(step, list) else step
        if "actions flush" not in cmd:
            yield cmd
    yield case["cmdUnderTest"]


def main(tcsync, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    cases = os.path.join(HERE, "..", "tests", "tdc", "cases")
    for path in sorted(glob.glob(os.path.join(cases, "*", "*.json"))):
        name = os.path.relpath(path, cases).replace("/", "-")[:-5]
        for case in json.load(open(path)):
            batch = os.path.join(out_dir, "%s-%s.sh" % (name, case["id"]))
            if not os.path.exists(batch):
                with open(batch, "w") as f:
                    f.write("".join(substitute(c) + "\n" for c in commands(case)))
            p = subprocess.run([tcsync, "import", batch], capture_output=True, text=True)
            sys.stdout.write("### %s %s rc %d\n%s--- stderr\n%s" % (name, case["id"], p.returncode, p.stdout, p.stderr))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
