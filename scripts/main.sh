#!/usr/bin/env bash
# The main job: installs dependencies, builds tunefarm, then compiles a suite
# workload, checks it against the reference interpreter and prints its GFLOP/s.
#   scripts/main.sh [WORKLOAD.tf] [tunefarm run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --target tunefarm
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build}"
WORKLOAD="${1:-configs/workloads/gmm_1024.tf}"
shift || true
exec "$BUILD_DIR/cli/tunefarm" run "$WORKLOAD" "$@"
