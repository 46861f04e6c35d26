#!/usr/bin/env bash
# The layer benchmark: tune the layer suite (configs/layers/) into one tuning
# log, then time every layer's best kernel beside oneDNN in one process, 1 and
# 2 threads (tunefarm_layers_vs_onednn), and print the tuning wall time.
#
#   bench/layers/run.sh [--trials N] [--db LOG] [--model resnet50|mobilenet_v2|bert]
#                       [--only LAYER[,LAYER...]] [--one-at-a-time] [--skip-tune]
#                       [--skip-bench] [--wait-quiet S] [--no-build]
#                       [-- tunefarm_layers_vs_onednn args]
#
# --trials is the budget per layer (default 300). By default the selected
# layers are one tuning job of N x layers trials, which the task scheduler
# spends where the latency falls fastest (every layer gets a batch first);
# --one-at-a-time tunes each layer as its own job of N trials, in the
# manifest's order. Either way warm start is on (`tunefarm tune`'s default):
# a job's cost model first learns from the log's records of other layers.
# Trials already in the log count, so a rerun with the same --db resumes.
# Each tuning run's wall time is appended to LOG-tune-time.tsv (date,
# seconds, layers, trials per layer, one-job or one-at-a-time, selection),
# whose total is printed at the end, with --skip-tune too.
# --wait-quiet S waits up to S seconds for an idle machine before the
# comparison (bench/tune/wait_quiet.sh): 2-thread OpenMP timings of small
# layers collapse when another process holds a core.
# Build directory: $TUNEFARM_BUILD_DIR (default build-tb, so a rebuild of
# build/ by someone else cannot swap the binaries under a running tune);
# --no-build uses the binaries already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

TRIALS=300
DB=bench-layers.db
MODEL=""
ONLY=""
ONE_AT_A_TIME=0
SKIP_TUNE=0
SKIP_BENCH=0
BUILD=1
WAIT_QUIET=0
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) TRIALS="$2"; shift 2 ;;
    --db) DB="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --one-at-a-time) ONE_AT_A_TIME=1; shift ;;
    --skip-tune) SKIP_TUNE=1; shift ;;
    --skip-bench) SKIP_BENCH=1; shift ;;
    --wait-quiet) WAIT_QUIET="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --) shift; BENCH_ARGS=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
case "$MODEL" in
  ""|resnet50|mobilenet_v2|bert) ;;
  *) echo "--model: expected resnet50, mobilenet_v2 or bert, got $MODEL" >&2; exit 2 ;;
esac

BUILD_DIR="${TUNEFARM_BUILD_DIR:-build-tb}"
if [ "$BUILD" = 1 ]; then
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build "$BUILD_DIR" -j "${TUNEFARM_JOBS:-2}" --target tunefarm tunefarm-runner tunefarm_layers_vs_onednn
fi
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
export TUNEFARM_RUNNER="$BUILD_DIR/worker/tunefarm-runner"

# The selected layers, in the manifest's order.
MANIFEST=configs/layers/layers.tsv
mapfile -t LAYERS < <(awk -F'\t' -v model="$MODEL" -v only=",$ONLY," '
  /^#/ || $1 == "name" { next }
  model != "" && index("," $2 ",", "," model ",") == 0 { next }
  only != ",," && index(only, "," $1 ",") == 0 { next }
  { print $1 }' "$MANIFEST")
if [ -n "$ONLY" ]; then
  IFS=, read -r -a WANTED <<<"$ONLY"
  for w in "${WANTED[@]}"; do
    [ -z "$w" ] || [[ " ${LAYERS[*]} " == *" $w "* ]] ||
      { echo "--only: no layer $w${MODEL:+ of model $MODEL} in $MANIFEST" >&2; exit 2; }
  done
fi
if [ "${#LAYERS[@]}" = 0 ]; then echo "no layer selected" >&2; exit 2; fi
FILES=()
for l in "${LAYERS[@]}"; do FILES+=("configs/layers/$l.tf"); done
TIME_LOG="${DB%.db}-tune-time.tsv"

if [ "$SKIP_TUNE" = 0 ]; then
  start=$(date +%s)
  if [ "$ONE_AT_A_TIME" = 1 ]; then
    for f in "${FILES[@]}"; do
      echo "== tune $(basename "$f" .tf): $TRIALS trials into $DB ($(uptime | sed 's/.*load/load/'))"
      "$BUILD_DIR/cli/tunefarm" tune "$f" --trials "$TRIALS" --db "$DB" --curve ""
    done
  else
    total=$(( TRIALS * ${#FILES[@]} ))
    echo "== tune ${#FILES[@]} layers as one job: $total trials ($TRIALS per layer) into $DB ($(uptime | sed 's/.*load/load/'))"
    "$BUILD_DIR/cli/tunefarm" tune "${FILES[@]}" --trials "$total" --db "$DB" --curve "${DB%.db}-curve.svg"
  fi
  seconds=$(( $(date +%s) - start ))
  mode=$([ "$ONE_AT_A_TIME" = 1 ] && echo one-at-a-time || echo one-job)
  printf '%s\t%d\t%d\t%d\t%s\t%s\n' "$(date -Iseconds)" "$seconds" "${#FILES[@]}" "$TRIALS" "$mode" \
    "${MODEL:-all}${ONLY:+ only $ONLY}" >>"$TIME_LOG"
  echo "== ${#FILES[@]} layers tuned in $seconds s"
fi

if [ "$SKIP_BENCH" = 0 ]; then
  if [ "$WAIT_QUIET" -gt 0 ]; then bench/tune/wait_quiet.sh "$WAIT_QUIET" || true; fi
  echo "== compare ($(uptime | sed 's/.*load/load/'))"
  ONLY_ARGS=(--only "$(IFS=,; echo "${LAYERS[*]}")")
  "$BUILD_DIR/bench/layers/tunefarm_layers_vs_onednn" --db "$DB" "${ONLY_ARGS[@]}" "${BENCH_ARGS[@]}"
  echo "== done ($(uptime | sed 's/.*load/load/'))"
fi

if [ -f "$TIME_LOG" ]; then
  awk -F'\t' '{ s += $2; n++; last = $0 }
    END { printf "== tuning wall time: %d s in %d run(s) recorded in '"$TIME_LOG"' (last: %s)\n", s, n, last }' "$TIME_LOG"
fi
