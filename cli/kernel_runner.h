// Shared by `tunefarm run` and benchmarks: parse a workload file with
// overrides, compile its default schedule, time it, check it against the
// reference interpreter.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen_llvm.h"
#include "tunefarm/compiler/host_buffer.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::cli {

// Parses "M=16" style overrides; errors name the bad text.
Result<std::map<std::string, int64_t>> ParseOverrides(const std::vector<std::string>& items);

// The workload file with `--set` overrides applied; every user error names
// the file, line and column (or the bad override).
Result<Workload> LoadWorkload(const std::string& path, const std::vector<std::string>& overrides);

struct TimingResult {
  std::vector<double> seconds_per_run;  // one entry per repeat group (mean of its runs)
  double best_seconds = 0;
  double median_seconds = 0;
};

// Warm-up, then `repeat` groups of runs, each group running at least min_repeat_ms.
Result<TimingResult> TimeKernel(const JitKernel& kernel, const std::vector<void*>& args, int repeat,
                                double min_repeat_ms);

// Random inputs (fixed seed) and zeroed outputs for a PrimFunc's params.
std::vector<HostBuffer> MakeArguments(const ir::PrimFunc& f, uint64_t seed);
std::vector<void*> DataPointers(std::vector<HostBuffer>& buffers);

}  // namespace tunefarm::cli
