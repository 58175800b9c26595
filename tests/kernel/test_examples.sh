#!/bin/bash
# Every example applies on this kernel, is idempotent, and dumps back to a
# file that applies to the same state.
source "$(dirname "$0")/lib.sh"
for f in "$EXAMPLES"/*.yaml; do
  make_ns 4
  echo "# $(basename "$f")"
  expect_rc 0 ts validate "$f"
  expect_rc 0 ts apply "$f"
  expect_rc 0 ts diff "$f"
  expect_contains "in sync"
  snapshot >"$TMP/applied.txt"
  expect_rc 0 ts dump
  echo "$OUT" >"$TMP/dump.yaml"
  expect_rc 0 ts diff "$TMP/dump.yaml"
  expect_rc 0 ts diff "$f"
  ip netns del "$NS"
done
finish
