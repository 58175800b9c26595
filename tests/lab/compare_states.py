#!/usr/bin/env python3
"""Compare two tc states as tc_snapshot.py prints them; print a unified
diff and exit 1 where they differ.

usage: compare_states.py WANT.json GOT.json [--auto]

Each device's qdiscs are compared as a set: the kernel lists them root
first, then in the order of its hash of their handles, so the same objects
with other handles list in another order (docs/kernel-numbers.md).
--auto: WANT is a state `tc -b` made, GOT the import's. A qdisc tc added
without a handle has one the kernel chose (8001: and up, from one counter
for the whole kernel, never the same twice); it is read as the handle GOT
gives the qdisc of the same kind at the same place (device and parent),
wherever WANT names it (its filters' parent, its class's leaf).
"""
import difflib
import json
import re
import sys

AUTO = re.compile(r"^8[0-9a-f]{3}:$")


def place(q):
    return (q.get("kind"), "root" if q.get("root") else q.get("parent"))


def qdiscs(state):
    for dev, d in state.items():
        if isinstance(d, dict):
            for q in d.get("qdiscs", []):
                if isinstance(q, dict):
                    yield dev, q


def main():
    want = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))
    if "--auto" in sys.argv[3:]:
        theirs = {(dev,) + place(q): q.get("handle") for dev, q in qdiscs(got)}
        text = json.dumps(want, sort_keys=True)
        for dev, q in list(qdiscs(want)):
            h = q.get("handle", "")
            mapped = theirs.get((dev,) + place(q))
            if AUTO.match(h) and mapped and mapped != h:
                text = re.sub(r'(?<=["\s])' + re.escape(h) + r'(?=["\s])', mapped, text)
        want = json.loads(text)
    for state in (want, got):
        for d in state.values():
            if isinstance(d, dict) and isinstance(d.get("qdiscs"), list):
                d["qdiscs"].sort(key=lambda q: json.dumps(q, sort_keys=True))
    a = json.dumps(want, indent=1, sort_keys=True).splitlines()
    b = json.dumps(got, indent=1, sort_keys=True).splitlines()
    if a == b:
        return 0
    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(a, b, "tc", "tcsync", lineterm=""))
    return 1


if __name__ == "__main__":
    sys.exit(main())
