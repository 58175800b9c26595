#!/usr/bin/env python3
"""The include arrows of src/ run down the stages, never up (docs/architecture.md).

Each folder of src/ has a floor; a file may include its own folder and any
folder on a lower floor. The pure core (everything below kernel/) never
includes kernel/ or cli/. Prints every arrow that runs up and exits 1."""
import pathlib
import re
import sys

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

def main(src):
    src = pathlib.Path(src)
    bad = []
    for f in sorted(src.rglob("*")):
        if f.suffix not in (".h", ".cpp", ".def") or not f.is_file():
            continue
        top = f.relative_to(src).parts[0]
        if top not in FLOORS:
            bad.append(f"{f}: folder '{top}' has no floor in {__file__}")
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            m = re.match(r'#include "([a-z_]+)/', line)
            if not m:
                continue
            to = m.group(1)
            if to not in FLOORS:
                bad.append(f"{f}:{n}: includes unknown folder '{to}'")
            elif to != top and FLOORS[to] >= FLOORS[top]:
                bad.append(f"{f}:{n}: {top} (floor {FLOORS[top]}) includes {to} (floor {FLOORS[to]}): an arrow up or across")
    for b in bad:
        print(b)
    print(f"{len(bad)} arrow(s) against the stages")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "src"))
