// Shared by the measurement tests (tests/measure, tests/worker): workloads,
// traces made with the real Schedule, and measurement inputs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::testing {

inline std::string MatmulText(int m, int n, int k) {
  return "workload matmul(M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ") {\n"
         "  A = input f32[M, K]\n"
         "  B = input f32[K, N]\n"
         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n"
         "  output C\n"
         "}\n";
}

// split j by 16, move k between the j loops, vectorize the inner j.
inline std::string VectorizedMatmulTrace(const std::string& workload_text) {
  auto w = ParseWorkload(workload_text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  Schedule sch(*f);
  auto block = sch.GetBlock("C");
  EXPECT_TRUE(block.ok());
  auto loops = sch.GetLoops(*block);
  EXPECT_TRUE(loops.ok());
  auto j = sch.Split((*loops)[1], {-1, 16});
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_TRUE(sch.Reorder({(*loops)[0], (*j)[0], (*loops)[2], (*j)[1]}).ok());
  EXPECT_TRUE(sch.Vectorize((*j)[1]).ok());
  return sch.trace().ToText();
}

inline MeasureInput Candidate(std::string id, std::string workload, std::string trace = "") {
  MeasureInput in;
  in.candidate_id = std::move(id);
  in.workload_text = std::move(workload);
  in.trace_text = std::move(trace);
  in.target = "llvm";
  return in;
}

}  // namespace tunefarm::testing
