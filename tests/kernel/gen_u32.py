#!/usr/bin/env python3
"""Writes a tcsync file with N u32 rules on v0 under an htb root, spread over
prefs of 1000 rules (u32 node ids are 12 bits per bucket).
usage: gen_u32.py N [BAD_AT] [VARIANT]  -- BAD_AT: rule index given an indev
that does not exist, so the kernel refuses exactly that step; VARIANT b:
every rule classifies to 1:20 instead of 1:10 (a change of every rule)."""
import sys

n = int(sys.argv[1])
bad = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "-" else -1
cls = "1:20" if len(sys.argv) > 3 and sys.argv[3] == "b" else "1:10"
out = ["version: 1", "devices:", "  v0:", "    qdiscs:", '      - {kind: htb, handle: "1:", default: "1:10"}',
       "    classes:", '      - {classid: "1:10", rate: 100mbit}', '      - {classid: "1:20", rate: 200mbit}',
       "    filters:"]
for i in range(n):
    pref = 100 + i // 1000
    ip = "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255)
    extra = ", indev: nosuch0" if i == bad else ""
    out.append('      - {parent: "1:", pref: %d, protocol: ip, u32: {match: [{ip: {dst: %s}}]%s}, classid: "%s"}'
               % (pref, ip, extra, cls))
print("\n".join(out))
