#!/usr/bin/env bash
# Kernel-quality benchmark of the tuning issue: tune the six suite workloads
# into one tuning log, then time each log's best kernel, the default schedule
# and oneDNN side by side in one run, 1 and 2 threads.
#
#   bench/tune/run.sh [--trials N] [--db LOG] [--random] [--skip-tune] [--skip-bench]
#                     [--only NAME[,NAME...]] [-- tuned_vs_onednn args]
#
# --trials is the budget per workload, counting trials already in the log, so
# `--trials 1000 --db X.db` after `--trials 200 --db X.db` resumes and measures
# 800 more per workload. Each workload is its own tuning job (its own budget
# and cost model), so per-workload trial counts are exact.
# Build directory: $TUNEFARM_BUILD_DIR (default build-tb, so a rebuild of
# build/ by someone else cannot swap the binaries under a running tune).
set -euo pipefail
cd "$(dirname "$0")/../.."

TRIALS=200
DB=bench-tune.db
RANDOM_SEARCH=""
SKIP_TUNE=0
SKIP_BENCH=0
ONLY=""
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) TRIALS="$2"; shift 2 ;;
    --db) DB="$2"; shift 2 ;;
    --random) RANDOM_SEARCH="--random"; shift ;;
    --skip-tune) SKIP_TUNE=1; shift ;;
    --skip-bench) SKIP_BENCH=1; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --) shift; BENCH_ARGS=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

BUILD_DIR="${TUNEFARM_BUILD_DIR:-build-tb}"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j "${TUNEFARM_JOBS:-2}" --target tunefarm tunefarm-runner tunefarm_tuned_vs_onednn tunefarm_tune_efficiency
export TUNEFARM_RUNNER="$PWD/$BUILD_DIR/worker/tunefarm-runner"

WORKLOADS=(gmm_1024 gmm_512 c2d_resnet_3x3 dep_3x3_c256_28 t2d dense_bias_relu)
if [ -n "$ONLY" ]; then IFS=, read -r -a WORKLOADS <<<"$ONLY"; fi

if [ "$SKIP_TUNE" = 0 ]; then
  for w in "${WORKLOADS[@]}"; do
    echo "== tune $w: $TRIALS trials ${RANDOM_SEARCH:-(model-guided)} into $DB ($(uptime | sed 's/.*load/load/'))"
    start=$(date +%s)
    "$BUILD_DIR/cli/tunefarm" tune "configs/workloads/$w.tf" --trials "$TRIALS" --db "$DB" \
      --curve "${DB%.db}-$w.svg" $RANDOM_SEARCH
    echo "== $w tuned in $(( $(date +%s) - start )) s"
  done
fi

if [ "$SKIP_BENCH" = 0 ]; then
  echo "== compare ($(uptime | sed 's/.*load/load/'))"
  "$BUILD_DIR/bench/tune/tunefarm_tuned_vs_onednn" --db "$DB" "${BENCH_ARGS[@]}"
  echo "== done ($(uptime | sed 's/.*load/load/'))"
fi
