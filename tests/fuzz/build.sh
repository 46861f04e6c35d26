#!/usr/bin/env bash
# Builds the workload-language fuzzer with clang's libFuzzer, ASan and UBSan,
# compiling the few sources it needs directly (no CMake, no LLVM libraries),
# and seeds a corpus from the operator suite.
#
#   tests/fuzz/build.sh [OUT_DIR]          # default: build-fuzz
#   build-fuzz/workload_parser_fuzz build-fuzz/corpus -dict=tests/fuzz/workload.dict \
#       -max_len=4096 -timeout=10 -max_total_time=600
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$ROOT/build-fuzz}"
CXX="${CXX:-clang++-14}"
mkdir -p "$OUT/corpus"
SOURCES=(
  common/status.cpp
  compiler/ir/dtype.cpp
  compiler/ir/ir.cpp
  compiler/workload/workload.cpp
  compiler/lower/decompose_strided_gather.cpp
  compiler/ir/ir_visitor.cpp
  compiler/ir/simplify.cpp
  compiler/workload/workload_lexer.cpp
  compiler/workload/workload_parser.cpp
  compiler/workload/workload_sema.cpp
  compiler/workload/workload_expr_builder.cpp
  compiler/workload/workload_bounds.cpp
  compiler/workload/workload_printer.cpp
  compiler/workload/structural_hash.cpp
  tests/fuzz/workload_parser_fuzz.cpp
)
cd "$ROOT"
"$CXX" -std=c++20 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I include -I compiler "${SOURCES[@]}" -o "$OUT/workload_parser_fuzz"
cp configs/workloads/*.tf "$OUT/corpus/"
echo "built $OUT/workload_parser_fuzz; corpus in $OUT/corpus"
