#!/bin/bash
# 50 MB hostile files are refused (or read) in bounded time and memory, each
# error at FILE:LINE:COL: one mapping of millions of keys (in a rule, at the
# top, the same keys again and again) and flow collections nested millions
# deep. Before the bounds in yaml/yaml_reader.cpp these took minutes to hours
# (the duplicate-key scan and libyaml's simple-key walk were quadratic).
#   usage: test_hostile_files.sh TCSYNC
set -euo pipefail
tcsync=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
n = 50 * 1024 * 1024 // 12
head = "version: 1\ndevices:\n  v0:\n    filters:\n      - "
with open(d + "/keys_rule.yaml", "w") as f:
    f.write(head + "{" + ", ".join("k%07d: 1" % i for i in range(n)) + "}\n")
with open(d + "/keys_top.yaml", "w") as f:
    f.write("version: 1\n" + "".join("k%07d: 1\n" % i for i in range(n)))
with open(d + "/keys_again.yaml", "w") as f:
    f.write(head + ("\n        ".join("k%d: 1" % (i % 1000) for i in range(n))) + "\n")
with open(d + "/deep.yaml", "w") as f:
    f.write(head + "[" * (25 * 1024 * 1024) + "]" * (25 * 1024 * 1024) + "\n")
PY
fail=0
for f in keys_rule keys_top keys_again deep; do
  # 5 s is the bound the files must meet; the quadratic paths took > 90 s.
  start=${EPOCHREALTIME/./}
  set +e
  timeout 30 "$tcsync" validate "$dir/$f.yaml" >/dev/null 2>"$dir/err"
  rc=$?
  set -e
  us=$((${EPOCHREALTIME/./} - start))
  secs=$((us / 1000000)).$(printf %06d $((us % 1000000)))
  first=$(grep -m1 -o "$f.yaml:[0-9]*:[0-9]*: error: .\{0,60\}" "$dir/err" || true)
  echo "$f: exit $rc in ${secs}s: ${first:-no located error}"
  if [ "$rc" != 1 ] || [ -z "$first" ] || [ "$us" -gt 5000000 ]; then fail=1; fi
done
exit $fail
