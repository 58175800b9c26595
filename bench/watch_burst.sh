#!/bin/bash
# tcsync watch while another writer re-makes a whole device: N u32 rules
# (bench/gen.py) declared and in sync on v0 of a fresh namespace, then
# `tc qdisc del dev v0 clsact` and `tc -b` of the same rules while watch
# (-v, --debounce 20) watches. Prints tc's time, watch's events and stderr
# (the raced re-plans), and `tcsync diff`'s exit code once watch is quiet.
# Usage: bench/watch_burst.sh path/to/tcsync [N] (root; default N 100000)
set -u
T=$(realpath "${1:?usage: $0 path/to/tcsync [N]}")
N=${2:-100000}
NS=tcsw-burst-$$
D=$(mktemp -d)
trap 'kill $WP 2>/dev/null; ip netns del $NS 2>/dev/null; rm -rf $D' EXIT
python3 "$(dirname "$0")/gen.py" u32 "$N" "$D/set" >/dev/null
ip netns add $NS
ip -n $NS link add v0 type veth peer name v1; ip -n $NS link set v0 up; ip -n $NS link set v1 up
echo "load $(cut -d' ' -f1 /proc/loadavg)"
"$T" --netns $NS apply "$D/set.yaml" >/dev/null
"$T" --netns $NS -v watch --debounce 20 "$D/set.yaml" >"$D/events.jsonl" 2>"$D/watch.err" &
WP=$!
until grep -q '"started"' "$D/events.jsonl"; do sleep 0.5; done
s=$(date +%s.%N)
tc -n $NS qdisc del dev v0 clsact
tc -n $NS -b "$D/set.tc"; echo "tc -b exit $?"
e=$(date +%s.%N)
echo "tc qdisc del + tc -b of $N: $(echo "$e - $s" | bc) s"
# Quiet: watch's stderr (a line per dump, per race) stops growing.
p=-1
for _ in $(seq 300); do sleep 2; n=$(wc -c <"$D/watch.err"); [ "$n" = "$p" ] && break; p=$n; done
echo "events:"; cut -c1-300 "$D/events.jsonl"
echo "stderr:"; cat "$D/watch.err"
"$T" --netns $NS diff "$D/set.yaml" | tail -2; echo "diff rc ${PIPESTATUS[0]}"
echo "load $(cut -d' ' -f1 /proc/loadavg)"
