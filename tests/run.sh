#!/usr/bin/env bash
# Installs the dependencies, builds with a CMake preset (default: debug) and runs every test.
#   tests/run.sh                 # debug build, all tiers
#   tests/run.sh asan-ubsan      # the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   tests/run.sh debug -L e2e    # extra arguments go to ctest (here: only the e2e tier)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-debug}"
shift || true
deploy/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
ctest --preset "$preset" -j"$(nproc)" "$@"
