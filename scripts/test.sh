#!/usr/bin/env bash
# The test command: installs dependencies, builds everything, runs every test.
# Works on a fresh Debian 12 machine; CI runs it through .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900
# The end-to-end check of the main command, on a small suite workload.
"$BUILD_DIR/cli/tunefarm" run configs/workloads/dense_bias_relu.tf --repeat 2 --min-repeat-ms 20
