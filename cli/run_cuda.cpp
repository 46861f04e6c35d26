// `tunefarm run` on a GPU (run_cuda.h says what). The runner does what it
// does for a tuning job's candidate -- build, check against the reference
// (the interpreter, or the default GPU program where the workload is too
// large for it), time in groups -- so `run` and the log agree on what a
// time means.
#include "run_cuda.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "commands.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/measure/measure.h"
#include "tunefarm/worker/cuda_device.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::cli {

int RunOnGpu(const Workload& w, const Target& target, const std::string& trace_text,
             std::optional<double> logged_seconds, const GpuRunOptions& o) {
  auto gpu = QueryCudaDevice(o.gpu);
  if (!gpu.ok()) {
    fmt::print(stderr, "error: target '{}' runs on this machine's GPU {}, and there is none: {}\n", target.ToString(),
               o.gpu, gpu.status().message());
    return kExitUserError;
  }
  if (gpu->Arch() != target.arch) {
    fmt::print(stderr, "error: target '{}' is for {}, but GPU {} here is a {} ({}); run it as '{}'\n",
               target.ToString(), target.arch, o.gpu, gpu->name, gpu->Arch(), gpu->TargetText());
    return kExitUserError;
  }
  fmt::print("device    GPU {}: {}, {}, {} SMs, {}\n", o.gpu, gpu->name, gpu->Arch(), gpu->sm_count,
             gpu->DriverText());
  LocalMeasurerOptions measurer_options;
  measurer_options.device = "cuda:" + std::to_string(o.gpu);
  LocalMeasurer measurer(measurer_options);
  MeasureInput input;
  input.candidate_id = w.name;
  input.workload_text = PrintWorkload(w);
  input.trace_text = trace_text;
  input.target = target.ToString();
  MeasureOptions options;
  options.repeat = o.repeat;
  options.min_repeat_ms = o.min_repeat_ms;
  options.check_correctness = o.check;
  options.input_seed = o.seed;
  options.run_timeout_s = std::max(10.0, 2 * o.repeat * o.min_repeat_ms / 1e3 + 10);
  std::vector<MeasureResult> results = measurer.Measure({input}, options);
  const char* which = trace_text.empty() ? "default GPU program" : "tuned schedule";
  if (results.size() != 1) {
    fmt::print(stderr, "error: the runner answered {} results for one program\n", results.size());
    return kExitInternalError;
  }
  const MeasureResult& r = results[0];
  if (r.error != MeasureErrorKind::kNone) {
    if (r.error == MeasureErrorKind::kWrongResult) fmt::print("check     FAIL ({}): {}\n", which, r.error_message);
    fmt::print(stderr, "error: {} of {} on GPU {}: {}: {}\n", which, w.name, o.gpu, MeasureErrorKindName(r.error),
               r.error_message);
    return kExitUserError;
  }
  fmt::print("build     {:.2f} s (NVRTC, {})\n", r.build_seconds, which);
  if (o.check) {
    fmt::print("check     correct: matches the reference on random inputs (the runner's check, as for a tuning "
               "candidate)\n");
  }
  std::vector<double> groups = r.repeat_seconds;
  if (groups.empty()) {
    fmt::print(stderr, "error: the runner timed no group of {}\n", w.name);
    return kExitInternalError;
  }
  std::sort(groups.begin(), groups.end());
  const double best = groups.front(), median = groups[groups.size() / 2];
  const double flops = w.Flops();
  fmt::print("time      fastest group {:.4f} ms (what a record keeps), median {:.4f} ms, over {} groups\n", best * 1e3,
             median * 1e3, groups.size());
  fmt::print("speed     {:.2f} GFLOP/s (fastest group), {:.2f} GFLOP/s (median)\n", flops / best / 1e9,
             flops / median / 1e9);
  if (logged_seconds) fmt::print("          {:.2f}x the log's time for this record\n", *logged_seconds / best);
  return kExitOk;
}

}  // namespace tunefarm::cli
