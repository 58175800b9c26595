#!/bin/sh
# What the named kinds send and read (scripts/kind-golden.cpp), from one
# build's core library: run it on two builds and diff the outputs to show a
# change to kinds' encode/decode keeps their bytes and decoded options.
#   scripts/kind-golden.sh BUILD_DIR OUT_FILE qdisc:codel action:sample ...
# The tool is built against BUILD_DIR's libtcsync_core.a, with the headers
# of the checkout this script is in (the core's types must match: use it
# on builds of the same headers, or of a change that only adds to them).
set -eu
build=$1 out=$2
shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp /tmp/kind-golden.XXXXXX)
trap 'rm -f "$bin"' EXIT
${CXX:-g++} -std=c++20 -O1 -I"$src/src" "$src/scripts/kind-golden.cpp" "$build/libtcsync_core.a" \
  $(pkg-config --libs yaml-0.1) -o "$bin"
"$bin" "$@" >"$out"
echo "$(wc -l <"$out") lines in $out"
