#!/usr/bin/env bash
# The arm64 cross build end to end, as CTest's Arm64.CrossBuildSmoke runs it:
# assembles the arm64 sysroot (scripts/arm64-sysroot.sh; the Debian mirror on
# first use, nothing afterwards), configures and builds tests/arm64/smoke with
# cmake/toolchains/aarch64-linux-gnu.cmake, checks that the program is an
# aarch64 ELF, and runs it under `qemu-aarch64 -L SYSROOT`: a gRPC server
# and client in one process, a unary call over TLS on 127.0.0.1.
#
#   scripts/arm64-smoke.sh [BUILD_DIR]     default: build-arm64/smoke
#
# The sysroot is $TUNEFARM_ARM64_SYSROOT, else build-arm64/sysroot. Exits
# non-zero, saying which step failed, when any step fails: a sysroot that
# cannot be assembled (no network on first use) fails the test, never skips it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build-arm64/smoke}
sysroot=${TUNEFARM_ARM64_SYSROOT:-$repo/build-arm64/sysroot}
start=$SECONDS
step_start=$SECONDS

Fail() {
  echo "arm64-smoke: FAILED: $*" >&2
  exit 1
}
StepDone() {
  echo "arm64-smoke: $1 ($((SECONDS - step_start)) s)"
  step_start=$SECONDS
}

for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake od; do
  command -v "$tool" >/dev/null 2>&1 ||
    Fail "$tool not found: scripts/setup.sh installs g++-aarch64-linux-gnu, qemu-user and cmake"
done

if ! bash "$repo/scripts/arm64-sysroot.sh" "$sysroot"; then
  Fail "the arm64 sysroot at $sysroot could not be assembled (see above). It is fetched from" \
       "the Debian mirror the first time, so this test needs the network once per checkout."
fi
sysroot=$(cd "$sysroot" && pwd)
StepDone "sysroot ready"

configure=(cmake -S "$repo/tests/arm64/smoke" -B "$build"
           -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/toolchains/aarch64-linux-gnu.cmake"
           -DTUNEFARM_ARM64_SYSROOT="$sysroot")
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then configure+=(-G Ninja); fi
mkdir -p "$build"
"${configure[@]}" > "$build/configure.log" 2>&1 ||
  { tail -30 "$build/configure.log" >&2; Fail "configuring tests/arm64/smoke for arm64 (log: $build/configure.log)"; }
StepDone "configured"
cmake --build "$build" -j "${TUNEFARM_JOBS:-$(nproc)}" ||
  Fail "cross-building tests/arm64/smoke against $sysroot"
StepDone "built"

program=$build/arm64_smoke
# ELF header: EI_CLASS (byte 4) 2 = 64-bit, EI_DATA (byte 5) 1 = little
# endian, e_machine (bytes 18-19) 183 = EM_AARCH64.
read -r -a header < <(od -An -tu1 -w20 -N20 "$program")
if [ "${header[*]:0:6} ${header[*]:18:2}" != "127 69 76 70 2 1 183 0" ]; then
  Fail "$program is not a 64-bit little-endian aarch64 ELF file (header: ${header[*]})"
fi
if command -v file >/dev/null 2>&1; then
  description=$(file -b "$program")
  echo "arm64-smoke: file: $description"
  case "$description" in
    *"ELF 64-bit LSB"*"ARM aarch64"*) ;;
    *) Fail "file(1) does not call $program an aarch64 ELF: $description" ;;
  esac
else
  echo "arm64-smoke: ELF header says 64-bit aarch64 (file(1) is not installed)"
fi

echo "arm64-smoke: + qemu-aarch64 -L $sysroot $program"
timeout 300 qemu-aarch64 -L "$sysroot" "$program" || Fail "$program under qemu-aarch64 (exit $?)"
StepDone "ran under qemu-aarch64"
# The same program through the toolchain file's CMAKE_CROSSCOMPILING_EMULATOR.
ctest --test-dir "$build" --output-on-failure --timeout 300 ||
  Fail "ctest in $build (qemu through CMAKE_CROSSCOMPILING_EMULATOR)"
StepDone "ran through ctest"
echo "arm64-smoke: passed in $((SECONDS - start)) s"
