#!/usr/bin/env python3
"""Runs the vendored tdc corpus through tcsync in the kernel lab and writes
the results (docs/tdc-results.md by default).

usage: tests/tdc/run_tdc.py TCSYNC [--jobs N] [--out FILE.md] [--jsonl FILE]
                            [--timeout S] [CASEFILE.json ...]

Each case file runs in its own lab guest (tests/lab/run-in-lab.sh), N guests
at a time (default 2). A guest that stops answering (one taprio case with a
100 ns cycle time stalls an emulated guest) is killed after --timeout
seconds; the case it was running is recorded as `timeout` and a new guest
goes on from the next case of that file.
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LAB = os.path.join(ROOT, "tests", "lab", "run-in-lab.sh")
JOB = os.path.join(HERE, "lab-job.sh")


def ids_of(path):
    return [c["id"] for c in json.load(open(path))]


def run_file(tcsync, path, timeout):
    """All cases of one file: a list of result dicts, in the file's order."""
    ids = ids_of(path)
    results = {}
    start = None
    while True:
        args = ["bash", LAB, JOB, tcsync, "--files", path]
        if start:
            args += ["--from", start]
        env = dict(os.environ, LAB_TIMEOUT=str(timeout))
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        running = None
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if r["result"] == "started":
                running = r["id"]
            else:
                results[r["id"]] = r
                running = None
        if running is None:
            if p.returncode not in (0, 1):  # the guest died between cases
                missing = [i for i in ids if i not in results]
                for i in missing:
                    results[i] = {"id": i, "file": os.path.relpath(path, os.path.join(HERE, "cases")),
                                  "result": "timeout", "detail": "the lab guest stopped: " + p.stderr[-300:]}
            break
        results[running] = {"id": running, "file": os.path.relpath(path, os.path.join(HERE, "cases")),
                            "result": "timeout",
                            "detail": "the guest stopped answering within %d s; killed" % timeout}
        nxt = ids.index(running) + 1
        if nxt >= len(ids):
            break
        start = ids[nxt]
    return [results[i] for i in ids if i in results]


def summary(all_results):
    by_file = collections.OrderedDict()
    for r in all_results:
        by_file.setdefault(r["file"], []).append(r)
    cols = ["pass", "pass-empty", "fail", "skip", "timeout"]
    lines = ["| file | cases | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    tot = collections.Counter()
    for f, rs in by_file.items():
        c = collections.Counter("fail" if r["result"].startswith("fail") else r["result"] for r in rs)
        tot.update(c)
        tot["cases"] += len(rs)
        lines.append("| %s | %d | %s |" % (f, len(rs), " | ".join(str(c[k]) for k in cols)))
    lines.append("| **all** | %d | %s |" % (tot["cases"], " | ".join(str(tot[k]) for k in cols)))
    ran = tot["pass"] + tot["pass-empty"] + tot["fail"] + tot["timeout"]
    head = ("Of %d cases, %d ran on the lab kernel (their setup and command behaved as the case "
            "expects): %d round-trip (%d of them on a state with something in it), %d fail, "
            "%d timed out; %d cannot run here (reasons below)."
            % (tot["cases"], ran, tot["pass"] + tot["pass-empty"], tot["pass"], tot["fail"], tot["timeout"], tot["skip"]))
    detail = []
    for kind in ("fail", "timeout", "skip"):
        rs = [r for r in all_results if r["result"].startswith(kind)]
        if not rs:
            continue
        detail.append("\n### %s (%d)\n" % (kind, len(rs)))
        for r in rs:
            d = r.get("detail", "").strip().splitlines()
            detail.append("- `%s` %s (%s): %s" % (r["id"], r["file"], r["result"], d[0][:200] if d else ""))
    return head, "\n".join(lines), "\n".join(detail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tcsync")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1500)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "tdc-results.md"))
    ap.add_argument("--jsonl", default=None, help="results, one line per case, written as each file ends")
    ap.add_argument("--resume", action="store_true", help="keep the --jsonl results of files already run")
    a = ap.parse_args()
    tcsync = os.path.abspath(a.tcsync)
    files = [os.path.abspath(f) for f in a.files] or sorted(glob.glob(os.path.join(HERE, "cases", "*", "*.json")))
    cases_dir = os.path.join(HERE, "cases")
    done = {}
    if a.resume and a.jsonl and os.path.exists(a.jsonl):
        for line in open(a.jsonl):
            r = json.loads(line)
            done.setdefault(os.path.join(cases_dir, r["file"]), []).append(r)
    elif a.jsonl:
        open(a.jsonl, "w").close()
    # Big files first, so the last guest to finish is a small one.
    order = sorted((f for f in files if f not in done), key=lambda f: -len(ids_of(f)))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_file, tcsync, f, a.timeout): f for f in order}
        for fut in concurrent.futures.as_completed(futs):
            f = futs[fut]
            done[f] = fut.result()
            c = collections.Counter(r["result"] for r in done[f])
            print("tdc: %-28s %s" % (os.path.relpath(f, cases_dir), dict(c)), flush=True)
            if a.jsonl:
                with open(a.jsonl, "a") as out:
                    for r in done[f]:
                        out.write(json.dumps(r) + "\n")
    results = [r for f in files for r in done[f]]
    head, table, detail = summary(results)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    with open(a.out, "w") as out:
        out.write("# tdc corpus results\n\n")
        out.write("Made by `tests/tdc/run_tdc.py build/tcsync` (commit %s) in the kernel lab "
                  "(Debian's 6.1 kernel under QEMU); what each result means and every normalisation: "
                  "docs/tdc.md.\n\n" % commit)
        out.write(head + "\n\n" + table + "\n" + detail + "\n")
    print(head)


if __name__ == "__main__":
    main()
