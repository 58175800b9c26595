#!/bin/bash
# Builds the core and unit tests with clang, ASan and UBSan, runs the unit
# tests there, then runs each libFuzzer target for a bounded time on its
# corpus (tests/fuzz/corpus). Any sanitizer report or crash fails the run.
# usage: sanitize-and-fuzz.sh [SECONDS_PER_FUZZER]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
B=build/sanitize
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 -DTCSYNC_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="$SAN -O1" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null
cmake --build $B -j"$(nproc)" --target unit_tests fuzz_loader fuzz_decoder >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== unit tests under ASan+UBSan"
$B/tests/unit_tests
for t in loader decoder; do
  echo "== fuzz_$t for ${SECS}s"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # New inputs go to a scratch dir; the committed corpus is only read.
  $B/fuzz_$t -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work" tests/fuzz/corpus/$t 2>&1 | grep -E "^(#|stat::number_of_executed_units|==|SUMMARY)|ERROR|Done" | tail -5
  rm -rf "$work"
done
echo "sanitizers and fuzzers: clean"
