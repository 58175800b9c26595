#!/bin/bash
# The demo: installs dependencies, builds tcsync, and runs its main job on
# a throwaway network namespace: plan, apply, idempotence, drift, repair, dump.
# Needs root (network namespaces). Cleans up after itself.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
scripts/build.sh --tool >/dev/null
T=./build/tcsync
NS=tcsync-demo-$$
trap 'ip netns del $NS 2>/dev/null || true' EXIT
ip netns add $NS
ip -n $NS link add v0 type veth peer name v1
ip -n $NS link set v0 up; ip -n $NS link set v1 up
step() { printf '\n$ %s\n' "$*"; "$@" || echo "(exit $?)"; }
step $T validate examples/htb-shaping.yaml examples/ingress-redirect.yaml
step $T --netns $NS diff examples/htb-shaping.yaml examples/ingress-redirect.yaml
step $T --netns $NS apply examples/htb-shaping.yaml examples/ingress-redirect.yaml
step tc -n $NS class show dev v0
step $T --netns $NS diff examples/htb-shaping.yaml examples/ingress-redirect.yaml
echo; echo "# drift: someone changes a rate and adds a rule by hand"
step tc -n $NS class change dev v0 parent 1:1 classid 1:10 htb rate 5mbit ceil 900mbit prio 1
step tc -n $NS filter add dev v0 parent 1: pref 99 protocol ip u32 match ip dst 192.0.2.1/32 flowid 1:30
step $T --netns $NS diff examples/htb-shaping.yaml examples/ingress-redirect.yaml
step $T --netns $NS apply examples/htb-shaping.yaml examples/ingress-redirect.yaml
step $T --netns $NS dump
