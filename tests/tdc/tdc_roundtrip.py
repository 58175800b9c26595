#!/usr/bin/env python3
"""Runs the kernel's own tc selftest cases (tdc, vendored in tests/tdc/cases)
through tcsync, inside the kernel lab (or any kernel with every tc module).

For each case, in a fresh network namespace: the case's setup and command as
tdc runs them, then the state they leave -> `tcsync dump` -> flush ->
`tcsync apply` of the dump -> the same `tc -j` state -> `tcsync diff` in sync
-> a second dump identical to the first. Negative cases (a command the
kernel refuses) are checked the same way on the state they leave.

usage: tdc_roundtrip.py TCSYNC [--cases FILE] [--only ID,ID...] [--from ID]
                        [--files GLOB...] [--expect-pass]
Prints one JSON line per case: {"id", "file", "result", "detail"} where
result is one of
  pass        the round trip holds (and the state was not empty)
  pass-empty  the round trip holds on a state with nothing in it
  fail-STAGE  dump, flush, apply, state, diff or redump went wrong
  skip        the case cannot run here; detail says why (see NOTES below)
  timeout     a command did not return within COMMAND_TIMEOUT seconds
--expect-pass exits 1 unless every case passes (the CI subset).

Every normalisation of the corpus or of tc's output is in this file, under
the heading NORMALISATIONS, each with its reason; docs/tdc.md lists them.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kernel"))
import tc_snapshot  # noqa: E402  (the same normalised `tc -j` view as the kernel tests)

NS = "tdc"
COMMAND_TIMEOUT = int(os.environ.get("TDC_TIMEOUT", 24))  # tdc's own TIMEOUT (tdc_config.py); more on a loaded host

# ---- NORMALISATIONS --------------------------------------------------------
# 1. Each case runs in its own fresh namespace (tdc runs the non-nsPlugin
#    cases in the root namespace and shares one namespace across a suite):
#    the cases' setup and teardown flush what they need, and a fresh
#    namespace makes every case independent of the ones before it.
# 2. tdc's names: TC=tc, IP=ip, DEV0/DEV1 a veth pair (both in the
#    namespace, both up), DUMMY=dummy1 (the cases create it).
# 3. netdevsim is not built in Debian's kernel: `echo "ID PORTS QUEUES" >
#    /sys/bus/netdevsim/new_device` becomes a dummy device named $ETH with
#    QUEUES tx and rx queues (the cases use it only as a multi-queue device
#    for mq, mqprio, taprio, multiq), and del_device deletes it.
# 4. Cases that need what the lab cannot give are skipped, with the reason:
#    $DEV2 (a physical device), tdc_batch.py / $BATCH_FILE (batch files made
#    by tdc's own scripts, 1M-rule stress cases), $EBPFDIR (eBPF objects
#    built by clang in tdc's buildebpfPlugin), scapy (packets injected by
#    tdc's scapyPlugin).
# 5. The state compared is tests/kernel/tc_snapshot.py's: `tc -j` without
#    counters, timestamps, reference counts and hardware status, and
#    without the index of an action that one rule holds alone (the kernel
#    numbers it; no file declares it). Added here: every action table of a
#    kind the case names (`tc -j actions list action KIND`) and the filters
#    of every shared block a qdisc names.
# ----------------------------------------------------------------------------

ACTION_KINDS = ["bpf", "connmark", "csum", "ct", "ctinfo", "gact", "gate", "ife", "mirred",
                "mpls", "nat", "pedit", "police", "sample", "simple", "skbedit", "skbmod",
                "tunnel_key", "vlan", "xt"]
NAMES = {"TC": "tc", "IP": "ip", "DEV0": "v0p0", "DEV1": "v0p1", "DUMMY": "dummy1", "ETH": "eth0",
         "NS": NS}
NEEDS = [("$DEV2", "needs a physical device ($DEV2)"),
         ("$BATCH_FILE", "needs tdc's batch files (tdc_batch.py)"),
         ("$BATCH_DIR", "needs tdc's batch files (tdc_multibatch.py)"),
         ("$EBPFDIR", "needs eBPF objects built by tdc's buildebpfPlugin"),
         ("scapyPlugin", "needs packets injected by tdc's scapyPlugin"),
         ("buildebpfPlugin", "needs eBPF objects built by tdc's buildebpfPlugin")]
# "ID PORTS" without QUEUES: netdevsim's default of one queue.
NETDEVSIM_NEW = re.compile(r'^echo\s+\\?"?(\d+)\s+(\d+)(?:\s+(\d+))?\\?"?\s*>\s*/sys/bus/netdevsim/new_device$')
NETDEVSIM_DEL = re.compile(r'^echo\s+\\?"?(\d+)\\?"?\s*>\s*/sys/bus/netdevsim/del_device$')


class Timeout(Exception):
    pass


# Under the lab's emulation every process costs 50-100 ms: the runner enters
# the case's namespace itself (setns) rather than through `ip netns exec`, and
# runs a command without a shell when it has no shell syntax.
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
HOME_NS = os.open("/proc/self/ns/net", os.O_RDONLY)


def enter(ns_fd):
    if _libc.setns(ns_fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?\\]")


def sh(cmd, timeout=COMMAND_TIMEOUT):
    """Runs a command in the namespace; returns (exit code, output)."""
    argv = ["sh", "-c", cmd] if SHELL_SYNTAX.search(cmd) else shlex.split(cmd)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        raise Timeout(cmd)
    except FileNotFoundError as e:
        return 127, str(e)
    return p.returncode, (p.stdout + p.stderr).strip()


def substitute(cmd):
    cmd = cmd.strip()
    m = NETDEVSIM_NEW.match(cmd)
    if m:
        q = m.group(3) or "1"
        return ("ip link add $ETH numtxqueues %s numrxqueues %s type dummy && ip link set $ETH up" % (q, q)) \
            .replace("$ETH", NAMES["ETH"])
    if NETDEVSIM_DEL.match(cmd):
        return "ip link del %s" % NAMES["ETH"]
    for k in sorted(NAMES, key=len, reverse=True):
        cmd = cmd.replace("$" + k, NAMES[k])
    return cmd


def run_steps(steps):
    """tdc's setup/teardown lists: a string must exit 0; a list gives the
    command and the exit codes it may have. Returns an error text or None."""
    for s in steps:
        if isinstance(s, list):
            cmd, ok = s[0], [int(x) for x in s[1:]] or [0]
        else:
            cmd, ok = s, [0]
        rc, out = sh(substitute(cmd))
        if rc not in ok:
            return "setup `%s` exited %d: %s" % (substitute(cmd), rc, out[:200])
    return None


def tc_json(*args):
    try:
        out = subprocess.run(["tc", "-n", NS, "-j", *args], capture_output=True, text=True,
                             timeout=COMMAND_TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        raise Timeout("tc " + " ".join(args))
    try:
        return json.loads(out) if out.strip() else []
    except json.JSONDecodeError:
        return out.strip().splitlines()


def snapshot(action_kinds, devs=None):
    s = {"devices": tc_snapshot.state(NS, devs), "actions": {}, "blocks": {}}
    for dev in s["devices"].values():
        for q in dev["qdiscs"]:
            if isinstance(q, dict):
                for k in ("ingress_block", "egress_block"):
                    if k in q:
                        s["blocks"][str(q[k])] = tc_json("filter", "show", "block", str(q[k]))
    # Every kind's table in one tc process where each prints JSON (asked
    # one by one through tc_json, which takes a kind tc cannot load, where not).
    listed = tc_snapshot.tc_many(NS, ["actions list action " + k for k in action_kinds],
                                 one=lambda ns, *args: tc_json(*args), timeout=COMMAND_TIMEOUT)
    for k, l in zip(action_kinds, listed):
        if l:
            s["actions"][k] = l
    return tc_snapshot.clean(s)


def is_empty(s):
    devs = s["devices"]
    busy = any(d["classes"] or any(d["filters"].values()) or any(
        not (isinstance(q, dict) and q.get("kind") in ("noqueue", "pfifo_fast", "mq") and q.get("handle") == "0:")
        for q in d["qdiscs"]) for d in devs.values())
    return not busy and not s["actions"] and not any(s["blocks"].values())


def flush(action_kinds, s):
    # One tc process (-force: past the deletes of what is not there).
    # clsact and ingress answer only to their own name (a delete of the
    # other is "Invalid qdisc name"): try both.
    lines = ["qdisc del dev %s %s" % (dev, p) for dev in s["devices"] for p in ("root", "ingress", "clsact")]
    lines += ["actions flush action %s" % k for k in s["actions"]]
    subprocess.run(["tc", "-n", NS, "-force", "-b", "-"], input="".join(l + "\n" for l in lines),
                   capture_output=True, text=True, timeout=COMMAND_TIMEOUT)


def first_difference(a, b):
    la = json.dumps(a, indent=1, sort_keys=True).splitlines()
    lb = json.dumps(b, indent=1, sort_keys=True).splitlines()
    import difflib
    return "\n".join(list(difflib.unified_diff(la, lb, "before", "after", n=2, lineterm=""))[:40])


def tcsync(tcs, *args):
    try:
        p = subprocess.run([tcs, "--netns", NS, *args], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise Timeout("tcsync " + " ".join(args))
    return p.returncode, p.stdout, p.stderr.strip()


def run_case(tcs, case):
    text = json.dumps(case)
    for marker, why in NEEDS:
        if marker in text:
            return "skip", why
    kinds = [k for k in ACTION_KINDS if re.search(r"\b%s\b" % k, text)]
    if os.path.exists("/run/netns/" + NS):
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    subprocess.run(["ip", "netns", "add", NS], check=True)
    ns_fd = os.open("/run/netns/" + NS, os.O_RDONLY)
    enter(ns_fd)
    try:
        subprocess.run(["ip", "-b", "-"], input="link set lo up\nlink add v0p0 type veth peer name v0p1\n"
                       "link set v0p0 up\nlink set v0p1 up\n", check=True, capture_output=True, text=True)
        err = run_steps(case.get("setup", []))
        if err:
            return "skip", err
        rc, out = sh(substitute(case["cmdUnderTest"]))
        want = int(case.get("expExitCode", 0))
        if rc != want:
            return "skip", "command exited %d, the case expects %d on its kernel: %s" % (rc, want, out[:200])
        before = snapshot(kinds)
        rc, dump, err = tcsync(tcs, "dump")
        if rc != 0:
            return "fail-dump", err[:600]
        path = os.path.join(tempfile.gettempdir(), "tdc.yaml")
        with open(path, "w") as f:
            f.write(dump)
        flush(kinds, before)
        # (The devices are the case's: flush and apply make none.)
        devs = sorted(before["devices"])
        flushed = snapshot(kinds, devs)
        if flushed == before and not is_empty(before):
            return "fail-flush", "deleting root/ingress qdiscs and flushing actions changed nothing"
        rc, out, err = tcsync(tcs, "apply", path)
        if rc != 0:
            return "fail-apply", (err + "\n--- dump:\n" + dump)[:1500]
        after = snapshot(kinds, devs)
        if after != before:
            return "fail-state", first_difference(before, after) + "\n--- dump:\n" + dump[:800]
        rc, out, err = tcsync(tcs, "diff", path)
        if rc != 0 or "in sync" not in out:
            return "fail-diff", (out + err)[:800]
        rc, dump2, err = tcsync(tcs, "dump")
        if dump2 != dump:
            import difflib
            return "fail-redump", "\n".join(difflib.unified_diff(dump.splitlines(), dump2.splitlines(), lineterm=""))[:800]
        return ("pass-empty" if is_empty(before) else "pass"), ""
    finally:
        enter(HOME_NS)
        os.close(ns_fd)
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tcsync")
    ap.add_argument("--files", nargs="*", default=None, help="case files (default: all in cases/)")
    ap.add_argument("--cases", help="a file of case ids, one per line (# comments)")
    ap.add_argument("--only", help="case ids, comma-separated")
    ap.add_argument("--from", dest="start", help="start at this case id (after a stalled guest)")
    ap.add_argument("--expect-pass", action="store_true")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(HERE, "cases", "*", "*.json")))
    wanted = None
    if a.cases:
        wanted = {l.split("#")[0].strip() for l in open(a.cases)} - {""}
    if a.only:
        wanted = set(a.only.split(","))
    started = a.start is None
    bad = 0
    counts = {}
    for f in files:
        rel = os.path.relpath(f, os.path.join(HERE, "cases"))
        for case in json.load(open(f)):
            if not started:
                started = case["id"] == a.start
            if not started or (wanted is not None and case["id"] not in wanted):
                continue
            print(json.dumps({"id": case["id"], "file": rel, "result": "started"}), flush=True)
            t0 = time.monotonic()
            try:
                result, detail = run_case(os.path.abspath(a.tcsync), case)
            except Timeout as e:
                result, detail = "timeout", "did not return within %d s: %s" % (COMMAND_TIMEOUT, e)
            if result.startswith(("fail", "timeout")):
                bad += 1
            counts[result] = counts.get(result, 0) + 1
            print(json.dumps({"id": case["id"], "file": rel, "name": case.get("name", ""), "result": result,
                              "detail": detail, "seconds": round(time.monotonic() - t0, 2)}), flush=True)
    print("tdc: %s" % ", ".join("%d %s" % (n, r) for r, n in sorted(counts.items())), file=sys.stderr)
    if a.expect_pass and (bad or counts.get("skip")):
        sys.exit(1)


if __name__ == "__main__":
    main()
