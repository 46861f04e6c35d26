// Building cost-model datasets in process: random schedules and timing.
//
// For tests and benchmarks of the cost model, not for tuning: production
// candidates come from the tuner's sketch rules and are measured by workers
// in isolated processes. Here a random multi-level tiling sketch (Ansor's
// SSRSRS family, simplified) is applied to the workload's main reduction
// block with sampled tile sizes and annotations, and the result is
// JIT-compiled and timed in this process.
#pragma once

#include <cstdint>
#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::costmodel {

// A random schedule of `base` (LowerToPrimFunc output): every spatial loop of
// the first reduction block (or of the last block when none reduces) is
// split in three with sampled factors, every reduction loop in two; the
// pieces are reordered (two structures), the outer spatial tiles fused and
// maybe parallelized, the innermost loop maybe vectorized, an inner loop
// maybe unrolled, and the result maybe written through a local cache. A
// primitive that is illegal for the drawn choices is skipped, so the result
// is always a valid program. Deterministic in `seed`. The trace text goes to
// `trace_out` when not null.
Result<ir::PrimFunc> SampleRandomSchedule(const ir::PrimFunc& base, uint64_t seed, std::string* trace_out = nullptr);

struct MeasureOptions {
  int repeats = 3;            // groups; the fastest group's mean is reported
  double min_group_ms = 1.0;  // each group runs the kernel at least this long
  int max_runs_per_group = 50;
  // Runtime threads for parallel loops while timing (process-wide setting,
  // restored afterwards); 0 keeps the runtime's default. One thread keeps
  // timings on a shared machine far steadier.
  int num_threads = 1;
};

// JIT-compiles `scheduled` for the host, runs it on random inputs (one
// warm-up, then options.repeats timed groups) and returns seconds per run.
Result<double> MeasureSeconds(const ir::PrimFunc& scheduled, const MeasureOptions& options = {});

}  // namespace tunefarm::costmodel
