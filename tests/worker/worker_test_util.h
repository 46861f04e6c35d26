// Shared helpers for the worker tests: the measurement tests' workloads and
// traces (measure_test_util.h), and measurers that use the build tree's runner.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "../measure/measure_test_util.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::testing {

// The build tree's runner; TUNEFARM_TEST_RUNNER names another (the lean
// worker's, scripts/lean-worker-build.sh runs PrebuiltObjectTest against it).
inline std::string RunnerPath() {
  if (const char* other = std::getenv("TUNEFARM_TEST_RUNNER"); other != nullptr && *other != '\0') return other;
  return std::string(TUNEFARM_BINARY_DIR) + "/worker/tunefarm-runner";
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
