#include "kernel_runner.h"

#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/measure/timing.h"
#include "tunefarm/tuner/kernel_build.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

namespace tunefarm::cli {

Result<std::map<std::string, int64_t>> ParseOverrides(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> out;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return Status::InvalidArgument("--set expects NAME=VALUE, got '" + item + "'");
    }
    std::string value = item.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') {
      return Status::InvalidArgument("--set " + item + ": '" + value + "' is not an integer");
    }
    out[item.substr(0, eq)] = v;
  }
  return out;
}

Result<Workload> LoadWorkload(const std::string& path, const std::vector<std::string>& overrides) {
  TF_ASSIGN_OR_RETURN(auto parsed, ParseOverrides(overrides));
  ParseOptions options;
  options.param_overrides = std::move(parsed);
  return ParseWorkloadFile(path, options);
}

Result<TimingResult> TimeRun(const PreparedCall& call, int repeat, double min_repeat_ms) {
  using Clock = std::chrono::steady_clock;
  // The warm-up (page faults, caches, the thread pool's start) is the
  // runner's checked run; its time seeds the runs per group.
  auto t0 = Clock::now();
  TF_RETURN_IF_ERROR(call.Run());
  const double first_run_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  MeasureOptions options;
  options.repeat = std::max(1, repeat);
  options.min_repeat_ms = min_repeat_ms;
  TimingResult r;
  TF_ASSIGN_OR_RETURN(r.seconds_per_run, tunefarm::TimeKernel(call, options, first_run_seconds));
  std::vector<double> sorted = r.seconds_per_run;
  std::sort(sorted.begin(), sorted.end());
  r.best_seconds = sorted.front();
  r.median_seconds = sorted[sorted.size() / 2];
  return r;
}

Result<std::optional<LoggedSchedule>> FindLoggedSchedule(const std::string& db, const std::string& system_db,
                                                         const Workload& w, const Target& target,
                                                         const ir::PrimFunc& default_func) {
  database::OpenOptions read_only;
  read_only.read_only = true;
  std::string system = system_db.empty() ? database::DefaultSystemDatabasePath() : system_db;
  TF_ASSIGN_OR_RETURN(auto logs, database::LayeredDatabase::Open(db, system, read_only, !system_db.empty()));
  // The lookup replays each candidate record's trace once and keeps the
  // chosen one's schedule.
  TF_ASSIGN_OR_RETURN(tuner::ChosenSchedule chosen,
                      tuner::ChooseSchedule(logs.get(), db, StructuralHashHex(w), w.name,
                                            tuner::KernelRecordTarget(target, std::nullopt), default_func));
  if (!chosen.best.record) return std::optional<LoggedSchedule>();
  return std::optional<LoggedSchedule>(
      LoggedSchedule{*chosen.best.record, chosen.best.layer, chosen.best.level, std::move(chosen.func)});
}

std::vector<HostBuffer> MakeArguments(const ir::PrimFunc& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostBuffer> buffers;
  for (size_t i = 0; i < f.params.size(); ++i) {
    buffers.push_back(HostBuffer::Like(f.params[i]));
    if (i < f.num_inputs) buffers.back().FillRandom(rng);
  }
  return buffers;
}

std::vector<void*> DataPointers(std::vector<HostBuffer>& buffers) {
  std::vector<void*> ptrs;
  for (HostBuffer& b : buffers) ptrs.push_back(b.data());
  return ptrs;
}

}  // namespace tunefarm::cli
