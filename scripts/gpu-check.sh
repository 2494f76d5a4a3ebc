#!/usr/bin/env bash
# On a machine with a GPU: runs the CUDA tests (a skip counts as a failure) and
# the GPU benchmarks of gradiens-bench against PyTorch CUDA on the same card,
# and writes a short report. Build here, pack with scripts/gpu-bundle.sh, and
# run from the repository root: scripts/gpu-check.sh [bundle dir] [report dir].
# GPU_CHECK_BENCH=0 leaves the benchmarks out (the tests alone take seconds);
# GPU_CHECK_TESTS=0 leaves the tests and training runs out; GPU_CHECK_ROUNDS=N
# (default 1) runs gradiens and PyTorch N times, alternated, one ratio per round;
# GPU_CHECK_CPU=1 also compares the PINN workloads on the host CPU (below).
set -uo pipefail
bundle=${1:-gpu-bundle}
report=${2:-${OUT:-gpu-report}}
mkdir -p "$report"
if [ ! -d "$bundle" ] && [ -f "$bundle.tar.xz" ]; then
  tar -xJf "$bundle.tar.xz" -C /tmp && bundle=/tmp/$(basename "$bundle")
fi
# The CUDA libraries: the toolkit's, then those of PyTorch's pip wheels.
cuda_libs=$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/lib 2>/dev/null | tr '\n' ':')
wheel_libs=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")) + glob.glob(os.path.join(list(nvidia.__path__)[0], "cu13", "lib")))))' 2>/dev/null)
export LD_LIBRARY_PATH="$bundle/lib:$cuda_libs$wheel_libs:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export PATH="$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer"

{
  echo "== $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
} 2>&1 | tee "$report/report.txt"

if [ "${GPU_CHECK_TESTS:-1}" = 1 ]; then
echo "== test_cuda" | tee -a "$report/report.txt"
GRADIENS_REQUIRE_CUDA=1 timeout "${GPU_CHECK_TEST_TIMEOUT:-300}" "$bundle/test_cuda" --duration=true 2>&1 \
  > "$report/test_cuda.log"
echo "test_cuda exit code: $?" | tee -a "$report/report.txt"
# Each failing check with the test it belongs to, then doctest's summary and coverage messages.
grep -E "TEST CASE:|ERROR:|MESSAGE:|values:|logged:" "$report/test_cuda.log" | head -150 | tee -a "$report/report.txt"
grep -A2 -E "^\[doctest\] test cases:" "$report/test_cuda.log" | tee -a "$report/report.txt"
# The GEMM tests again with cuBLASLt off: the plain cuBLAS paths and the epilogues' fallbacks.
echo "== test_cuda GEMM cases with GRADIENS_CUDA_NO_LT=1" | tee -a "$report/report.txt"
GRADIENS_CUDA_NO_LT=1 GRADIENS_REQUIRE_CUDA=1 timeout 120 "$bundle/test_cuda" \
  -tc='cuda: _addmm*,cuda: Linear*,cuda: matrix products*,cuda: the same MLP*,cuda: float16 and bfloat16 products*' 2>&1 \
  | grep -E "ERROR:|^\[doctest\] (test cases|assertions)" | head -40 | tee -a "$report/report.txt"

