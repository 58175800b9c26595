#!/usr/bin/env python3
"""Normalize `tc -j` output sections for comparison: drop counters and
kernel bookkeeping (refcnt, stats, bind/ref counts, install/lastuse times)."""
import json
import sys

DROP = {"refcnt", "stats", "stats2", "xstats", "bytes", "packets", "drops", "overlimits",
        "requeues", "backlog", "qlen", "ref", "bind", "installed", "last_used", "first_used",
        "expires", "direct_packets_stat", "lended", "borrowed", "giants", "tokens", "ctokens",
        "not_in_hw", "in_hw", "in_hw_count", "used_hw_stats", "hw_stats", "successful",
        "rule_hit", "order"}

def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in sorted(v.items()) if k not in DROP}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v

for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    if line.startswith("== "):
        print(line)
        continue
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        print(line)
        continue
    print(json.dumps(clean(data), indent=1, sort_keys=True))
