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

# Build-time reuse from an installation only: install into a temporary prefix,
# tune dense+bias+relu briefly into a log, then configure, build and run
# examples/ against that prefix (no path into this build or source tree).
WORK="$(mktemp -d)"
cmake --install "$BUILD_DIR" --prefix "$WORK/prefix" > "$WORK/install.log"
"$WORK/prefix/bin/tunefarm" tune examples/dense_bias_relu.tf --trials 12 --batch-size 6 --db "$WORK/tunefarm.db" --curve ""
cmake -S examples -B "$WORK/example-build" -DCMAKE_PREFIX_PATH="$WORK/prefix" -DTUNEFARM_DB="$WORK/tunefarm.db"
cmake --build "$WORK/example-build"
"$WORK/example-build/dense_app"
# More tuning changes the log: the next build must recompile the kernel.
"$WORK/prefix/bin/tunefarm" tune examples/dense_bias_relu.tf --trials 18 --batch-size 6 --db "$WORK/tunefarm.db" --curve ""
cmake --build "$WORK/example-build" | tee "$WORK/rebuild.log"
grep -q "tunefarm: compiling dense_bias_relu from" "$WORK/rebuild.log"
"$WORK/example-build/dense_app"
rm -rf "$WORK"
