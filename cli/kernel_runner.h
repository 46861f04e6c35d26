// Shared by the CLI's commands: parse a workload file with overrides, find
// the log's schedule for it, time a compiled kernel, make its arguments.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/database/layered_database.h"

namespace tunefarm::cli {

// Parses "M=16" style overrides; errors name the bad text.
Result<std::map<std::string, int64_t>> ParseOverrides(const std::vector<std::string>& items);

// The workload file with `--set` overrides applied; every user error names
// the file, line and column (or the bad override).
Result<Workload> LoadWorkload(const std::string& path, const std::vector<std::string>& overrides);

struct TimingResult {
  std::vector<double> seconds_per_run;  // one entry per repeat group (mean of its runs)
  double best_seconds = 0;    // the fastest group: what a record of this run would keep
  double median_seconds = 0;
};

// A warm-up call, then the runner's timing recipe (measure/timing.h):
// `repeat` groups of calls, each running at least min_repeat_ms, so that the
// time printed next to a record's is taken the way the record's was.
// Constant inputs stay packed across calls, as a user's inference loop and
// the tuner's measurements call a kernel (prepared_call.h).
Result<TimingResult> TimeRun(const PreparedCall& call, int repeat, double min_repeat_ms);

// The record `tunefarm compile --db` builds for `w` on `target`: the user log
// over the system log (`system_db`, "" for the installed one), through the
// fallback chain, passing over records whose trace no longer replays.
struct LoggedSchedule {
  database::TuningRecord record;
  database::Layer layer = database::Layer::kUser;
  database::FallbackLevel level = database::FallbackLevel::kNone;
  ir::PrimFunc func;  // the default PrimFunc with the record's trace applied
};
// nullopt when the logs hold no record for `w` on `target`; an error naming
// the log when it cannot be opened or none of its records replays.
Result<std::optional<LoggedSchedule>> FindLoggedSchedule(const std::string& db, const std::string& system_db,
                                                         const Workload& w, const Target& target,
                                                         const ir::PrimFunc& default_func);

// Random inputs (fixed seed) and zeroed outputs for a PrimFunc's params.
std::vector<HostBuffer> MakeArguments(const ir::PrimFunc& f, uint64_t seed);
std::vector<void*> DataPointers(std::vector<HostBuffer>& buffers);

}  // namespace tunefarm::cli
