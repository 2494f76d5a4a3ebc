#!/usr/bin/env bash
# Builds gradiens and runs the main job: for now the quick-start example, which
# trains a small tanh network and prints its first and second derivatives.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${GRADIENS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)" --target quickstart
"$build/examples/quickstart"
