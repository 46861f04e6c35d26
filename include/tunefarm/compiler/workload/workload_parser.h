// The workload language: text <-> Workload, and the structural hash.
//
//   # dense layer with bias and relu
//   workload dense_bias_relu(M = 128, N = 3072, K = 768) {
//     A    = input f32[M, K]
//     W    = input f32[N, K]
//     bias = input f32[N]
//     acc[i, j] = sum(k: K) A[i, k] * W[j, k]
//     out[i, j] = max(acc[i, j] + bias[j], 0.0)
//     output out
//   }
//
// The full grammar is documented in docs/workload-language.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm {

struct ParseOptions {
  // Overrides of the workload's shape parameters (e.g. {"M", 16}) applied
  // before shapes are evaluated: lets tests shrink a suite workload.
  std::map<std::string, int64_t> param_overrides;
  // Name used in error messages ("<file>:line:col: ...").
  std::string source_name = "<input>";
};

// Parses one workload. Errors are InvalidArgument with
// "<source_name>:<line>:<col>: <what was wrong / what was expected>".
Result<Workload> ParseWorkload(std::string_view text, const ParseOptions& options = {});
// Reads and parses a file; the file name becomes the source name.
Result<Workload> ParseWorkloadFile(const std::string& path, const ParseOptions& options = {});

// Canonical text of a workload; ParseWorkload(PrintWorkload(w)) is equal to w.
std::string PrintWorkload(const Workload& w);

// Hash of a workload's structure: independent of tensor, axis and workload names,
// comments and whitespace; depends on shapes, dtypes, stage structure and bodies.
// Rendered as 16 hex digits by StructuralHashHex.
uint64_t StructuralHash(const Workload& w);
std::string StructuralHashHex(const Workload& w);
// True if the workloads are equal up to renaming (what StructuralHash approximates).
bool StructurallyEqual(const Workload& a, const Workload& b);

}  // namespace tunefarm
