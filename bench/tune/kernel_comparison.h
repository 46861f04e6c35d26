// tunefarm kernels timed beside oneDNN in one process, the machinery of the
// side-by-side benchmarks (tunefarm_tuned_vs_onednn for the six-workload
// suite, tunefarm_layers_vs_onednn for the layer suite): the kernels of a
// workload (its default schedule, a tuning log's best record within a trial
// budget), then, per thread count, oneDNN's peer made for that count, every
// kernel checked against oneDNN's output on the same random inputs (a wrong
// one is reported, never timed), and oneDNN and the checked kernels timed in
// interleaved rounds (bench_timing.h). Constant inputs are packed once,
// untimed, as oneDNN reorders its weights at setup (PreparedCall).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onednn_reference.h"
#include "onednn_spec.h"
#include "tune_log.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::bench {

// One kernel of a comparison: the default schedule or a tuned record.
struct Kernel {
  std::string label;  // "default", "tuned@200", "tuned (all)"
  std::unique_ptr<JitKernel> jit;
  ir::PrimFunc func;       // what jit was compiled from (its prepack split, if any)
  std::string problem;     // why it is not timed (compile failure, no record, ...); empty when jit is set
  std::string provenance;  // which record it is, for the tables' notes (tuned kernels)
};

// The workload's default schedule, compiled for this host.
Kernel DefaultKernel(const Workload& w);

// The best record (TraceRanking) among the first `budget` trials of `trials`
// (0: all), replayed and compiled; `trials` is what LoadTrials returned for
// the workload (an error there becomes the kernel's problem).
Kernel TunedKernel(const Workload& w, const Result<std::vector<LoggedTrial>>& trials, int budget);

// One kernel's figures at one thread count.
struct Cell {
  double gflops = 0;
  double seconds = 0;  // per call: the median group
  double ratio = 0;  // oneDNN's time / the kernel's: above 1 the kernel is faster
  std::string note;  // set instead of the figures when not timed
  bool wrong = false;  // its result differed from oneDNN's
};

// A workload at one thread count: oneDNN's figures and one cell per kernel.
struct ThreadsRow {
  int threads = 0;
  double load = 0;  // 1-minute load average when this row was timed
  double onednn_gflops = 0;
  double onednn_seconds = 0;  // per call: the median group
  std::string onednn_what;
  std::vector<Cell> cells;  // in the kernels' order
};

struct ComparisonOptions {
  std::vector<int> threads = {1, 2};
  int repeat = 7;             // interleaved rounds
  bool skip_default = false;  // leave kernels labelled "default" untimed
};

// Compares `kernels` of `w` (their order is the cells') with oneDNN's `spec`
// at each thread count, printing a progress block per count. Kernels labelled
// "default" are timed after the interleaved rounds, at most 3 groups, against
// oneDNN's median (an untuned large workload takes seconds per call). An
// error when the workload has not exactly one output or oneDNN cannot make
// the op.
Result<std::vector<ThreadsRow>> CompareWithOneDnn(const Workload& w, std::vector<Kernel>& kernels, const OneDnnSpec& spec,
                                                  const ComparisonOptions& options);

// Makes oneDNN's peer on the workload's buffers (by tensor name) and the
// output buffer, as MakeOneDnnOp does from a spec; called once per thread count.
using OneDnnMaker = std::function<Result<OneDnnOp>(std::map<std::string, HostBuffer*>&, HostBuffer*)>;

// The same with oneDNN's peer made by `make` (bench/models: a model task's
// fused computation, not an op class of onednn_spec.h).
Result<std::vector<ThreadsRow>> CompareWithOneDnn(const Workload& w, std::vector<Kernel>& kernels, const OneDnnMaker& make,
                                                  const ComparisonOptions& options);

}  // namespace tunefarm::bench
