// TEST DEVICE: synthetic measurements for fleet tests (test_device.h).
#include "tunefarm/worker/test_device.h"

#include <chrono>
#include <cstdint>
#include <string_view>
#include <thread>

namespace tunefarm {

namespace {

// FNV-1a rather than std::hash: the synthetic time must not depend on the
// standard library, so runs on different machines give the same numbers.
uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

double TestDeviceMeasurer::SyntheticSeconds(const MeasureInput& input) {
  uint64_t h = 14695981039346656037ull;
  h = Fnv1a(h, input.workload_text);
  h = Fnv1a(h, std::string_view("\0", 1));  // "ab"+"c" and "a"+"bc" differ
  h = Fnv1a(h, input.trace_text);
  return 1e-3 * (1.0 + double(h % 1000) / 1000.0);
}

std::vector<MeasureResult> TestDeviceMeasurer::Measure(const std::vector<MeasureInput>& inputs,
                                                       const MeasureOptions& options) {
  const int repeat = options.repeat > 0 ? options.repeat : 1;
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (const MeasureInput& in : inputs) {
    // Per candidate, as a device that times one kernel at a time.
    if (options_.latency_ms > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options_.latency_ms));
    }
    MeasureResult r;
    r.candidate_id = in.candidate_id;
    r.error = MeasureErrorKind::kNone;
    r.error_message = kTestDeviceMessage;
    r.repeat_seconds.assign(size_t(repeat), SyntheticSeconds(in));
    r.build_seconds = 0;  // nothing was built
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace tunefarm
