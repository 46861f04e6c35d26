#!/usr/bin/env bash
# The lean board worker (TUNEFARM_LEAN_WORKER, docs/arm.md "The lean worker")
# built and checked, as CTest's LeanWorker.Host and LeanWorker.Arm64 run it:
#
#   scripts/lean-worker-build.sh host  [FULL_BUILD_DIR]   into build-lean/
#   scripts/lean-worker-build.sh arm64 [FULL_BUILD_DIR]   into build-arm64/lean/
#
# host:  configures and builds tunefarm-worker, its runner and the lean tests
#        for this machine; checks that neither program needs libLLVM,
#        libsqlite3, libxgboost, libonnx or oneDNN (readelf -d, then ldd for
#        what those pull in); runs `tunefarm-worker --help`; runs the lean
#        tests; and, given the full build folder, its PrebuiltObjectTest
#        against the lean runner (objects LLVM emitted, loaded, checked and
#        timed by a runner without LLVM).
# arm64: the same build with cmake/toolchains/aarch64-linux-gnu.cmake against
#        the sysroot scripts/arm64-sysroot.sh assembles (the Debian mirror on
#        first use), without the tests (GoogleTest is not in the sysroot);
#        checks the programs are aarch64 ELF files with the same libraries
#        absent, and runs `tunefarm-worker --help` under qemu-aarch64; given
#        the full build folder, its Arm64Fleet tests: that build's daemon and
#        an x86 worker with this arm64 worker under qemu, over mutual TLS, a
#        job on each device key, then the board killed mid-job.
#
# Both print the programs' sizes (as built, and stripped) and the start-up
# time of `tunefarm-worker --version`. Release builds; ccache when present.
# TUNEFARM_JOBS sets the build's parallelism (default: the CPU count).
# Exits non-zero, saying which step failed; never skips.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
full_build=${2:-}
jobs=${TUNEFARM_JOBS:-$(nproc)}
start=$SECONDS
step_start=$SECONDS

Fail() {
  echo "lean-worker: FAILED: $*" >&2
  exit 1
}
StepDone() {
  echo "lean-worker: $1 ($((SECONDS - step_start)) s)"
  step_start=$SECONDS
}

# Libraries the lean worker must not need, as sonames begin.
readonly kForbidden='^(libLLVM|libsqlite3|libxgboost|libonnx|libdnnl|libfmt|libspdlog)'

# CheckNeeded PROGRAM [ldd-prefix...]: the direct DT_NEEDED entries, and on
# the host also everything they load in turn, hold none of kForbidden.
CheckNeeded() {
  local program=$1 needed
  needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || Fail "readelf -d $program lists no NEEDED libraries"
  if grep -E "$kForbidden" <<<"$needed"; then
    Fail "$(basename "$program") needs the libraries above: the lean build must not link them"
  fi
  if [ "$mode" = host ]; then
    local loaded
    loaded=$(ldd "$program") || Fail "ldd $program failed"
    if grep -q 'not found' <<<"$loaded"; then Fail "$program: a library is not found: $loaded"; fi
    if awk '{print $1}' <<<"$loaded" | grep -E "$kForbidden"; then
      Fail "$(basename "$program") loads the libraries above through its dependencies"
    fi
  fi
  echo "lean-worker: $(basename "$program") needs $(wc -l <<<"$needed") libraries, none of LLVM, SQLite," \
       "XGBoost, ONNX, oneDNN, fmt or spdlog: $(tr '\n' ' ' <<<"$needed")"
}

# Sizes as built and stripped, in MiB.
Sizes() {
  local program=$1 strip_tool=$2 stripped
  stripped=$(mktemp)
  "$strip_tool" -o "$stripped" "$program"
  printf 'lean-worker: %s: %.1f MiB as built, %.1f MiB stripped\n' "$(basename "$program")" \
    "$(echo "$(stat -c %s "$program") / 1048576" | bc -l)" "$(echo "$(stat -c %s "$stripped") / 1048576" | bc -l)"
  rm -f "$stripped"
}

# StartupTime RUNNER...: the median wall time of five `--version` runs, in ms.
StartupTime() {
  local times=() t0 t1 i
  for i in 1 2 3 4 5; do
    t0=$(date +%s%N)
    "$@" --version > /dev/null || Fail "$* --version failed"
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}

case "$mode" in
  host)
    build=$repo/build-lean
    configure=(-DTUNEFARM_LEAN_WORKER=ON -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_BUILD_TESTS=ON)
    strip_tool=strip
    run=()
    ;;
  arm64)
    build=$repo/build-arm64/lean
    for tool in aarch64-linux-gnu-g++ aarch64-linux-gnu-strip qemu-aarch64; do
      command -v "$tool" >/dev/null 2>&1 ||
        Fail "$tool not found: scripts/setup.sh installs g++-aarch64-linux-gnu and qemu-user"
    done
    sysroot=${TUNEFARM_ARM64_SYSROOT:-$repo/build-arm64/sysroot}
    if ! bash "$repo/scripts/arm64-sysroot.sh" "$sysroot"; then
      Fail "the arm64 sysroot at $sysroot could not be assembled (see above). It is fetched from" \
           "the Debian mirror the first time, so this test needs the network once per checkout."
    fi
    sysroot=$(cd "$sysroot" && pwd)
    StepDone "sysroot ready"
    configure=(-DTUNEFARM_LEAN_WORKER=ON -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_BUILD_TESTS=OFF
               -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/aarch64-linux-gnu.cmake"
               -DTUNEFARM_ARM64_SYSROOT="$sysroot")
    strip_tool=aarch64-linux-gnu-strip
    run=(qemu-aarch64 -L "$sysroot")
    ;;
  *)
    echo "usage: lean-worker-build.sh host [FULL_BUILD_DIR] | arm64" >&2
    exit 2
    ;;