# compute-sanitizer over a test of each kernel family, with the caching
# allocator off so that it sees every allocation (it refuses the device on
# some virtual machines).
if [ "${GPU_CHECK_SANITIZER:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck" | tee -a "$report/report.txt"
  families='cuda: unary*,cuda: binary*,cuda: reductions*,cuda: matrix*,cuda: device*,cuda: index with*,cuda: gather*'
  families+=',cuda: sort*,cuda: cumsum*,cuda: embedding*,cuda: linalg det*,cuda: jet_activation*,cuda: the fused*'
  families+=',cuda: max_pool2d*,cuda: avg_pool2d*,cuda: softmax*,cuda: argmax*,cuda: clamp*,cuda: scatter_reduce*'
  families+=',cuda: unique*,cuda: batched cholesky*,cuda: float16 and bfloat16 conv*,cuda: _addmm_activation matches*'
  GRADIENS_CUDA_NO_CACHING=1 timeout 120 compute-sanitizer --tool memcheck --print-limit 5 "$bundle/test_cuda" \
    -tc="$families" 2>&1 | tail -6 | tee -a "$report/report.txt"
elif [ "${GPU_CHECK_SANITIZER:-1}" = 1 ]; then
  echo "== compute-sanitizer: not found on this machine" | tee -a "$report/report.txt"
fi

# gradiens-train on the GPU: configs/csv_regression.json (Adam, then L-BFGS)
# on "cpu" and on "cuda", then the cuda run resumed from its step-400
# checkpoint, which must end on the same losses bit for bit.
echo "== gradiens-train on cuda (csv_regression: Adam, then L-BFGS)" | tee -a "$report/report.txt"
python3 - <<'PY' > /tmp/gpu_check_run.json
import json, os
c = json.load(open("configs/csv_regression.json"))
c["data"] = {k: dict(v, path=os.path.abspath("configs/" + v["path"])) if "path" in v else v for k, v in c["data"].items()}
print(json.dumps(c))
PY
runs=/tmp/gpu_check_runs
rm -rf "$runs"
for device in cpu cuda; do
  timeout 120 "$bundle/gradiens-train" --config /tmp/gpu_check_run.json --set device=$device --out "$runs/$device" \
    --progress none > /dev/null 2>> "$report/report.txt"
done
resumed="$runs/resumed"
cp -r "$runs/cuda" "$resumed"
dir=$(ls -d "$resumed"/*/)
echo step-000000400 > "$dir/checkpoints/latest"
timeout 120 "$bundle/gradiens-train" --resume "$dir" --progress none > /dev/null 2>> "$report/report.txt"
python3 - "$runs" <<'PY' | tee -a "$report/report.txt"
import glob, json, sys
def final(kind):
    path = glob.glob(f"{sys.argv[1]}/{kind}/*/summary.json")
    return json.load(open(path[0]))["final_metrics"] if path else None
cpu, cuda, resumed = final("cpu"), final("cuda"), final("resumed")
print("cpu    ", cpu)
print("cuda   ", cuda)
print("resumed", resumed)
if cpu and cuda:
    rel = abs(cpu["test/loss"] - cuda["test/loss"]) / abs(cpu["test/loss"])
    print(f"test/loss cpu vs cuda: relative difference {rel:.3g}")
if cuda and resumed:
    print("resumed from step 400 equals the straight cuda run bit for bit:", cuda == resumed)
PY

# gradiens-train PINN runs (poisson2d; inverse_heat, whose PDE parameter trains
# beside the network) shortened, on "cpu" and on "cuda", the cuda run resumed
# from its step-200 checkpoint (must end bit for bit on the straight run's
# metrics), and one epoch of the LSTM sequence run on both devices.
echo "== gradiens-train on cuda (PINN and sequence runs)" | tee -a "$report/report.txt"
log="$report/report.txt"
runs=/tmp/gpu_check_pinn_runs
rm -rf "$runs"
short=(--set 'train.phases[0].steps=250' --set 'train.phases[1].steps=1' --set 'train.phases[1].optimizer.max_iter=20'
       --set 'train.phases[1].optimizer.max_eval=40' --set train.checkpoint.every=100 --set train.log_every=50
       --set train.eval_every.every=50 --progress none)
for cfg in poisson2d inverse_heat; do
  for device in cpu cuda; do
    timeout 90 "$bundle/gradiens-train" --config configs/pinn/$cfg.json --set device=$device "${short[@]}" \
      --out "$runs/$cfg-$device" > /dev/null 2>> "$log"
    echo "$cfg on $device: exit code $?" | tee -a "$log"
  done
  cp -r "$runs/$cfg-cuda" "$runs/$cfg-resumed"
  dir=$(ls -d "$runs/$cfg-resumed"/*/)
  echo step-000000200 > "$dir/checkpoints/latest"
  timeout 90 "$bundle/gradiens-train" --resume "$dir" --progress none > /dev/null 2>> "$log"
  echo "$cfg on cuda resumed from step 200: exit code $?" | tee -a "$log"
done
for device in cpu cuda; do
  timeout 90 "$bundle/gradiens-train" --config configs/sequence_lstm.json --set device=$device --set train.epochs=1 \
    --progress none --out "$runs/sequence-$device" > /dev/null 2>> "$log"
  echo "sequence_lstm on $device: exit code $?" | tee -a "$log"
done
python3 - "$runs" <<'PY' | tee -a "$log"
import glob, json, sys
def final(kind):
    path = glob.glob(f"{sys.argv[1]}/{kind}/*/summary.json")
    return json.load(open(path[0]))["final_metrics"] if path else None
for run in ["poisson2d", "inverse_heat", "sequence"]:
    cpu, cuda, resumed = final(f"{run}-cpu"), final(f"{run}-cuda"), final(f"{run}-resumed")
    print(run, "cpu    ", cpu)
    print(run, "cuda   ", cuda)
    if run != "sequence":
        print(run, "resumed", resumed)
        print(run, "resumed from step 200 equals the straight cuda run bit for bit:", cuda is not None and cuda == resumed)
PY

fi  # GPU_CHECK_TESTS

# One line per workload and round of a JSON-lines file: gradiens' median over
# the peer's (for a Taylor-engine workload, its nested-autograd twin's).
print_ratios() {
  python3 - "$1" <<'PY' | tee -a "$report/report.txt"
import json, sys
rows = {}
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "median_ms" in r:
        impl = "gradiens" if r["impl"].startswith("gradiens") else "torch"
        rows.setdefault(r.get("round", 1), {}).setdefault(r["workload"], {})[impl] = r
for round_number, workloads in sorted(rows.items()):
    for name, r in workloads.items():
        # A Taylor-engine workload computes what its nested-autograd twin does: PyTorch's figure is the twin's.
        twin = workloads.get(name.replace("_taylor", ""), {})
        if "gradiens" in r and "torch" in twin:
            g, t = r["gradiens"]["median_ms"], twin["torch"]["median_ms"]
            where = f" ({twin['torch']['device']})" if "device" in twin["torch"] else ""
            print(f"round {round_number}: {name}: gradiens {g:.3f} ms, PyTorch {t:.3f} ms, ratio {g / t:.3f}{where}")
PY
}

# GPU_CHECK_CPU=1: the PINN workloads on this machine's CPU against PyTorch on
# the same CPU (BENCHMARKS.md's CPU peer, which gpu-bundle.sh packs from
# GPU_BUNDLE_CPU_PEER), one thread pinned to one core, alternated for
# GPU_CHECK_CPU_ROUNDS rounds (default 3).
if [ "${GPU_CHECK_CPU:-0}" = 1 ] && [ -f "$bundle/torch_peer.py" ]; then
  echo "== CPU benchmarks: $(lscpu | sed -n 's/^Model name: *//p' | head -1), 1 thread on core 1" \
    | tee -a "$report/report.txt"
  pin=$(command -v taskset >/dev/null && echo "taskset -c 1")
  rm -f "$report/cpu.jsonl"
  for round in $(seq "${GPU_CHECK_CPU_ROUNDS:-3}"); do
    $pin timeout 300 "$bundle/gradiens-bench" --threads 1 \
      --only pinn_burgers_f64,pinn_burgers_taylor_f64,pinn_poisson5d_f64,pinn_poisson5d_taylor_f64 2>&1 \
      | sed "s/^{/{\"round\": $round, /" | tee -a "$report/cpu.jsonl" | tee -a "$report/report.txt"
    PYTHONUNBUFFERED=1 $pin timeout 300 python3 "$bundle/torch_peer.py" --threads 1 \
      --only pinn_burgers_f64,pinn_poisson5d_f64 2>&1 \
      | sed "s/^{/{\"round\": $round, /" | tee -a "$report/cpu.jsonl" | tee -a "$report/report.txt"
  done
  print_ratios "$report/cpu.jsonl"
fi

[ "${GPU_CHECK_BENCH:-1}" = 0 ] && exit 0
echo "== benchmarks (gradiens, then PyTorch, same card)" | tee -a "$report/report.txt"
workloads=op_overhead_5000,pinn_burgers_f64,pinn_poisson5d_f64,pinn_burgers_taylor_f64,pinn_poisson5d_taylor_f64
workloads+=,mlp_f32_50steps,cnn_f32_20steps,lstm_packed_f32,phm_linear_f32
rounds=${GPU_CHECK_ROUNDS:-1}
rm -f "$report/bench.jsonl"
for round in $(seq "$rounds"); do
  timeout 200 "$bundle/gradiens-bench" --device cuda --threads 1 --only "$workloads" 2>&1 \
    | sed "s/^{/{\"round\": $round, /" | tee -a "$report/bench.jsonl" | tee -a "$report/report.txt"
  if [ "$round" = 1 ]; then
    # The same float32/float64 Linear workloads with Linear's bias added by a kernel of its own (no cuBLASLt epilogue).
    GRADIENS_CUDA_NO_LT=1 timeout 100 "$bundle/gradiens-bench" --device cuda --threads 1 \
      --only pinn_burgers_f64,pinn_poisson5d_f64,mlp_f32_50steps 2>&1 \
      | sed 's/"impl": "gradiens/"impl": "no-lt gradiens/' | tee -a "$report/report.txt"
  fi
  PYTHONUNBUFFERED=1 timeout 200 python3 "$bundle/torch_cuda_peer.py" --only "${workloads//_taylor/}" 2>&1 \
    | sed "s/^{/{\"round\": $round, /" | tee -a "$report/bench.jsonl" | tee -a "$report/report.txt"
done
print_ratios "$report/bench.jsonl"
