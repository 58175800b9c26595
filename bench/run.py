#!/usr/bin/env python3
"""Time tcsync against `tc -b` on the same kernel, side by side, in throwaway
network namespaces (root needed). Prints one table per rule set with the
median wall/user/sys time and peak RSS of each tool and the ratios.

usage: bench/run.py [--runs R] [--scenarios LIST] [--keep DIR] [--table] TCSYNC SET...
       bench/run.py --check TCSYNC SET...

SET is KIND:N with KIND u32, htb, isp or ispmq (see gen.py) and N a count such as 10k,
100k or 1m. Scenarios (default all):
  apply   apply from empty: `tcsync apply -q F.yaml` vs `tc -b F.tc`, each
          run in a fresh namespace; tcsync twice: as is (it dumps again
          after applying, to verify) and with --no-verify (what tc -b does).
          F.tc's actions say `no_percpu` (the state tcsync makes); sets with
          actions are also timed against F.percpu.tc, tc's default words
          (actions with per-CPU stats), in extra rows
  noop    the state is there (made by tc -b): `tcsync apply -q F.yaml` vs
          reading it with tc (u32: `tc filter show dev v0 ingress`; htb: one
          `tc -b` of qdisc, class and filter show per device). flower: also
          with the state made by tcsync (fingerprint cookies: the terse
          check), and that with --deep
  change  1% of the rules changed: `tcsync apply -q F.changed.yaml` (and
          with --no-verify) vs `tc -b F.changed.tc` (the same changes as tc
          replace/change lines); the full state is restored, untimed, and
          checked with `tcsync diff` after each run. Each round also times a
          no-op apply, which the target (change <= no-op + 5% of apply)
          is checked against
  dump    `tcsync dump --dev ...` vs `tc -j filter show ...` (htb: tc -j -b
          of qdisc, class and filter show), both written to /dev/null
  diff    `tcsync diff F.yaml` (plan text to /dev/null) in an empty namespace,
          and `tcsync validate F.yaml` (the loader alone) for scale
  phases  CPU per rule in µs (best of the runs), phase by phase as each
          command adds one: `tcsync validate` user (read and model), `tcsync
          diff` in an empty namespace (+ dump, plan and the plan's text),
          `apply --no-verify` user (+ encode and send, no plan text) and its
          sys (the kernel); for F.yaml as given and for the same rules as a
          rule table (gen.py --table), side by side
--table writes the YAML as rule tables (gen.py --table; README "Rule tables");
--template (u32) each rule as a block mapping, as a template writes it.
--check applies each SET once with tc -b and once with tcsync in two
namespaces and compares tests/kernel/tc_snapshot.py of both (use at 10k).

Needs /usr/bin/time (Debian package `time`). Run one benchmark at a time:
the machine has 2 cores.
"""
import argparse
import atexit
import datetime
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = os.path.join(HERE, "..", "tests", "kernel", "tc_snapshot.py")
NAMESPACES = set()
PHASES = []  # the phases scenario's rows
WORK = None


def sh(*cmd, check=True, **kw):
    return subprocess.run(list(cmd), check=check, **kw)


def cleanup():
    for ns in list(NAMESPACES):
        del_ns(ns)
    if WORK and not ARGS.keep:
        shutil.rmtree(WORK, ignore_errors=True)


def on_signal(sig, _frame):
    cleanup()
    sys.exit(128 + sig)


def make_ns(tag, meta):
    ns = "tcsb-%s-%d" % (tag, os.getpid())
    NAMESPACES.add(ns)
    sh("ip", "netns", "add", ns)
    sh("ip", "-n", ns, "link", "set", "lo", "up")
    for d, p in zip(meta["DEVS"].split(), meta["PEERS"].split()):
        q = meta.get("TXQ", "1")  # ispmq: an mq root needs the queues
        sh("ip", "-n", ns, "link", "add", d, "numtxqueues", q, "type", "veth", "peer", "name", p, "numtxqueues", q)
        sh("ip", "-n", ns, "link", "set", d, "up")
        sh("ip", "-n", ns, "link", "set", p, "up")
    return ns