esac
for tool in cmake readelf bc; do
  command -v "$tool" >/dev/null 2>&1 || Fail "$tool not found"
done

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI's) reuses what an earlier build of the same sources compiled.
export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true
args=(cmake -S "$repo" -B "$build" "${configure[@]}")
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then args+=(-G Ninja); fi
mkdir -p "$build"
"${args[@]}" > "$build/configure.log" 2>&1 ||
  { tail -30 "$build/configure.log" >&2; Fail "configuring the lean worker ($mode; log: $build/configure.log)"; }
# What the lean configuration looked for: none of the full build's heavy dependencies.
if grep -nE 'LLVM|SQLite|XGBoost|xgboost|ONNX|onnx|dnnl|spdlog|tomlplusplus' "$build/CMakeCache.txt" |
   grep -vE '^[0-9]+:(//|#)|TUNEFARM_LEAN_WORKER' | grep -E '_DIR:|_LIBRARY|_INCLUDE'; then
  Fail "the lean configuration looked for the dependencies above"
fi
StepDone "configured ($mode, $build)"
cmake --build "$build" -j "$jobs" > "$build/build.log" 2>&1 ||
  { grep -E 'error|FAILED' "$build/build.log" | head -30 >&2; Fail "building the lean worker ($mode; log: $build/build.log)"; }
StepDone "built ($(grep -c 'Building' "$build/build.log" || true) compilations)"

worker=$build/worker/tunefarm-worker
runner=$build/worker/tunefarm-runner
for program in "$worker" "$runner"; do
  [ -x "$program" ] || Fail "$program was not built"
  if [ "$mode" = arm64 ]; then
    machine=$(readelf -h "$program" | sed -n 's/^ *Machine: *//p')
    [ "$machine" = "AArch64" ] || Fail "$program is not an AArch64 ELF file (machine: $machine)"
  fi
  CheckNeeded "$program"
  Sizes "$program" "$strip_tool"
done

help=$("${run[@]}" "$worker" --help) || Fail "${run[*]} $worker --help failed"
grep -q -- '--tuner HOST:PORT' <<<"$help" || Fail "tunefarm-worker --help does not list --tuner: $help"
grep -q 'builds' <<<"$help" && grep -q 'tuner_built' <<<"$help" ||
  Fail "tunefarm-worker --help does not say that it builds no code and how the daemon builds for it"
echo "lean-worker: ${run[*]:+${run[*]} }tunefarm-worker --help works ($(wc -l <<<"$help") lines)"
echo "lean-worker: start-up (tunefarm-worker --version, median of 5${run[*]:+, under qemu}): $(StartupTime "${run[@]}" "$worker") ms"
StepDone "checked"

if [ "$mode" = host ]; then
  ctest --test-dir "$build" --timeout 300 -j "$jobs" --output-on-failure > "$build/ctest.log" 2>&1 ||
    { tail -40 "$build/ctest.log" >&2; Fail "the lean tests (log: $build/ctest.log)"; }
  echo "lean-worker: lean tests: $(grep -E 'tests passed' "$build/ctest.log")"
  if [ -n "$full_build" ]; then
    tests=$full_build/tests/tunefarm_worker_tests
    [ -x "$tests" ] || Fail "$tests is missing: build tunefarm_worker_tests in $full_build first"
    TUNEFARM_TEST_RUNNER=$runner "$tests" --gtest_filter='PrebuiltObjectTest.*' --gtest_brief=1 \
      > "$build/prebuilt.log" 2>&1 ||
      { tail -40 "$build/prebuilt.log" >&2; Fail "PrebuiltObjectTest against the lean runner (log: $build/prebuilt.log)"; }
    echo "lean-worker: PrebuiltObjectTest against the lean runner: $(grep -E '^\[  PASSED' "$build/prebuilt.log")"
  fi
  StepDone "tested"
fi
if [ "$mode" = arm64 ] && [ -n "$full_build" ]; then
  tests=$full_build/tests/tunefarm_fleet_tests
  [ -x "$tests" ] || Fail "$tests is missing: build tunefarm_fleet_tests in $full_build first"
  TUNEFARM_ARM64_WORKER=$worker TUNEFARM_ARM64_SYSROOT=$sysroot \
    "$tests" --gtest_filter='Arm64Fleet.*' --gtest_also_run_disabled_tests --gtest_brief=1 \
    > "$build/fleet.log" 2>&1 ||
    { tail -60 "$build/fleet.log" >&2; Fail "the Arm64Fleet tests (log: $build/fleet.log)"; }
  echo "lean-worker: Arm64Fleet (an emulated board in the fleet): $(grep -E '^\[  PASSED' "$build/fleet.log")"
  StepDone "fleet tested"
fi
echo "lean-worker: $mode done in $((SECONDS - start)) s"
