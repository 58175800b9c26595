#!/bin/bash
# Every C++ file of src/ and tests/ is as clang-format (the repository's
# .clang-format) writes it. Prints each file that is not, with clang-format's
# own diagnostics, and exits 1. Fix: clang-format -i FILE.
set -euo pipefail
root=${1:-$(dirname "$0")/../..}
cd "$root"
cf=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$cf" ]; then echo "clang-format not found (scripts/install-deps.sh --tests installs it)"; exit 1; fi
bad=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while IFS= read -r f; do
  if ! "$cf" --dry-run --Werror "$f" 2>"$log"; then
    head -20 "$log"
    bad=$((bad + 1))
  fi
done < <(find src tests -name '*.cpp' -o -name '*.h' | sort)
echo "$bad file(s) not as .clang-format writes them"
[ "$bad" -eq 0 ]
