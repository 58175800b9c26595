#!/usr/bin/env python3
"""Print a network namespace's whole tc state, as `tc -j` reports it, with
counters and kernel bookkeeping removed, so that two states compare with a
plain diff. tc is the reference here: tcsync's own code is not used.

usage: tc_snapshot.py NETNS
TC_SNAPSHOT_DROP=key,key... drops more keys (the fault tests drop the
action `index`: the kernel numbers each action it creates, and an action
replaced and replaced back gets a new number that no file declares). The
index of an action one rule holds alone is always dropped (see clean).
TC_SNAPSHOT_DETAILS=1 asks tc for details (-d): size tables, htb's and
tbf's linklayer and overhead (what shaping scripts set).
"""
import json
import os
import re
import subprocess
import sys

# Counters, timestamps, reference counts and hardware status: not state.
DROP = {"refcnt", "stats", "stats2", "xstats", "bytes", "packets", "drops", "overlimits",
        "requeues", "backlog", "qlen", "ref", "bind", "installed", "last_used", "first_used",
        "expires", "direct_packets_stat", "lended", "borrowed", "giants", "tokens", "ctokens",
        "not_in_hw", "in_hw", "in_hw_count", "used_hw_stats", "hw_stats", "successful",
        "rule_hit"} | {k for k in os.environ.get("TC_SNAPSHOT_DROP", "").split(",") if k}


DETAILS = ["-d"] if os.environ.get("TC_SNAPSHOT_DETAILS") == "1" else []


def tc(ns, *args):
    out = subprocess.run(["tc", "-n", ns, "-j", *DETAILS, *args], check=True, capture_output=True, text=True).stdout
    if not out.strip():
        return []
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        # iproute2 6.1 prints htb, drr, hfsc... classes as text even with -j,
        # and hfsc's qdisc options as invalid JSON ("options":{default 10 }):
        # keep tc's text lines instead (sorted: the kernel's class order is a
        # hash order).
        # tcsync's fingerprint cookies are dropped here too (see below).
        out = subprocess.run(["tc", "-n", ns, *DETAILS, *args], check=True, capture_output=True, text=True).stdout
        lines = [l.strip() for l in out.splitlines() if l.strip()]
        return sorted(l for l in private_indexes(lines)
                      if not (l.startswith(tuple("cookie " + f for f in FINGERPRINTS)) and len(l) == 7 + 32))


def private_indexes(lines):
    """The text form of clean()'s rule for actions one rule holds alone
    (fw, route, cgroup... filters print as text): their index goes, before
    the lines are sorted apart. Most actions print `index N ref 1 bind 1` on
    one line; police prints `police 0xN ...` with `ref 1 bind 1` next."""
    out = []
    for i, l in enumerate(lines):
        l = re.sub(r"^index \d+ (ref 1 bind 1\b)", r"index (private) \1", l)
        if i + 1 < len(lines) and lines[i + 1].startswith("ref 1 bind 1"):
            l = re.sub(r"\bpolice 0x[0-9a-f]+ ", "police (private) ", l)
        out.append(l)
    return out


# tcsync's fingerprint of a flower/matchall rule (src/model/fingerprint.h): a
# 16-byte action cookie starting with "tcs" and a format version (1, 2),
# tcsync's bookkeeping like a reference count, not configuration; a user's
# cookie is kept.
FINGERPRINTS = ("74637301", "74637302")


def clean(v):
    if isinstance(v, dict):
        # The number of an action only one rule holds (ref = bind = 1) is the
        # kernel's bookkeeping: no file names it (tcsync dump leaves it out),
        # and re-created it is whatever number is free then. Shared actions
        # and table actions (ref > bind) keep theirs: that is the sharing.
        private = v.get("ref") == 1 and v.get("bind") == 1
        return {k: clean(x) for k, x in sorted(v.items()) if k not in DROP and not (
            k == "cookie" and isinstance(x, str) and len(x) == 32 and x.startswith(FINGERPRINTS)) and not (
            k == "index" and private)}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v


def state(ns):
    """The tc state of every device of NS, as a dict (uncleaned)."""
    links = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show"], check=True,
                                      capture_output=True, text=True).stdout)
    state = {}
    for dev in sorted(l["ifname"] for l in links):
        qdiscs = tc(ns, "qdisc", "show", "dev", dev)
        classes = tc(ns, "class", "show", "dev", dev)
        parents = []
        for q in qdiscs:
            if isinstance(q, str):  # a text line: "qdisc KIND HANDLE ..."
                words = q.split()
                q = {"kind": words[1], "handle": words[2]} if len(words) > 2 and words[0] == "qdisc" else {"kind": "", "handle": "0:"}
            if q["kind"] == "clsact":
                parents += [["ingress"], ["egress"]]
            elif q["kind"] == "ingress":
                parents.append(["ingress"])
            elif q["handle"] != "0:":
                parents.append(["parent", q["handle"]])
        for c in classes:
            handle = c["handle"] if isinstance(c, dict) else c.split()[2]
            parents.append(["parent", handle])
        filters = {" ".join(p): tc(ns, "filter", "show", "dev", dev, *p) for p in parents}
        state[dev] = {"qdiscs": qdiscs, "classes": classes, "filters": filters}
    return state


if __name__ == "__main__":
    print(json.dumps(clean(state(sys.argv[1])), indent=1, sort_keys=True))
