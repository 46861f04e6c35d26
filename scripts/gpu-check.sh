#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, the driver and the CUDA
# toolkit (and none of Debian's libraries), tunes the suite's GPU workloads
# with tunefarm, checks every kernel against the reference, and times the
# best beside PyTorch (cuBLAS with TF32 off, cuDNN, softmax and layer_norm)
# in the same run. One command, about 9 minutes with the default budgets
# (use a PERCENT of 75 where 8 minutes of device time are left).
#
#   scripts/gpu-bundle.sh                  # here: packs .gpu/tunefarm-bundle.tar.xz
#   scripts/gpu-check.sh OUT_DIR [quick|PERCENT]   # there; quick: a tenth of the trials;
#                                                  # PERCENT scales trials and times
#
# Writes to OUT_DIR (few files, as a lent machine sends back few):
# fingerprint.txt (the device), torch.tsv (the vendor libraries),
# variants.txt (bench/cuda/gemm_variants.sh: GEMM kernels with and without
# the packing and double-buffering rules), summary.tsv (the table:
# tunefarm's best GFLOP/s over the vendor's, a row as each workload is
# done), gpu.db (the tuning log) and logs.tar.gz (each
# tuning run's log, the runner's GPU tests, the vendor timings' log).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUT_DIR [quick]}
quick=${2:-}
mkdir -p "$out"
logs=$(mktemp -d)
bundle=/tmp/tunefarm-bundle
rm -rf "$bundle" && mkdir -p "$bundle"
tar -C "$bundle" -xJf .gpu/tunefarm-bundle.tar.xz || { echo "no bundle: run scripts/gpu-bundle.sh first"; exit 2; }
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
tf="$bundle/bin/tunefarm"
if ! "$tf" --version > /dev/null 2>&1; then
  echo "tunefarm does not start here:"; "$tf" --version; ldd "$tf" | grep "not found"; exit 3
fi

{
  echo "# date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  nvcc --version | tail -2
  python3 -c "import torch; p = torch.cuda.get_device_properties(0); print('torch', torch.__version__, 'SMs', p.multi_processor_count, 'L2', getattr(p, 'L2_cache_size', '?'))"
  "$tf" --version
} 2>&1 | tee "$out/fingerprint.txt"

# The runner on the GPU: candidates checked and timed, and a kernel that
# writes through a null pointer costs that candidate only.
echo "== the CUDA runner's GPU tests"
TUNEFARM_RUNNER="$bundle/bin/tunefarm-runner" timeout 120 "$bundle/bin/tunefarm_worker_tests" \
    --gtest_filter='CudaGpu*' > "$logs/worker_gpu_tests.log" 2>&1
echo "   exit $?"; grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|us per run|runner" "$logs/worker_gpu_tests.log" | head -20

target="cuda -arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')"
# The 2026-11-28 check's best GEMM kernels, plain, packed and double-buffered
# (about a minute): what each GPU rule is worth on the same tiling.
echo "== the best GEMM kernels with and without the packing and double-buffering rules"
bash bench/cuda/gemm_variants.sh "$tf" "$out/variants.txt" "${target#cuda -arch=}"
# workload file, overrides, trials, seconds at most (the times keep the
# whole check about 8 minutes on an H100; a run stopped by its time prints
# its best so far)
runs=(
  "configs/workloads/gmm_1024.tf||1000|200"
  "configs/workloads/dense_bias_relu.tf||300|50"
  "configs/workloads/c2d_resnet_3x3.tf||300|60"
  "configs/workloads/dep_3x3_c256_28.tf||300|45"
  "configs/workloads/gmm_1024.tf|M=4096,N=4096,K=4096|200|70"
  "configs/workloads/softmax.tf||100|15"
  "configs/workloads/layer_norm.tf||100|15"
)
name_of() { echo "$(basename "$1" .tf)${2:+_$(echo "$2" | tr ',=' '_-')}"; }

# The vendor libraries first, so that each row of the table can be written
# as soon as its workload is tuned.
specs=()
for run in "${runs[@]}"; do
  IFS='|' read -r file sets trials seconds <<< "$run"
  specs+=("$file${sets:+:$sets}")
done
python3 bench/cuda/torch_baselines.py "$out/torch.tsv" "${specs[@]}" 2>&1 | tee "$logs/torch.log"

printf "workload\ttrials\terrors\ttunefarm_GFLOPs\tvendor_GFLOPs\tratio\tvendor\n" > "$out/summary.tsv"
i=0
for run in "${runs[@]}"; do
  IFS='|' read -r file sets trials seconds <<< "$run"
  if [ "$quick" = quick ]; then trials=$(( trials / 10 )); seconds=$(( seconds / 4 ));
  elif [[ "$quick" =~ ^[0-9]+$ ]]; then trials=$(( trials * quick / 100 )); seconds=$(( seconds * quick / 100 )); fi
  name=$(name_of "$file" "$sets")
  args=(); for kv in ${sets//,/ }; do args+=(--set "$kv"); done
  echo "== $name: $trials trials, at most $seconds s"
  timeout -k 20 -s INT "$seconds" "$tf" tune "$file" "${args[@]}" --target "$target" --trials "$trials" \
      --db "$out/gpu.db" > "$logs/$name.log" 2>&1
  echo "   exit $?"; tail -3 "$logs/$name.log"
  # The tuning summary's row (workload trials errors default best speed-up
  # record), else the last progress line ("[ 161/240] name  best G GFLOP/s
  # ... errors E"): a run stopped by its time may end before its summary.
  read -r done_trials errors ours < <(awk -v w="$(basename "$file" .tf)" '
      /^\[ *[0-9]+\/[0-9]+\]/ { split($0, a, /[][\/ ]+/); pt = a[2];
        for (i = 1; i < NF; i++) { if ($i == "best") pg = $(i + 1); if ($i == "errors") pe = $(i + 1) } }
      $1 == w && NF >= 7 { t = $2; e = $3; g = $5; summary = 1 }
      END { if (summary) print t + 0, e + 0, g + 0; else print pt + 0, pe + 0, pg + 0 }' "$logs/$name.log")
  vendor=$(awk -F'\t' -v r=$((i + 2)) 'NR == r {print $5}' "$out/torch.tsv")
  kind=$(awk -F'\t' -v r=$((i + 2)) 'NR == r {print $2}' "$out/torch.tsv")
  ratio=$(python3 -c "v = float('${vendor:-0}' or 0); print(f'{float(\"$ours\") / v:.3f}' if v > 0 else 'n/a')")
  printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$done_trials" "$errors" "$ours" "$vendor" "$ratio" "$kind" >> "$out/summary.tsv"
  i=$((i + 1))
done
(column -t -s $'\t' "$out/summary.tsv" 2>/dev/null || cat "$out/summary.tsv")
tar -C "$logs" -czf "$out/logs.tar.gz" .