def del_ns(ns):
    # Delete the qdiscs first: synchronous, so the kernel's cleanup of a
    # large rule set does not run in the background of the next timing.
    if os.path.exists("/run/netns/" + ns):
        for d in META_DEVS.get(ns, []):
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", d, "root"], capture_output=True)
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", d, "clsact"], capture_output=True)
            subprocess.run(["tc", "-n", ns, "qdisc", "del", "dev", d, "ingress"], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    NAMESPACES.discard(ns)


META_DEVS = {}
LOADS = {}  # scenario name -> 1-minute load average when its rows were done


def load_now():
    return open("/proc/loadavg").read().split()[0]


def timed(cmd, stdout=subprocess.DEVNULL, ok=(0,)):
    """Runs cmd under /usr/bin/time; returns dict wall/user/sys (s), rss (MB)."""
    out = os.path.join(WORK, "time.out")
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", out] + cmd, stdout=stdout,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode not in ok:
        sys.stderr.write(p.stderr[-3000:])
        raise RuntimeError("exit %d: %s" % (p.returncode, " ".join(cmd)))
    with open(out) as f:
        last = f.read().strip().splitlines()[-1].split()
    return {"wall": float(last[0]), "user": float(last[1]), "sys": float(last[2]), "rss": int(last[3]) / 1024}


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def read_meta(prefix):
    meta = {}
    with open(prefix + ".meta") as f:
        for line in f:
            k, v = line.strip().split("=", 1)
            meta[k] = v.strip("'")
    return meta


def parse_n(s):
    s = s.lower()
    mult = {"k": 1000, "m": 1000000}.get(s[-1], 1)
    return int(float(s[:-1] if s[-1] in "km" else s) * mult)


def generate(kind, n):
    prefix = os.path.join(WORK, "%s-%d%s" % (kind, n, "-table" if ARGS.table else "-template" if ARGS.template else ""))
    if not os.path.exists(prefix + ".meta"):
        t = timed([sys.executable, os.path.join(HERE, "gen.py"), kind, str(n), prefix, "--change", "1"] +
                  (["--table"] if ARGS.table else []) + (["--template"] if ARGS.template else []))
        log("generated %s %d in %.1f s: yaml %.1f MB, tc batch %.1f MB" % (
            kind, n, t["wall"], os.path.getsize(prefix + ".yaml") / 1e6, os.path.getsize(prefix + ".tc") / 1e6))
    return prefix, read_meta(prefix)


def log(msg):
    print("# " + msg, file=sys.stderr, flush=True)


def tc_read_cmd(ns, meta, json):
    """The tc command that reads what tcsync reads, as one process."""
    devs = meta["DEVS"].split()
    j = ["-j"] if json else []
    if meta["KIND"] not in ("htb", "isp", "ispmq"):  # u32, flower: one list at ingress
        return ["tc", "-n", ns] + j + ["filter", "show", "dev", devs[0], "ingress"]
    path = os.path.join(WORK, "show-%s.tc" % meta["KIND"])
    with open(path, "w") as f:
        for d in devs:
            f.write("qdisc show dev %s\nclass show dev %s\n" % (d, d))
            parents = ["%x:" % (0x10 * q) for q in range(1, 5)] if meta["KIND"] == "ispmq" else ["1:"]
            for p in parents:
                f.write("filter show dev %s parent %s\n" % (d, p))
    return ["tc", "-n", ns] + j + ["-b", path]


def fresh(tag, meta):
    ns = make_ns(tag, meta)
    META_DEVS[ns] = meta["DEVS"].split()
    return ns


def bench_set(tcsync, kind, n, runs, scenarios):
    LOADS.clear()
    rows = _bench_set(tcsync, kind, n, runs, scenarios)
    return rows


def _bench_set(tcsync, kind, n, runs, scenarios):
    prefix, meta = generate(kind, n)
    F, FT = prefix + ".yaml", prefix + ".tc"
    FC, FCT = prefix + ".changed.yaml", prefix + ".changed.tc"
    devs = meta["DEVS"].split()
    rows = []  # (scenario, tcsync runs, tc runs or None, note)

    class Rows(list):
        def append(self, row):
            LOADS[row[0]] = load_now()
            list.append(self, row)
    rows = Rows()
    apply_nv = None  # the apply --no-verify runs, for the 1% change target

    if "apply" in scenarios:
        ts, tn, tc, tp = [], [], [], []
        FP = prefix + ".percpu.tc"
        has_p = os.path.exists(FP)
        for r in range(runs):
            order = ("tcsync", "nv", "tc", "tcp") if r % 2 == 0 else ("tcp", "tc", "nv", "tcsync")
            for tool in order:
                if tool == "tcp" and not has_p:
                    continue
                ns = fresh("a", meta)
                if tool == "tcp":
                    tp.append(timed(["tc", "-n", ns, "-b", FP]))
                elif tool == "tc":
                    tc.append(timed(["tc", "-n", ns, "-b", FT]))
                elif tool == "nv":
                    tn.append(timed([tcsync, "--netns", ns, "-q", "apply", "--no-verify", F]))
                else:
                    ts.append(timed([tcsync, "--netns", ns, "-q", "apply", F]))
                del_ns(ns)
            log("apply run %d: tcsync %.2f s, --no-verify %.2f s, tc -b %.2f s" % (
                r + 1, ts[-1]["wall"], tn[-1]["wall"], tc[-1]["wall"]))
        rows.append(("apply from empty", ts, tc, "tc -b F.tc"))
        rows.append(("apply from empty, --no-verify", tn, tc, "tc -b F.tc"))
        apply_nv = tn
        if has_p:  # tc's default words: actions with per-CPU stats (a different state)
            log("tc -b F.percpu.tc: %s s" % ", ".join("%.2f" % x["wall"] for x in tp))
            rows.append(("apply from empty vs tc -b without no_percpu", ts, tp, "tc -b F.percpu.tc"))
            rows.append(("apply --no-verify vs tc -b without no_percpu", tn, tp, "tc -b F.percpu.tc"))

    need_state = {"noop", "change", "dump"} & set(scenarios)
    if need_state:
        ns = fresh("s", meta)
        t0 = timed(["tc", "-n", ns, "-b", FT])
        log("state made by tc -b in %.1f s" % t0["wall"])
        # The two forms make the same state: tcsync sees nothing to do.
        p = sh(tcsync, "--netns", ns, "-q", "diff", F, check=False)
        if p.returncode != 0:
            raise RuntimeError("tcsync diff after tc -b: exit %d (expected 0, in sync)" % p.returncode)
        if "noop" in scenarios:
            ts, tc = [], []
            for r in range(runs):
                ts.append(timed([tcsync, "--netns", ns, "-q", "apply", F]))
                tc.append(timed(tc_read_cmd(ns, meta, False)))
            rows.append(("no-op apply vs tc show", ts, tc, " ".join(tc_read_cmd("NS", meta, False)[3:])))
        if "dump" in scenarios:
            ts, tc = [], []
            dump_cmd = [tcsync, "--netns", ns, "dump"]
            for d in devs:
                dump_cmd += ["--dev", d]
            for r in range(runs):
                ts.append(timed(dump_cmd))
                tc.append(timed(tc_read_cmd(ns, meta, True)))
            rows.append(("dump vs tc -j show", ts, tc, " ".join(tc_read_cmd("NS", meta, True)[3:])))
        if "change" in scenarios:
            ts, tn, tc, tq = [], [], [], []
            for r in range(runs):
                # A no-op in the same round: the target compares the change
                # with it, and this machine's speed drifts between phases.
                tq.append(timed([tcsync, "--netns", ns, "-q", "apply", F]))
                ts.append(timed([tcsync, "--netns", ns, "-q", "apply", FC]))
                if sh(tcsync, "--netns", ns, "-q", "diff", FC, check=False).returncode != 0:
                    raise RuntimeError("after applying the 1% change, diff is not empty")
                sh(tcsync, "--netns", ns, "-q", "apply", "--no-verify", F)
                tn.append(timed([tcsync, "--netns", ns, "-q", "apply", "--no-verify", FC]))
                sh(tcsync, "--netns", ns, "-q", "apply", "--no-verify", F)
                tc.append(timed(["tc", "-n", ns, "-b", FCT]))
                if sh(tcsync, "--netns", ns, "-q", "diff", FC, check=False).returncode != 0:
                    raise RuntimeError("after tc -b of the 1% change, tcsync diff is not empty")
                sh(tcsync, "--netns", ns, "-q", "apply", "--no-verify", F)
            rows.append(("1%% changed (%s steps)" % meta["CHANGED"], ts, tc, "tc -b F.changed.tc"))
            rows.append(("1% changed, --no-verify", tn, tc, "tc -b F.changed.tc"))
            rows.append(("no-op apply, in the rounds of the 1% change", tq, None, ""))
            log("1%% changed, --no-verify minus the no-op of its round (s): %s" % ", ".join(
                "%+.2f" % (b["wall"] - a["wall"]) for a, b in zip(tq, tn)))
            if apply_nv:
                budget = median(tq, "wall") + 0.05 * median(apply_nv, "wall")
                log("target: 1%% changed --no-verify %.2f s <= no-op %.2f s + 5%% of apply --no-verify %.2f s = %.2f s: %s" % (
                    median(tn, "wall"), median(tq, "wall"), median(apply_nv, "wall"), budget,
                    "met" if median(tn, "wall") <= budget else "NOT met"))
        del_ns(ns)

    if "noop" in scenarios and kind == "flower":
        # tcsync-made rules carry fingerprint cookies: the terse no-op check.
        ns = fresh("f", meta)
        t0 = timed([tcsync, "--netns", ns, "-q", "apply", "--no-verify", F])
        log("state made by tcsync in %.1f s" % t0["wall"])
        ts, td, tc = [], [], []
        for r in range(runs):
            ts.append(timed([tcsync, "--netns", ns, "-q", "apply", F]))
            td.append(timed([tcsync, "--netns", ns, "-q", "apply", "--deep", F]))
            tc.append(timed(tc_read_cmd(ns, meta, False)))
        rows.append(("no-op apply (state made by tcsync: terse check) vs tc show", ts, tc,
                     " ".join(tc_read_cmd("NS", meta, False)[3:])))
        rows.append(("no-op apply --deep (state made by tcsync) vs tc show", td, tc,
                     " ".join(tc_read_cmd("NS", meta, False)[3:])))
        del_ns(ns)

    if "diff" in scenarios:
        ns = fresh("d", meta)
        ts, va = [], []
        for r in range(runs):
            ts.append(timed([tcsync, "--netns", ns, "diff", F], ok=(2,)))
            va.append(timed([tcsync, "-q", "validate", F]))
        del_ns(ns)
        rows.append(("diff vs empty ns", ts, None, "plan text to /dev/null"))
        rows.append(("validate (loader only)", va, None, ""))

    if "phases" in scenarios:
        forms = [("as written", F)]
        if not ARGS.table:
            tprefix = os.path.join(WORK, "%s-%d-table" % (kind, n))
            if not os.path.exists(tprefix + ".yaml"):
                sh(sys.executable, os.path.join(HERE, "gen.py"), kind, str(n), tprefix, "--table")
            forms.append(("rule table", tprefix + ".yaml"))
        for form, path in forms:
            va, df, ap = [], [], []
            for r in range(runs):
                va.append(timed([tcsync, "-q", "validate", path]))
                ns = fresh("p", meta)
                df.append(timed([tcsync, "--netns", ns, "diff", path], ok=(2,)))
                ap.append(timed([tcsync, "--netns", ns, "-q", "apply", "--no-verify", path]))
                del_ns(ns)
            best = lambda runs_, k: min(x[k] for x in runs_)
            us = lambda sec: sec * 1e6 / n
            PHASES.append("| %s %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f |" % (
                kind, human(n), form, us(best(va, "user")), us(best(df, "user")), us(best(ap, "user")),
                us(best(ap, "sys")), best(va, "rss")))
    return rows


def fmt_row(kind, n, name, ts, tc):
    def cell(runs):
        return "%.2f / %.2f / %.2f / %.0f" % (median(runs, "wall"), median(runs, "user"), median(runs, "sys"),
                                              median(runs, "rss"))
    def cpu(runs):
        return statistics.median(r["user"] + r["sys"] for r in runs)
    ratio = "%.2f" % (median(ts, "wall") / max(median(tc, "wall"), 0.005)) if tc else "-"
    cratio = "%.2f" % (cpu(ts) / max(cpu(tc), 0.005)) if tc else "-"
    uratio = "%.2f" % (median(ts, "user") / max(median(tc, "user"), 0.005)) if tc else "-"
    return "| %s %s | %s | %s | %s | %s | %s | %s | %s |" % (
        kind, human(n), name, cell(ts), cell(tc) if tc else "-", ratio, cratio, uratio, LOADS.get(name, "-"))


def human(n):
    return "%dm" % (n // 1000000) if n % 1000000 == 0 else "%dk" % (n // 1000) if n % 1000 == 0 else str(n)


def check_set(tcsync, kind, n):
    prefix, meta = generate(kind, n)
    a, b = fresh("ca", meta), fresh("cb", meta)
    sh("tc", "-n", a, "-b", prefix + ".tc")
    sh(tcsync, "--netns", b, "-q", "apply", prefix + ".yaml")
    snaps = []
    for ns in (a, b):
        out = sh(sys.executable, SNAPSHOT, ns, capture_output=True, text=True).stdout
        snaps.append(out.replace(ns, "NS"))
    nf = [sh("tc", "-n", ns, "filter", "show", "dev", meta["DEVS"].split()[0], *(
        ["ingress"] if kind not in ("htb", "isp", "ispmq") else ["parent", "10:" if kind == "ispmq" else "1:"]), capture_output=True,
        text=True).stdout.count("filter ")
        for ns in (a, b)]
    same = snaps[0] == snaps[1]
    print("%s %s: tc -b and tcsync states %s (tc_snapshot.py, %d lines; filter lines on %s: %d vs %d)" % (
        kind, human(n), "IDENTICAL" if same else "DIFFER", snaps[0].count("\n"), meta["DEVS"].split()[0], nf[0], nf[1]))
    if not same:
        with open(os.path.join(WORK, "snap-tc.json"), "w") as f:
            f.write(snaps[0])
        with open(os.path.join(WORK, "snap-tcsync.json"), "w") as f:
            f.write(snaps[1])
        subprocess.run(["diff", os.path.join(WORK, "snap-tc.json"), os.path.join(WORK, "snap-tcsync.json")])
    del_ns(a)
    del_ns(b)
    return same


def main():
    global WORK, ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenarios", default="apply,noop,change,dump,diff,phases")
    ap.add_argument("--keep", help="generate into (and keep) this directory")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--table", action="store_true", help="the YAML as rule tables")
    ap.add_argument("--template", action="store_true", help="u32: each rule in block style (gen.py --template)")
    ap.add_argument("tcsync")
    ap.add_argument("sets", nargs="+")
    ARGS = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/run.py needs root (network namespaces)")
    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs /usr/bin/time: apt-get install time")
    tcsync = os.path.abspath(ARGS.tcsync)
    if ARGS.keep:
        os.makedirs(ARGS.keep, exist_ok=True)
        WORK = ARGS.keep
    else:
        WORK = tempfile.mkdtemp(prefix="tcsync-bench-")
    atexit.register(cleanup)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sets = []
    for s in ARGS.sets:
        kind, n = s.split(":")
        sets.append((kind, parse_n(n)))
    if ARGS.check:
        ok = all([check_set(tcsync, k, n) for k, n in sets])
        sys.exit(0 if ok else 1)
    scen = ARGS.scenarios.split(",")
    print("date: %s" % datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
    print("kernel: %s; tc: %s; cpus: %d; load before: %s" % (
        platform.release(), sh("tc", "-V", capture_output=True, text=True).stdout.strip(), os.cpu_count(),
        open("/proc/loadavg").read().split()[0]))
    print("command: bench/run.py --runs %d --scenarios %s%s %s %s" % (ARGS.runs, ARGS.scenarios,
                                                                     " --table" if ARGS.table else
                                                                     " --template" if ARGS.template else "", ARGS.tcsync,
                                                                     " ".join(ARGS.sets)))
    print()
    print("medians of %d runs; cells: wall / user / sys (s) / peak RSS (MB)" % ARGS.runs)
    print()
    print("| set | scenario | tcsync | tc | wall ratio | cpu ratio (user+sys) | user ratio | load |")
    print("|---|---|---|---|---|---|---|---|")
    bests = []
    for kind, n in sets:
        for name, ts, tc, _note in bench_set(tcsync, kind, n, ARGS.runs, scen):
            print(fmt_row(kind, n, name, ts, tc), flush=True)
            if ts and tc:
                bests.append((kind, n, name, ts, tc))
    # Best of the runs (the runs alternate tcsync and tc): the dump target
    # (issue #20) compares user and sys time best to best, as this host's
    # noise moves medians of kernel time by seconds.
    print()
    print("best of %d alternating runs; cells: user / sys (s), each the least of its own runs" % ARGS.runs)
    print()
    print("| set | scenario | tcsync | tc | user ratio | sys ratio |")
    print("|---|---|---|---|---|---|")
    for kind, n, name, ts, tc in bests:
        tb = {k: min(r[k] for r in ts) for k in ("user", "sys")}
        cb = {k: min(r[k] for r in tc) for k in ("user", "sys")}
        print("| %s %s | %s | %.3f / %.3f | %.3f / %.3f | %.2f | %.2f |" % (
            kind, human(n), name, tb["user"], tb["sys"], cb["user"], cb["sys"], tb["user"] / max(cb["user"], 0.005),
            tb["sys"] / max(cb["sys"], 0.005)))
    if PHASES:
        print()
        print("per phase, µs per rule (user CPU, best of %d; kernel: sys of apply --no-verify); RSS of validate" %
              ARGS.runs)
        print()
        print("| set | form | validate: read + model | diff: + dump, plan, its text | apply --no-verify: + encode, "
              "send | its kernel (sys) | validate RSS (MB) |")
        print("|---|---|---|---|---|---|---|")
        for row in PHASES:
            print(row)


main()
