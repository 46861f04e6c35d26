#!/usr/bin/env bash
# The main job: installs dependencies, builds tunefarm, then tunes a suite
# workload on this machine (in-process measurement runner, embedded SQLite
# tuning log tunefarm.db) and prints the best kernel found and its speed-up
# over the untuned default. Rerunning resumes from the log.
#   scripts/main.sh [WORKLOAD.tf] [tunefarm tune options...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --target tunefarm tunefarm-runner
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build}"
WORKLOAD="${1:-configs/workloads/gmm_512.tf}"
shift || true
if [ "$#" -eq 0 ]; then set -- --trials 200 --db tunefarm.db; fi
exec "$BUILD_DIR/cli/tunefarm" tune "$WORKLOAD" "$@"
