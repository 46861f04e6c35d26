#!/usr/bin/env bash
# Search efficiency of the suite: trials a model-guided log and a random-search
# log (same budget) needed to reach 90 % and 95 % of a reference kernel.
#
#   bench/tune/efficiency.sh MODEL.db RANDOM.db [BUDGET] [REFERENCE.db]
#
# Make the logs with bench/tune/run.sh --db MODEL.db --trials N and
# bench/tune/run.sh --db RANDOM.db --trials N --random. BUDGET reads each log as
# if it had been cut at N trials (a 1,000-trial log read as a 200-trial run).
# REFERENCE.db (e.g. the 1,000-trial model log) sets the 100 % mark; without it
# the fastest record of the two logs does.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build-tb}"
cmake --build "$BUILD_DIR" -j "${TUNEFARM_JOBS:-2}" --target tunefarm_tune_efficiency >/dev/null
args=(--log "model=$1" --log "random=$2")
if [ $# -ge 3 ] && [ "$3" != 0 ]; then args+=(--budget "$3"); fi
if [ $# -ge 4 ]; then args+=(--reference-db "$4"); fi
exec "$BUILD_DIR/bench/tune/tunefarm_tune_efficiency" "${args[@]}"
