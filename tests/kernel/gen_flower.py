#!/usr/bin/env python3
"""Writes a tcsync file with N flower rules on v0's clsact ingress, each
matching one source MAC with a gact verdict (the shape of the kernel's
tdc_batch.py), spread over prefs of 1000 rules.
usage: gen_flower.py N [BAD_AT] [VARIANT]  -- BAD_AT: rule index given an
indev that does not exist, so the kernel refuses exactly that step; VARIANT
b: every rule's verdict is pass instead of drop (a 10k-step change)."""
import sys

n = int(sys.argv[1])
bad = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else -1
verdict = "pass" if len(sys.argv) > 3 and sys.argv[3] == "b" else "drop"
out = ["version: 1", "devices:", "  v0:", "    qdiscs: [{kind: clsact}]", "    filters:"]
for i in range(n):
    mac = "02:00:00:%02x:%02x:%02x" % (i >> 16 & 255, i >> 8 & 255, i & 255)
    extra = ", indev: nosuch0" if i == bad else ""
    out.append("      - {parent: ingress, pref: %d, protocol: ip, flower: {src_mac: \"%s\"%s}, actions: [{gact: {control: %s}}]}"
               % (100 + i // 1000, mac, extra, verdict))
print("\n".join(out))
