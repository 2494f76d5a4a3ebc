#!/usr/bin/env bash
# On a machine with a GPU, after scripts/gpu-check.sh (same bundle): gradiens-train
# PINN runs (poisson2d; inverse_heat, whose PDE parameter trains beside the network)
# shortened, on "cpu" and on "cuda", the cuda run resumed from its step-200
# checkpoint (must end bit for bit on the straight run's metrics), and one epoch
# of the LSTM sequence run on both devices. Run from the repository root:
# scripts/gpu-check-pinn.sh [bundle dir] [report dir].
set -uo pipefail
bundle=${1:-gpu-bundle}
report=${2:-${OUT:-gpu-report}}
mkdir -p "$report"
if [ ! -d "$bundle" ] && [ -f "$bundle.tar.xz" ]; then
  tar -xJf "$bundle.tar.xz" -C /tmp && bundle=/tmp/$(basename "$bundle")
fi
cuda_libs=$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/lib 2>/dev/null | tr '\n' ':')
wheel_libs=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")) + glob.glob(os.path.join(list(nvidia.__path__)[0], "cu13", "lib")))))' 2>/dev/null)
export LD_LIBRARY_PATH="$bundle/lib:$cuda_libs$wheel_libs:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
log="$report/pinn-check.txt"
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
