#!/usr/bin/env bash
# Configures and builds tunefarm into ./build (or $TUNEFARM_BUILD_DIR).
# Extra arguments go to the build, e.g. `scripts/build.sh --target tunefarm`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TUNEFARM_BUILD_DIR:-build}"
# ccache keys on paths relative to the checkout (and not on the build
# folder, which -g would add), so a fresh clone elsewhere reuses what an
# earlier build of the same sources compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
GENERATOR=()
if command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE="${TUNEFARM_BUILD_TYPE:-RelWithDebInfo}"
fi
cmake --build "$BUILD_DIR" -j "${TUNEFARM_JOBS:-$(nproc)}" "$@"
