#!/usr/bin/env bash
# Expert schedules vs oneDNN and OpenBLAS, 1 and 2 threads, one run.
# This machine sets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for old OpenBLAS bugs,
# which hold OpenBLAS to AVX2 kernels; this benchmark unsets both so OpenBLAS
# runs its best kernels. Usage: bench/expert/run.sh [repeats]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/build.sh --target tunefarm_expert_bench
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "${TUNEFARM_BUILD_DIR:-build}/bench/expert/tunefarm_expert_bench" "$@"
