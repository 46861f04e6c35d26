// The timing recipe (docs/measurement.md): groups of runs timed with
// steady_clock, each group long enough that clock resolution and call
// overhead vanish, every group reported.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "tunefarm/measure/timing.h"

namespace tunefarm {
namespace {

using Clock = std::chrono::steady_clock;

// Larger than the last-level cache of the machines we target (32 MiB L3 on
// Zen 4/5 CCDs, up to ~100 MiB on big Xeons is rare per core); writing it
// evicts the kernel's data so the next group starts cold.
constexpr size_t kFlushBytes = size_t(64) << 20;

void FlushCaches() {
  static std::vector<char> junk(kFlushBytes);
  static char value = 0;
  ++value;
  std::memset(junk.data(), value, junk.size());
  // Reading one byte back through a volatile keeps the stores alive.
  volatile char sink = junk[size_t(value) * 4099 % junk.size()];
  (void)sink;
}

Result<double> TimeGroup(const PreparedCall& call, int64_t number) {
  auto start = Clock::now();
  for (int64_t i = 0; i < number; ++i) {
    Status s = call.Run();
    if (!s.ok()) return s;
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Result<std::vector<double>> TimeKernel(const PreparedCall& call, const MeasureOptions& options,
                                       double first_run_seconds) {
  return TimeGroups(
      options, first_run_seconds, [&](int64_t number) { return TimeGroup(call, number); },
      [] {
        FlushCaches();
        return Status::OK();
      });
}

Result<std::vector<double>> TimeGroups(const MeasureOptions& options, double first_run_seconds,
                                       const std::function<Result<double>(int64_t number)>& time_group,
                                       const std::function<Status()>& flush) {
  const double min_group = std::max(0.0, options.min_repeat_ms) / 1e3;
  // Start from the requested number, or from what the checked (cold) run
  // suggests; a cold run overestimates, so groups too short are redone.
  int64_t number = options.number > 0 ? options.number : 1;
  if (options.number <= 0 && min_group > 0) {
    number = std::max<int64_t>(1, int64_t(std::ceil(min_group / std::max(first_run_seconds, 1e-9))));
  }
  constexpr int64_t kMaxNumber = int64_t(1) << 30;
  number = std::min(number, kMaxNumber);
  std::vector<double> per_run;
  per_run.reserve(size_t(std::max(options.repeat, 1)));
  int redone = 0;
  while (int(per_run.size()) < options.repeat) {
    if (options.flush_cache) {
      TF_RETURN_IF_ERROR(flush());
    }
    TF_ASSIGN_OR_RETURN(double seconds, time_group(number));
    // Too short: grow `number` (with a margin) and redo the group. Bounded,
    // in case the clock misbehaves; 30 rounds grow number by far more than
    // needed for any kernel.
    if (seconds < min_group && number < kMaxNumber && redone < 30) {
      double factor = std::clamp(min_group * 1.2 / std::max(seconds, 1e-9), 1.5, 1000.0);
      number = std::min(kMaxNumber, int64_t(std::ceil(double(number) * factor)));
      ++redone;
      continue;
    }
    per_run.push_back(seconds / double(number));
  }
  return per_run;
}

}  // namespace tunefarm
