#!/usr/bin/env python3
"""tcsync watch: how long from a foreign change to the repaired event.

    sudo python3 bench/watch_bench.py [--runs R] [--debounce MS,...] TCSYNC [N]

A throwaway namespace with veth v0/v1 and bench/gen.py's u32 set of N rules
(default 1000: clsact, a 256-bucket hash table, N rules with mirred) on v0,
watched by `tcsync watch`. Alternating rounds, per --debounce value:

  filter    one of the N rules deleted with `tc filter del`: from just before
            tc runs to the `repaired` line on watch's stdout
  recreate  v0 deleted and created again (`ip link add`, the state gone with
            it): from just before `ip link add` to the `applied` line
  tc -b     the reference, in the same round: the time `tc -b` takes to put
            the whole set back on a re-created v0 (what a script that
            noticed the loss at once would need), and `tc filter add` of
            the one rule

With --targeted (the repair from the event alone, no dump; issue #18 at
100k rules): the set is applied with `tcsync apply` first, then one watch
(-v) is started and, once it has started (its first plan found v0 in sync),
its idle CPU is read over 3 s; then per round, each timed from just before
tc runs to the `repaired` line (and from tc's exit, which at 100k rules
and under load is most of it):

  deleted   one rule deleted (`tc filter del`)
  changed   one rule changed (`tc filter replace`, its mirred action
            redirect -> mirror)
  foreign   one rule added in the declared list (`tc filter add`, a handle
            the file does not have)

and watch's stderr must say each was repaired by the targeted path
("targeted:"), never "full re-plan". At the end `tcsync diff` must be in
sync.

Each row: best and median of R rounds, wall ms; `event ms` is the figure
watch reports itself (first event of the burst -> ACKs of the repair), so
the difference to `filter` is the event's way to watch plus the output.
Namespaces and temp files are removed at exit, also on failure or Ctrl-C.
"""
import argparse
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "tcsw-%d" % os.getpid()
WORK = tempfile.mkdtemp(prefix="watch-bench-")
PROCS = []
TIMEOUT = 30  # s per awaited event; more for large sets (main)
RETRIES = []  # watch's "planned again" errors seen
NOT_QUIET = []  # events where none was expected (printed at the end)


def sh(*cmd):
    subprocess.run(list(cmd), check=True, stdout=subprocess.DEVNULL)


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    shutil.rmtree(WORK, ignore_errors=True)


def make_veth():
    sh("ip", "-n", NS, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
    sh("ip", "-n", NS, "link", "set", "v0", "up")
    sh("ip", "-n", NS, "link", "set", "v1", "up")


class Watch:
    """tcsync watch with its stdout read by a thread: (arrival time, event)."""

    def __init__(self, tcsync, yaml, debounce, verbose=False):
        self.p = subprocess.Popen([tcsync, "--netns", NS, "--format", "json"] + (["-v"] if verbose else []) +
                                  ["watch", "--debounce", str(debounce), yaml],
                                  stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "watch.err"), "w"), text=True)
        PROCS.append(self.p)
        self.q = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.q.put((time.monotonic(), json.loads(line)))

    def wait(self, event, timeout=None, **want):
        timeout = timeout or TIMEOUT
        end = time.monotonic() + timeout
        while True:
            try:
                t, e = self.q.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                raise RuntimeError("no %s %s within %d s; seen: %s; stderr: %s" % (
                    event, want, timeout, self.seen[-5:], open(os.path.join(WORK, "watch.err")).read()[-2000:]))
            self.seen.append({k: v for k, v in e.items() if k != "diff"})
            if e["event"] in event.split("|") and all(e.get(k) == v for k, v in want.items()):
                return t, e
            # A failed apply that watch plans again (a dump that raced with
            # a change at 100k rules) is reported and counted, not fatal.
            if e["event"] == "error" and "planned again" not in e.get("message", ""):
                raise RuntimeError("watch: %s" % e)
            if e["event"] == "error":
                RETRIES.append(e["message"])

    def quiet(self, secs):
        """Drains what comes within secs (the verifying re-plan is quiet)."""
        end = time.monotonic() + secs
        while time.monotonic() < end:
            try:
                t, e = self.q.get(timeout=end - time.monotonic())
                if e["event"] in ("drift", "repaired", "error"):
                    NOT_QUIET.append({k: v for k, v in e.items() if k not in ("diff", "errors")})
            except queue.Empty:
                pass

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(TIMEOUT)  # a re-plan in progress is finished first (seconds at 100k rules)
        if rc != 0:
            raise RuntimeError("watch exited %d" % rc)


def stats(xs):
    return "%.1f | %.1f" % (min(xs), statistics.median(xs))


