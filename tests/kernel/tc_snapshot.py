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


def values(text):
    """The JSON values of `text`, one after another, or None if it holds
    anything else."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        try:
            v, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            return None
        out.append(v)


def tc_many(ns, commands, one=tc, timeout=None):
    """one(ns, *command.split()) of each command (default tc()), asked in one `tc -b`:
    under the lab's emulation a process start costs 0.1-0.3 s, and a
    snapshot asks for the filters of every class (64 per skbprio). In batch
    mode each `qdisc show` and `filter show` prints one JSON array; when tc
    prints anything else (the text of an ematch or of fw, hfsc's invalid
    JSON, an error), each half is asked again, down to one command at a time
    (one(), as before): one text filter among 70 costs a dozen processes."""
    if len(commands) < 2:
        return [one(ns, *c.split()) for c in commands]
    p = subprocess.run(["tc", "-n", ns, "-j", *DETAILS, "-b", "-"], input="".join(c + "\n" for c in commands),
                       capture_output=True, text=True, timeout=timeout)
    got = values(p.stdout) if p.returncode == 0 else None
    if got is not None and len(got) == len(commands) and all(isinstance(v, list) for v in got):
        return got
    half = len(commands) // 2
    return tc_many(ns, commands[:half], one, timeout) + tc_many(ns, commands[half:], one, timeout)


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


def devices(ns):
    links = json.loads(subprocess.run(["ip", "-n", ns, "-j", "link", "show"], check=True,
                                      capture_output=True, text=True).stdout)
    return sorted(l["ifname"] for l in links)


def state(ns, devs=None):
    """The tc state of every device of NS (or of DEVS), as a dict (uncleaned)."""
    devs = devs or devices(ns)
    state, parents = {}, {}
    for dev, qdiscs in zip(devs, tc_many(ns, ["qdisc show dev " + d for d in devs])):
        # Classes one process each (`tc -j class show` prints nothing for
        # none, and text for htb's, so a batch cannot tell them apart), and
        # only where there can be any: a device without a qdisc (down) or
        # with noqueue alone has none.
        classless = all(isinstance(q, dict) and q.get("kind") == "noqueue" for q in qdiscs)
        classes = [] if classless else tc(ns, "class", "show", "dev", dev)
        parents[dev] = []
        for q in qdiscs:
            if isinstance(q, str):  # a text line: "qdisc KIND HANDLE ..."
                words = q.split()
                q = {"kind": words[1], "handle": words[2]} if len(words) > 2 and words[0] == "qdisc" else {"kind": "", "handle": "0:"}
            if q["kind"] == "clsact":
                parents[dev] += [["ingress"], ["egress"]]
            elif q["kind"] == "ingress":
                parents[dev].append(["ingress"])
            elif q["handle"] != "0:":
                parents[dev].append(["parent", q["handle"]])
        for c in classes:
            handle = c["handle"] if isinstance(c, dict) else c.split()[2]
            parents[dev].append(["parent", handle])
        state[dev] = {"qdiscs": qdiscs, "classes": classes, "filters": {}}
    asks = [(dev, " ".join(p)) for dev in devs for p in parents[dev]]
    for (dev, p), f in zip(asks, tc_many(ns, ["filter show dev %s %s" % (dev, p) for dev, p in asks])):
        state[dev]["filters"][p] = f
    return state


if __name__ == "__main__":
    print(json.dumps(clean(state(sys.argv[1])), indent=1, sort_keys=True))
