// Shared helpers for the measurement tests: workloads, traces made with the
// real Schedule, and measurers that use the build tree's runner.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/schedule.h"
#include "tunefarm/compiler/workload_parser.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::testing {

inline std::string RunnerPath() { return std::string(TUNEFARM_BINARY_DIR) + "/worker/tunefarm-runner"; }

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

// A default-schedule trace carrying a test fault line (runner test device).
inline std::string FaultTrace(const std::string& fault) { return "# tunefarm-test-fault: " + fault + "\n"; }

// Quick options: short groups so tests stay fast.
inline MeasureOptions FastOptions() {
  MeasureOptions o;
  o.repeat = 3;
  o.min_repeat_ms = 1;
  o.run_timeout_s = 10;
  o.build_timeout_s = 30;
  return o;
}

inline LocalMeasurerOptions TestMeasurerOptions(bool faults = true) {
  LocalMeasurerOptions o;
  o.runner_path = RunnerPath();
  o.enable_test_faults = faults;
  o.build_threads = 2;
  return o;
}

inline ::testing::AssertionResult Measured(const MeasureResult& r, int repeat = 3) {
  if (r.error != MeasureErrorKind::kNone) {
    return ::testing::AssertionFailure() << r.candidate_id << ": " << MeasureErrorKindName(r.error) << ": "
                                         << r.error_message;
  }
  if (int(r.repeat_seconds.size()) != repeat) {
    return ::testing::AssertionFailure() << r.candidate_id << ": " << r.repeat_seconds.size() << " repeats";
  }
  for (double s : r.repeat_seconds) {
    if (!(s > 0)) return ::testing::AssertionFailure() << r.candidate_id << ": non-positive time " << s;
  }
  if (!(r.build_seconds > 0)) return ::testing::AssertionFailure() << r.candidate_id << ": no build time";
  // The machine's speed beside the kernel's times (runner_speed_probe.cpp).
  if (!(r.speed_probe_seconds > 0)) return ::testing::AssertionFailure() << r.candidate_id << ": no speed probe";
  return ::testing::AssertionSuccess();
}

}  // namespace tunefarm::testing
