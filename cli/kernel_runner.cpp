#include "kernel_runner.h"

#include "tunefarm/compiler/workload_parser.h"

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

Result<TimingResult> TimeKernel(const JitKernel& kernel, const std::vector<void*>& args, int repeat,
                                double min_repeat_ms) {
  using Clock = std::chrono::steady_clock;
  TF_RETURN_IF_ERROR(kernel.Run(args));  // warm-up: page faults, caches, thread pool start
  // Calibrate how many runs fill one group of min_repeat_ms.
  auto t0 = Clock::now();
  TF_RETURN_IF_ERROR(kernel.Run(args));
  double one = std::chrono::duration<double>(Clock::now() - t0).count();
  int number = std::max(1, int(min_repeat_ms / 1e3 / std::max(one, 1e-9)));
  TimingResult r;
  for (int g = 0; g < repeat; ++g) {
    auto start = Clock::now();
    for (int n = 0; n < number; ++n) TF_RETURN_IF_ERROR(kernel.Run(args));
    r.seconds_per_run.push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
  }
  std::vector<double> sorted = r.seconds_per_run;
  std::sort(sorted.begin(), sorted.end());
  r.best_seconds = sorted.front();
  r.median_seconds = sorted[sorted.size() / 2];
  return r;
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
