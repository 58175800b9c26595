#!/bin/bash
# Configures and builds tcsync into ./build (Release with debug info).
#   scripts/build.sh          the tool and its tests (needs install-deps.sh --tests)
#   scripts/build.sh --tool   the tool alone (what install-deps.sh installs suffices)
set -euo pipefail
cd "$(dirname "$0")/.."
testing=ON
[ "${1:-}" = --tool ] && testing=OFF
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=$testing >/dev/null
cmake --build build -j"$(nproc)"
