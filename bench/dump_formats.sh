#!/bin/bash
# `dump` as YAML and as JSON of 100k u32 rules (bench/gen.py u32, made by
# tc -b in a throwaway namespace), alternating with another build's YAML
# dump; checks the YAML bytes are the same and the JSON holds the same
# document. usage: bench/dump_formats.sh OTHER_TCSYNC TCSYNC [ROUNDS] [N]
set -euo pipefail
OTHER=$1 NEW=$2 ROUNDS=${3:-5} N=${4:-100000}
NS=tcs-dumpfmt-$$
D=$(mktemp -d)
cleanup() { ip netns del "$NS" 2>/dev/null || true; rm -rf "$D"; }
trap cleanup EXIT INT TERM
python3 "$(dirname "$0")/gen.py" u32 "$N" "$D/u32" >/dev/null
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up
tc -n "$NS" -b "$D/u32.tc"
echo "build wall user sys peak_rss_kb"
for r in $(seq "$ROUNDS"); do
  for v in other-yaml yaml json; do
    case $v in
      other-yaml) cmd=("$OTHER" --netns "$NS" dump) ;;
      yaml) cmd=("$NEW" --netns "$NS" dump) ;;
      json) cmd=("$NEW" --netns "$NS" --format json dump) ;;
    esac
    /usr/bin/time -f "$v %e %U %S %M" -o "$D/time" "${cmd[@]}" >"$D/out.$v"
    cat "$D/time"
  done
done
cmp "$D/out.other-yaml" "$D/out.yaml" && echo "YAML byte-identical: $(wc -c <"$D/out.yaml") bytes"
python3 -m json.tool "$D/out.json" >/dev/null && echo "JSON valid: $(wc -c <"$D/out.json") bytes"
python3 - "$D/out.json" "$D/out.yaml" <<'P'
import json, sys, yaml
j = json.load(open(sys.argv[1]))
y = yaml.load(open(sys.argv[2]), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
print("same document" if j == y else "DIFFERENT documents")
P
if [ -n "${KEEP:-}" ]; then cp "$D/out.yaml" "$KEEP.yaml"; cp "$D/out.json" "$KEEP.json"; fi
