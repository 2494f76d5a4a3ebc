#!/usr/bin/env bash
# Builds gradiens and runs the main job: the default JSON training run,
# gradiens-train on configs/fashion_mnist_mlp.json (Fashion-MNIST from Debian's
# dataset-fashion-mnist, no download). It shows its progress and ends with the
# test accuracy and where the run directory, plots and checkpoints are.
# Extra arguments go to gradiens-train (e.g. --set train.epochs=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${GRADIENS_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)" --target gradiens-train
# A fresh run directory each time: the same config twice would be a resume.
out=${GRADIENS_RUNS_DIR:-runs}
"$build/train/gradiens-train" --config configs/fashion_mnist_mlp.json --out "$out/$(date +%Y%m%d-%H%M%S)" "$@"
