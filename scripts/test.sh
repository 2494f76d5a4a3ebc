#!/usr/bin/env bash
# Builds gradiens and runs the whole test suite through ctest.
# Usage: scripts/test.sh [extra cmake args], e.g. -DGRADIENS_SANITIZE=address,undefined
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${GRADIENS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "$@"
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure
