#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs into one folder (default gpu-bundle/,
# ignored by git), so that a GPU machine without this build's Debian libraries
# can run it: test_cuda, gradiens-bench, gradiens-train, gradiens' libraries and the Debian
# libraries they load (the C and C++ runtimes and the CUDA libraries are the
# GPU machine's own).
# The folder is also packed as <bundle>.tar.xz (about 20 MB), which is what
# travels to the GPU machine; gpu-check.sh unpacks it there.
# Usage: scripts/gpu-bundle.sh [build dir] [bundle dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bundle=${2:-gpu-bundle}
rm -rf "$bundle"
mkdir -p "$bundle/lib"
cp "$build/tests/test_cuda" "$build/bench/gradiens-bench" "$build/train/gradiens-train" "$bundle/"
strip "$bundle/test_cuda" "$bundle/gradiens-bench" "$bundle/gradiens-train"
for binary in "$bundle/test_cuda" "$bundle/gradiens-bench" "$bundle/gradiens-train"; do
  ldd "$binary" | awk '/=> \// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
      libcuda.so*|libcublas*|libcudnn*|libcudart*|libnccl*) ;;
      *) cp -L "$lib" "$bundle/lib/" ;;
    esac
  done
done
strip "$bundle"/lib/libgradiens_* 2>/dev/null || true
cp scripts/gpu-check.sh scripts/torch_cuda_peer.py "$bundle/"
# GPU_BUNDLE_CPU_PEER=path/to/torch_peer.py (BENCHMARKS.md's CPU peer) adds it,
# for gpu-check.sh's GPU_CHECK_CPU=1 comparison on the GPU machine's CPU.
if [ -n "${GPU_BUNDLE_CPU_PEER:-}" ]; then cp "$GPU_BUNDLE_CPU_PEER" "$bundle/torch_peer.py"; fi
tar -cf - "$bundle" | xz -T0 -6 > "$bundle.tar.xz"
du -sh "$bundle" "$bundle.tar.xz"
