#!/bin/bash
# Builds the core and unit tests with clang, ASan and UBSan, runs the unit
# tests there, then runs each libFuzzer target on its corpus
# (tests/fuzz/corpus). Any sanitizer report or crash fails the run, and the
# report, the failing input (hex) and what did not survive the round trip are
# printed in full.
#
# usage: sanitize-and-fuzz.sh            fixed seed and run count: the same
#                                        inputs every time (what CI runs, so a
#                                        result depends on the code only)
#        sanitize-and-fuzz.sh SECONDS    explore: a random seed for SECONDS per
#                                        fuzzer; add what it finds to the corpus
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/sanitize
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Line tables only (-gline-tables-only, not Debug's -g): enough for the
# sanitizers' stack traces, and the build (most of this script's time in
# CI) is about a quarter shorter.
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DCMAKE_CXX_COMPILER=clang++-14 \
  -DTCSYNC_FUZZ=ON -DCMAKE_CXX_FLAGS="$SAN -O1" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null
cmake --build $B -j"$(nproc)" --target unit_tests fuzz_loader fuzz_decoder >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== unit tests under ASan+UBSan"
$B/tests/unit_tests

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Runs per fuzzer in the fixed mode: about 20-40 s each on two cores.
declare -A RUNS=([loader]=60000 [decoder]=150000)
for t in loader decoder; do
  if [ $# -ge 1 ]; then
    mode=(-max_total_time="$1")
    echo "== fuzz_$t for ${1}s (random seed)"
  else
    mode=(-seed=1 -runs="${RUNS[$t]}")
    echo "== fuzz_$t: ${RUNS[$t]} runs, seed 1"
  fi
  rm -rf "${work:?}"/*
  mkdir -p "$work/new" "$work/crash"
  # New inputs go to a scratch dir; the committed corpus is only read.
  if ! $B/fuzz_$t "${mode[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/crash/" "$work/new" tests/fuzz/corpus/$t >"$work/log" 2>&1; then
    echo "fuzz_$t FAILED; its report:"
    grep -v -E "^#[0-9]+" "$work/log" | tail -n 80
    for f in "$work"/crash/*; do
      [ -e "$f" ] || continue
      echo "-- input $(basename "$f") (add it to tests/fuzz/corpus/$t once fixed):"
      od -A d -t x1 "$f" | head -n 64
    done
    exit 1
  fi
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units)|Done" "$work/log" | tail -n 3
done
echo "sanitizers and fuzzers: clean"
