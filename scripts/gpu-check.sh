#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, the driver and the CUDA
# toolkit (and none of Debian's libraries), tunes the suite's GPU workloads
# with tunefarm, checks every kernel against the reference, and times the
# best beside PyTorch (cuBLAS with TF32 off, cuDNN) in the same run. One
# command, under 8 minutes with the default budgets.
#
#   scripts/gpu-bundle.sh                  # here: packs .gpu/tunefarm-bundle.tar.xz
#   scripts/gpu-check.sh OUT_DIR [quick]   # there; quick: a fifth of the trials
#
# Writes to OUT_DIR (four files, as a lent machine sends back few):
# fingerprint.txt (the device), torch.tsv (the vendor libraries),
# summary.tsv (the table: tunefarm's best GFLOP/s over the vendor's) and
# logs.tar.gz (each tuning run's log, the vendor timings' log, the tuning
# log gpu.db).
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

target="cuda -arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')"
# workload file, overrides, trials, seconds at most
runs=(
  "configs/workloads/gmm_1024.tf||400|150"
  "configs/workloads/dense_bias_relu.tf||200|70"
  "configs/workloads/c2d_resnet_3x3.tf||200|80"
  "configs/workloads/dep_3x3_c256_28.tf||200|60"
  "configs/workloads/gmm_1024.tf|M=4096,N=4096,K=4096|60|70"
)
specs=()
for run in "${runs[@]}"; do
  IFS='|' read -r file sets trials seconds <<< "$run"
  if [ "$quick" = quick ]; then trials=$(( trials / 5 )); seconds=$(( seconds / 3 )); fi
  name=$(basename "$file" .tf)${sets:+_$(echo "$sets" | tr ',=' '_-')}
  args=(); for kv in ${sets//,/ }; do args+=(--set "$kv"); done
  echo "== $name: $trials trials, at most $seconds s"
  timeout -s INT "$seconds" "$tf" tune "$file" "${args[@]}" --target "$target" --trials "$trials" \
      --db "$logs/gpu.db" > "$logs/$name.log" 2>&1
  echo "   exit $?"; tail -3 "$logs/$name.log"
  specs+=("$file${sets:+:$sets}")
done

python3 bench/cuda/torch_baselines.py "$out/torch.tsv" "${specs[@]}" 2>&1 | tee "$logs/torch.log"

# The table: tunefarm's best (its tuning summary) over the vendor library.
{
  printf "workload\ttunefarm_GFLOPs\tvendor_GFLOPs\tratio\tvendor\n"
  i=0
  for run in "${runs[@]}"; do
    IFS='|' read -r file sets trials seconds <<< "$run"
    name=$(basename "$file" .tf)${sets:+_$(echo "$sets" | tr ',=' '_-')}
    ours=$(awk -v w="$(basename "$file" .tf)" '$1 == w && NF >= 7 {g = $5} END {print g + 0}' "$logs/$name.log")
    vendor=$(awk -F'\t' -v r=$((i + 2)) 'NR == r {print $5}' "$out/torch.tsv")
    kind=$(awk -F'\t' -v r=$((i + 2)) 'NR == r {print $2}' "$out/torch.tsv")
    ratio=$(python3 -c "print(f'{float(\"$ours\") / float(\"${vendor:-0}\"):.3f}' if float('${vendor:-0}') > 0 else 'n/a')")
    printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$ours" "$vendor" "$ratio" "$kind"
    i=$((i + 1))
  done
} | tee "$out/summary.tsv" | (column -t -s $'\t' 2>/dev/null || cat)
tar -C "$logs" -czf "$out/logs.tar.gz" .
