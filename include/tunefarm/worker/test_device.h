// TestDeviceMeasurer: a TEST DEVICE (`tunefarm worker --device test`).
//
// It compiles nothing and runs nothing: every candidate "measures" at once
// (or after TestDeviceOptions::latency_ms) with a synthetic, deterministic
// time derived from a hash of its workload and trace text, 1 ms to 2 ms, the
// same for every repeat. It exists for
// dispatch-throughput benchmarks and fault tests of the fleet (kill a worker
// mid-job, restart the tuner), where real measurement would only add noise
// and minutes. Its results say so in error_message (error kind stays none).
// A fleet worker of device test registers as synthetic and marks every
// result synthetic (fleet_worker.h, IsSyntheticDevice), so the tuning log
// keeps its records for the job that asked but never ranks or serves them;
// this class itself marks nothing, so unit tests may stand it in for a real
// device.
//
// Thread safety: Measure may be called from several threads at once (no
// shared state). Lifetime: none beyond the object.
#pragma once

#include <vector>

#include "tunefarm/measure/measure.h"

namespace tunefarm {

struct TestDeviceOptions {
  // Sleep this long per candidate, one candidate after another as a real
  // device times them: a request of n candidates takes n times as long. Keeps
  // candidates in flight long enough to kill a worker mid-job, and makes a
  // fleet's parallelism measurable (bench/fleet/batch_spread.cpp).
  double latency_ms = 0;
};

// The error_message every test-device result carries.
inline constexpr const char* kTestDeviceMessage = "TEST DEVICE: synthetic time, nothing was compiled or run";

class TestDeviceMeasurer : public Measurer {
 public:
  explicit TestDeviceMeasurer(TestDeviceOptions options = {}) : options_(options) {}

  // One result per input, in order: options.repeat copies of SyntheticSeconds.
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override;

  // 1e-3 * (1 + (h % 1000) / 1000) with h the FNV-1a hash of workload text,
  // a NUL byte, and trace text: the same on every machine and build.
  static double SyntheticSeconds(const MeasureInput& input);

 private:
  const TestDeviceOptions options_;
};

}  // namespace tunefarm
