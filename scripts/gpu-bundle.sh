#!/usr/bin/env bash
# Packs tunefarm for a GPU machine that has the NVIDIA driver and the CUDA
# toolkit but none of Debian's libraries: the `tunefarm` and `tunefarm-runner`
# binaries, the worker tests (their CudaGpu* tests run candidates on a real
# GPU: checked, timed, and a faulting kernel that costs one candidate), and
# every shared library they load except the C library's own
# (glibc on such a machine is at least as new as Debian 12's), stripped, in
# one .tar.xz (about 45 MiB). scripts/gpu-check.sh unpacks and runs it there.
#
#   scripts/gpu-bundle.sh [OUT.tar.xz]     default: .gpu/tunefarm-bundle.tar.xz
#
# The CUDA driver (libcuda.so.1) and NVRTC are not packed: tunefarm loads
# them at run time from the machine it runs on.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu/tunefarm-bundle.tar.xz}
build=${TUNEFARM_BUILD_DIR:-build}
flock /tmp/tunefarm-build.lock cmake --build "$build" --target tunefarm tunefarm-runner tunefarm_worker_tests -j2 >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$build/cli/tunefarm" "$(find "$build" -name tunefarm-runner -type f -perm -u+x | head -1)" \
  "$build/tests/tunefarm_worker_tests" "$stage/bin/"
for b in "$stage"/bin/*; do ldd "$b" | awk '/=> \//{print $3}'; done | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv)\.so|/ld-linux' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
strip --strip-unneeded "$stage"/bin/* "$stage"/lib/* 2>/dev/null || true
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - bin lib | xz -T2 -6 > "$out"
echo "$out: $(du -h "$out" | cut -f1), $(ls "$stage/lib" | wc -l) libraries"
