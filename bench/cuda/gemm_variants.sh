#!/usr/bin/env bash
# The best GEMM kernels (1024^3 and 4096^3) of the 2026-11-28 GPU check, each
# as measured (plain), with A's rows packed for the thread tile (pack), with
# its shared-memory stage double-buffered (dbuf), and with both: one record
# each in bench/cuda/gemm_variants/*.jsonl, whose time is the plain record's
# (so `run` prints each variant's speed over the plain kernel as the check
# measured it). Each is imported into a log of its own and run on GPU 0 by
# `tunefarm run --target cuda`: built, checked by the runner, timed.
#
#   bench/cuda/gemm_variants.sh TUNEFARM OUT_FILE [ARCH]    (ARCH: sm_90)
#
# Needs a GPU of that architecture; scripts/gpu-check.sh runs it first.
set -uo pipefail
cd "$(dirname "$0")/../.."
tf=${1:?usage: bench/cuda/gemm_variants.sh TUNEFARM OUT_FILE [ARCH]}
out=${2:?usage: bench/cuda/gemm_variants.sh TUNEFARM OUT_FILE [ARCH]}
arch=${3:-sm_90}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
for jsonl in bench/cuda/gemm_variants/*.jsonl; do
  v=$(basename "$jsonl" .jsonl)
  sets=(); [[ $v == gmm4096* ]] && sets=(--set M=4096 --set N=4096 --set K=4096)
  "$tf" db import "$jsonl" --db "$logs/$v.db" > /dev/null || { echo "== $v: import failed"; continue; }
  echo "== $v"
  timeout 90 "$tf" run configs/workloads/gmm_1024.tf "${sets[@]}" --target "cuda -arch=$arch" --db "$logs/$v.db" \
      --repeat 7 --min-repeat-ms 40 2>&1 | grep -E "^(check|time|speed|error)|log's time"
done 2>&1 | tee "$out"
