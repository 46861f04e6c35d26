// `tunefarm run --target cuda`: the GPU half of `run`. A workload's default
// GPU program, or a logged record's, built with NVRTC, checked and timed on
// this machine's GPU by the runner a cuda worker uses (LocalMeasurer on
// cuda:N), so the time printed is taken the way a record's was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::cli {

struct GpuRunOptions {
  int gpu = 0;               // the driver's ordinal: cuda:N
  int repeat = 5;            // timed groups
  double min_repeat_ms = 100;
  bool check = true;         // the runner's check against the reference
  uint64_t seed = 42;        // random inputs
};

// Runs `w` on GPU `o.gpu` for cuda `target`: `trace_text` is the program's
// schedule (empty: the default GPU program); `logged_seconds`, when set, is
// the record's time, printed beside today's. Prints the device, the build,
// the check and the time; returns the process exit code: 0, or 1 where there
// is no such GPU, it is of another architecture than the target's, or the
// program fails to build, run or check (each said on stderr).
int RunOnGpu(const Workload& w, const Target& target, const std::string& trace_text,
             std::optional<double> logged_seconds, const GpuRunOptions& o);

}  // namespace tunefarm::cli
