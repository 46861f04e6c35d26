#!/usr/bin/env bash
# The model benchmark: tune an ONNX model's tasks as one weighted job
# (`tunefarm tune MODEL.onnx`), then time every task's best kernel beside
# oneDNN's peer of the same fused computation, in one process, 1 and 2
# threads, with the model-level ratio (tunefarm_models_vs_onednn).
#
#   bench/models/run.sh MODEL.onnx [--trials N] [--db LOG] [--skip-tune] [--skip-bench]
#                       [--wait-quiet S] [--no-build] [-- tunefarm_models_vs_onednn args]
#
# --trials is the model's budget as `tunefarm tune` counts it (default 300):
# all of its tasks together, spent by the task scheduler where the model's
# latency falls fastest (each task weighted by its calls; every task gets a
# batch first). Trials already in the log count, so a rerun with the same
# --db resumes. Each tuning run's wall time is appended to LOG-tune-time.tsv
# (date, seconds, model, trials), whose total is printed at the end.
# --wait-quiet S waits up to S seconds for an idle machine before the
# comparison (bench/tune/wait_quiet.sh). Build directory: $TUNEFARM_BUILD_DIR
# (default build-tb, so a rebuild of build/ cannot swap the binaries under a
# running tune); --no-build uses the binaries already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  echo "usage: bench/models/run.sh MODEL.onnx [--trials N] [--db LOG] [--skip-tune] [--skip-bench] [--wait-quiet S] [--no-build] [-- ARGS]" >&2
  exit 2
fi
MODEL="$1"
shift
[ -f "$MODEL" ] || { echo "no model file $MODEL" >&2; exit 2; }
NAME="$(basename "$MODEL" .onnx)"
TRIALS=300
DB="bench-models-$NAME.db"
SKIP_TUNE=0
SKIP_BENCH=0
BUILD=1
WAIT_QUIET=0
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) TRIALS="$2"; shift 2 ;;
    --db) DB="$2"; shift 2 ;;
    --skip-tune) SKIP_TUNE=1; shift ;;
    --skip-bench) SKIP_BENCH=1; shift ;;
    --wait-quiet) WAIT_QUIET="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --) shift; BENCH_ARGS=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

BUILD_DIR="${TUNEFARM_BUILD_DIR:-build-tb}"
if [ "$BUILD" = 1 ]; then
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build "$BUILD_DIR" -j "${TUNEFARM_JOBS:-2}" --target tunefarm tunefarm-runner tunefarm_models_vs_onednn
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
export TUNEFARM_RUNNER="$BUILD_DIR/worker/tunefarm-runner"
TIME_LOG="${DB%.db}-tune-time.tsv"

if [ "$SKIP_TUNE" = 0 ]; then
  echo "== tune $NAME: $TRIALS trials into $DB ($(uptime | sed 's/.*load/load/'))"
  start=$(date +%s)
  "$BUILD_DIR/cli/tunefarm" tune "$MODEL" --trials "$TRIALS" --db "$DB" --curve "${DB%.db}-curve.svg"
  seconds=$(( $(date +%s) - start ))
  printf '%s\t%d\t%s\t%d\n' "$(date -Iseconds)" "$seconds" "$NAME" "$TRIALS" >>"$TIME_LOG"
  echo "== $NAME tuned in $seconds s"
fi

if [ "$SKIP_BENCH" = 0 ]; then
  if [ "$WAIT_QUIET" -gt 0 ]; then bench/tune/wait_quiet.sh "$WAIT_QUIET" || true; fi
  echo "== compare ($(uptime | sed 's/.*load/load/'))"
  "$BUILD_DIR/bench/models/tunefarm_models_vs_onednn" "$MODEL" --db "$DB" "${BENCH_ARGS[@]}"
  echo "== done ($(uptime | sed 's/.*load/load/'))"
fi

if [ -f "$TIME_LOG" ]; then
  awk -F'\t' '{ s += $2; n++; last = $0 }
    END { printf "== tuning wall time: %d s in %d run(s) recorded in '"$TIME_LOG"' (last: %s)\n", s, n, last }' "$TIME_LOG"
fi
