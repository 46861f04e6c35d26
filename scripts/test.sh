#!/usr/bin/env bash
# The test command: installs dependencies, builds everything, runs every test.
# Works on a fresh Debian 12 machine; CI runs it through .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900
# The main commands end to end on a small suite workload: compile + check +
# time the default schedule, then a short tuning run into a throwaway log.
"$BUILD_DIR/cli/tunefarm" run configs/workloads/dense_bias_relu.tf --repeat 2 --min-repeat-ms 20
SMOKE_DB="$(mktemp -d)/smoke.db"
"$BUILD_DIR/cli/tunefarm" tune configs/workloads/gmm_512.tf --trials 16 --batch-size 8 --db "$SMOKE_DB" --curve ""
rm -rf "$(dirname "$SMOKE_DB")"
