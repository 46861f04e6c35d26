// Helpers for the tuning-loop tests (stale records, confirmation of a best).
#pragma once

#include <gtest/gtest.h>

#include "tunefarm/compiler/workload.h"
#include "tunefarm/compiler/workload_parser.h"

namespace tunefarm::tuner::testing {

// A 64x32x16 matmul: small enough that the test device "measures" it at once.
inline Workload SmallMatmul() {
  auto w = ParseWorkload("workload mm(M = 64, N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

}  // namespace tunefarm::tuner::testing
