#!/usr/bin/env python3
"""The include arrows of src/ run down the stages, never up (docs/architecture.md).

Each folder of src/ has a floor; a file may include its own folder and any
folder on a lower floor. The pure core (everything below kernel/) never
includes kernel/ or cli/.

Inside a folder the files have an order too: a unit (x.h with its x.cpp)
may include the headers of its own folder only where no arrow comes back,
i.e. the units' includes make no cycle (a cycle is one job split over
files that each need the other, or a type in the wrong file). No floors are
declared inside folders: any order without a cycle is one.

With --sizes: no file of src/ over MAX_LINES lines, but a kind's own file
(under kinds/) that says why in its first lines ("Over 1,200 lines: ...").

Prints every arrow against these and exits 1 if there is one."""
import pathlib
import re
import sys
from collections import defaultdict

FLOORS = {
    "base": 0,      # diagnostics with locations, tc units and handles, hex, small vectors
    "netlink": 1,   # messages and attributes over caller-owned buffers; request batches
    "yaml": 1,      # the YAML reader (events, nodes) and the flow-style emitter
    "model": 2,     # the kind-table framework, the model, fingerprints
    "kinds": 3,     # one table per tc kind, and the registry of them
    "file": 4,      # the loader, the state writer, the schema
    "codec": 4,     # model <-> rtnetlink messages
    "import": 5,    # tc batch files to tcsync files
    "plan": 5,      # differ, action table, atomic switch, plan printing
    "stats": 5,     # counters beside the model; joined to the files' names; text/json/prometheus/dot
    "apply": 6,     # the applier and the kernel port it drives
    "watch": 7,     # watch's loop behind its edge (watch_edge.h), debouncing, the repair counter, event lines
    "kernel": 8,    # sockets, dumps, links, namespaces, lock, probe, bpf loader, the monitor
    "cli": 9,       # the commands: the only place that joins core and kernel
}

# Cycles left to undo, each with the change that undoes it: printed, not
# counted. Keep this empty; it names what a merge brought in.
KNOWN_CYCLES: set = set()  # cycles to undo, printed and not counted: none

MAX_LINES = 1200
SIZE_REASON = "Over 1,200 lines:"


def unit_cycles(src, arrows):
    """The cycles among the units (a path without its extension) of each
    folder, as lists of "file:line: includes header" arrows."""
    graph = defaultdict(dict)  # unit -> {included unit: the first such include}
    for (unit, to), where in arrows.items():
        graph[unit].setdefault(to, where)
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v), on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in cycles:
        members = set(comp)
        if frozenset(comp) in KNOWN_CYCLES:
            print(f"known, to undo: include cycle among {', '.join(comp)}")
            continue
        lines = [graph[a][b] for a in comp for b in sorted(graph[a]) if b in members]
        out.append(f"include cycle among {', '.join(comp)}: " + "; ".join(lines))
    return out


def oversized(src):
    bad = []
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".h", ".cpp") or not f.is_file():
            continue
        lines = f.read_text().splitlines()
        if len(lines) <= MAX_LINES:
            continue
        head = "\n".join(lines[:40])
        kind = f.relative_to(src).parts[0] == "kinds"
        if kind and SIZE_REASON in head:
            continue
        why = "a kind's file may be, with a reason in its header" if kind else "split it by job"
        bad.append(f"{f}: {len(lines)} lines, over {MAX_LINES} ({why}: '{SIZE_REASON} ...')")
    return bad


def main(src, sizes=False):
    src = pathlib.Path(src)
    bad = []
    arrows = {}  # (unit, included unit of the same folder) -> "file:line: includes header"
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".h", ".cpp", ".def") or not f.is_file():
            continue
        top = f.relative_to(src).parts[0]
        if top not in FLOORS:
            bad.append(f"{f}: folder '{top}' has no floor in {__file__}")
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            m = re.match(r'#include "([a-z_]+)/([a-z_0-9/]+)\.(h|def)"', line)
            if not m:
                continue
            to = m.group(1)
            unit = str(f.relative_to(src).with_suffix(""))
            included = f"{to}/{m.group(2)}"
            if to == top and included != unit:
                arrows.setdefault((unit, included), f"{f}:{n}: includes {included}.{m.group(3)}")
            if to not in FLOORS:
                bad.append(f"{f}:{n}: includes unknown folder '{to}'")
            elif to != top and FLOORS[to] >= FLOORS[top]:
                bad.append(f"{f}:{n}: {top} (floor {FLOORS[top]}) includes {to} (floor {FLOORS[to]}): an arrow up or across")
    bad += unit_cycles(src, arrows)
    if sizes:
        bad += oversized(src)
    for b in bad:
        print(b)
    print(f"{len(bad)} arrow(s) against the stages" + (" or files over the size" if sizes else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--sizes"]
    sys.exit(main(args[0] if args else "src", sizes="--sizes" in sys.argv[1:]))