def drifts(line):
    """tc commands that delete, change, and add a foreign neighbour of one rule of the batch."""
    handle = line[line.index("handle") + 1]
    rule = ["tc", "-n", NS] + line
    at = rule.index("add")
    changed = rule[:at] + ["replace"] + rule[at + 1:]
    changed[changed.index("redirect")] = "mirror"
    foreign = list(rule)
    foreign[foreign.index(handle)] = handle.rsplit(":", 1)[0] + ":ffe"
    deleted = rule[:at] + ["del"] + rule[at + 1:rule.index("u32") + 1]
    return deleted, changed, foreign


def targeted(a, tcsync, yaml, batch):
    deb = int(a.debounce.split(",")[-1])
    # Another rule each round: one rule repaired 5 times within a minute is
    # a conflict (never fight) and left alone.
    lines = [l.split() for l in open(batch).read().strip().splitlines()[-a.runs:]]
    print("# tcsync watch --targeted, u32:%d on v0, %d rounds, debounce %d ms, load %s" % (
        a.n, a.runs, deb, open("/proc/loadavg").read().split()[0]), flush=True)
    t0 = time.monotonic()
    sh(tcsync, "--netns", NS, "apply", yaml)
    print("  tcsync apply: %.1f s" % (time.monotonic() - t0), flush=True)
    t0 = time.monotonic()
    w = Watch(tcsync, yaml, deb, verbose=True)
    w.wait("started")
    print("  watch started (its first plan, one dump of v0): %.1f s" % (time.monotonic() - t0), flush=True)
    w.quiet(0.5)
    hz = os.sysconf("SC_CLK_TCK")
    ticks = lambda: sum(int(x) for x in open("/proc/%d/stat" % w.p.pid).read().rsplit(")", 1)[1].split()[11:13])
    c0 = ticks()
    w.quiet(5)
    idle = (ticks() - c0) * 1000 / hz / 5
    rows = {"deleted": [], "changed": [], "foreign": []}
    evms = {k: [] for k in rows}
    after_tc = {k: [] for k in rows}
    err = os.path.join(WORK, "watch.err")
    for rnd in range(a.runs):
        deleted, changed, foreign = drifts(lines[-1 - rnd])
        for what, cmd in (("deleted", deleted), ("changed", changed), ("foreign", foreign)):
            t0 = time.monotonic()
            sh(*cmd)
            t_tc = time.monotonic()
            t1, e = w.wait("repaired", device="v0")
            rows[what].append((t1 - t0) * 1000)
            after_tc[what].append((t1 - t_tc) * 1000)
            evms[what].append(e["ms"])
            w.quiet(0.3)  # its own echo: settled quietly
        print("  round %d done, load %s" % (rnd + 1, open("/proc/loadavg").read().split()[0]), flush=True)
    c0 = ticks()
    w.quiet(3)
    idle_after = (ticks() - c0) * 1000 / hz / 3
    w.stop()
    log = open(err).read()
    n_targeted = log.count(" steps, ")
    n_full = log.count("full re-plan")
    diff = subprocess.run([tcsync, "--netns", NS, "diff", yaml], capture_output=True, text=True)
    print("| what (u32 %d rules, --debounce %d) | best ms | median ms | from tc's exit, best / median | watch's own ms, best / median |" % (a.n, deb))
    print("|---|---|---|---|---|")
    for what, label in (("deleted", "one rule deleted (`tc filter del`)"), ("changed", "one rule changed (`tc filter replace`)"),
                        ("foreign", "one foreign rule added (`tc filter add`)")):
        print("| %s -> `repaired` line | %s | %s | %.1f / %.1f |" % (
            label, stats(rows[what]), stats(after_tc[what]).replace(" |", " /"), min(evms[what]), statistics.median(evms[what])))
    print("| idle CPU, ms per s (5 s after start, nothing happening) | %.1f | | | |" % idle)
    print("| idle CPU, ms per s (3 s after the last repair) | %.1f | | | |" % idle_after)
    print("targeted repairs: %d, full re-plans: %d (of %d drifts); tcsync diff after: exit %d" % (
        n_targeted, n_full, 3 * a.runs, diff.returncode))
    if NOT_QUIET:
        print("events where quiet was expected: %d: %s" % (len(NOT_QUIET), NOT_QUIET[:5]))
    if n_full or diff.returncode != 0 or n_targeted != 3 * a.runs:
        print(log[-3000:])
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--debounce", default="150,20")
    ap.add_argument("--targeted", action="store_true", help="deleted/changed/foreign rule and idle CPU, one watch")
    ap.add_argument("tcsync")
    ap.add_argument("n", nargs="?", type=int, default=1000)
    a = ap.parse_args()
    tcsync = os.path.abspath(a.tcsync)
    global TIMEOUT
    TIMEOUT = 30 + a.n // 1000
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(143))
    prefix = os.path.join(WORK, "set")
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), "u32", str(a.n), prefix], check=True,
                   stdout=subprocess.DEVNULL)
    yaml, batch = prefix + ".yaml", prefix + ".tc"
    # One rule to delete and add back: the last line of the batch.
    last = open(batch).read().strip().splitlines()[-1].split()
    handle = last[last.index("handle") + 1]
    rule_add = ["tc", "-n", NS] + last
    rule_del = ["tc", "-n", NS, "filter", "del", "dev", "v0", "ingress", "prio", "10", "protocol", "ip", "handle", handle, "u32"]
    sh("ip", "netns", "add", NS)
    make_veth()
    if a.targeted:
        return targeted(a, tcsync, yaml, batch)
    print("# tcsync watch, u32:%d on v0, %d rounds, load %s" % (a.n, a.runs, open("/proc/loadavg").read().split()[0]))
    rows = {}
    for rnd in range(a.runs):
        for deb in [int(x) for x in a.debounce.split(",")]:
            w = Watch(tcsync, yaml, deb)
            w.wait("started")
            w.quiet(0.3 + a.n / 20000)  # the verifying re-plan after the first apply
            r = rows.setdefault(deb, {"filter": [], "filter_ev": [], "recreate": [], "recreate_ev": [], "idle": []})
            # Idle: CPU time (user + system) over 3 s with nothing happening.
            hz = os.sysconf("SC_CLK_TCK")
            ticks = lambda: sum(int(x) for x in open("/proc/%d/stat" % w.p.pid).read().rsplit(")", 1)[1].split()[11:13])
            c0 = ticks()
            w.quiet(3)
            r["idle"].append((ticks() - c0) * 1000 / hz / 3)
            t0 = time.monotonic()
            sh(*rule_del)
            t1, e = w.wait("repaired", device="v0")
            r["filter"].append((t1 - t0) * 1000)
            r["filter_ev"].append(e["ms"])
            w.quiet(deb / 1000 + 0.3 + a.n / 20000)
            sh("ip", "-n", NS, "link", "del", "v0")
            w.wait("device-gone", device="v0")
            t0 = time.monotonic()
            make_veth()
            t1, e = w.wait("applied|repaired", device="v0")
            r["recreate"].append((t1 - t0) * 1000)
            r["recreate_ev"].append(e["ms"])
            w.quiet(deb / 1000 + 0.3 + a.n / 20000)
            w.stop()
        # The reference in the same round: tc -b of the whole set on a fresh
        # v0, and tc of the one rule.
        sh("ip", "-n", NS, "link", "del", "v0")
        make_veth()
        t0 = time.monotonic()
        sh("tc", "-n", NS, "-b", batch)
        rows.setdefault("tc", {"batch": [], "rule": []})["batch"].append((time.monotonic() - t0) * 1000)
        sh(*rule_del)
        t0 = time.monotonic()
        sh(*rule_add)
        rows["tc"]["rule"].append((time.monotonic() - t0) * 1000)
        print("  round %d done, load %s" % (rnd + 1, open("/proc/loadavg").read().split()[0]), flush=True)
    print("| what | debounce ms | best ms | median ms |")
    print("|---|---|---|---|")
    for deb, r in rows.items():
        if deb == "tc":
            continue
        print("| one rule deleted -> `repaired` line | %d | %s |" % (deb, stats(r["filter"])))
        print("| ... watch's own `ms` (first event -> ACKs) | %d | %s |" % (deb, stats(r["filter_ev"])))
        print("| v0 re-created -> `applied` line (%d rules back) | %d | %s |" % (a.n, deb, stats(r["recreate"])))
        print("| ... watch's own `ms` | %d | %s |" % (deb, stats(r["recreate_ev"])))
        print("| idle CPU, ms per s (3 s, nothing happening) | %d | %s |" % (deb, stats(r["idle"])))
    print("| `tc -b` of the whole set on a fresh v0 | - | %s |" % stats(rows["tc"]["batch"]))
    print("| `tc filter add` of the one rule | - | %s |" % stats(rows["tc"]["rule"]))
    if NOT_QUIET:
        print("events where quiet was expected: %d: %s" % (len(NOT_QUIET), NOT_QUIET[:5]))
    if RETRIES:
        print("watch planned again after a failed apply %d times: %s" % (len(RETRIES), RETRIES[:3]))


if __name__ == "__main__":
    try:
        main()
    finally:
        cleanup()
