// The timing recipe (docs/measurement.md, "Timing recipe"), one for every
// place tunefarm times a kernel it compares with the log: the runner that
// measures candidates, and `tunefarm run`, which prints a record's logged
// time next to today's.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

// On a prepared call (its packing of constant inputs is not timed), warm-up
// already done by the caller (the checked run, which took
// `first_run_seconds`): `options.repeat` groups of `number` runs, each group
// lasting at least min_repeat_ms (number grows until it does), with an
// optional cache flush before each group. Returns seconds per run, one entry
// per group; a record's time is the fastest of them (docs/database.md).
Result<std::vector<double>> TimeKernel(const PreparedCall& call, const MeasureOptions& options,
                                       double first_run_seconds);

// The same recipe for any device: `time_group(number)` runs the kernel
// `number` times and returns the group's seconds (a CUDA device times them
// with events on the GPU); `flush` (called before each group when
// options.flush_cache) evicts the device's caches outside the timed window.
// TimeKernel is this with steady_clock and a 64 MiB host write.
Result<std::vector<double>> TimeGroups(const MeasureOptions& options, double first_run_seconds,
                                       const std::function<Result<double>(int64_t number)>& time_group,
                                       const std::function<Status()>& flush);

}  // namespace tunefarm
