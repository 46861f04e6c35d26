#include "kernel_comparison.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>

#include "bench_timing.h"
#include "onednn_reference.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::bench {

Kernel DefaultKernel(const Workload& w) {
  Kernel k{"default", nullptr, {}, "", "default schedule"};
  auto f = LowerToPrimFunc(w);
  if (!f.ok()) {
    k.problem = "lowering failed: " + f.status().message();
    return k;
  }
  auto jit = JitCompile(*f, Target::Host());
  if (jit.ok()) k.jit = std::move(*jit); else k.problem = "compile failed: " + jit.status().message();
  k.func = *f;
  return k;
}

Kernel TunedKernel(const Workload& w, const Result<std::vector<LoggedTrial>>& trials, int budget) {
  Kernel k{budget > 0 ? "tuned@" + std::to_string(budget) : "tuned (all)", nullptr, {}, "", ""};
  if (!trials.ok()) {
    k.problem = "reading the log failed: " + trials.status().message();
    return k;
  }
  std::optional<LoggedTrial> best = BestWithin(*trials, budget);
  if (!best) {
    k.problem = "no correct record in the log";
    return k;
  }
  int logged = budget > 0 ? std::min<int>(budget, int(trials->size())) : int(trials->size());
  char buf[256];
  std::string mean_of = best->measurements > 1 ? " (mean of " + std::to_string(best->measurements) + ")" : "";
  std::snprintf(buf, sizeof buf, "%s %s: record #%lld, trial %d of %d, %.4f ms when tuned%s%s", w.name.c_str(),
                k.label.c_str(), (long long)best->id, best->index, logged, best->seconds * 1e3, mean_of.c_str(),
                IsDefaultSchedule(best->trace) ? " (the default schedule)" : "");
  k.provenance = buf;
  if (budget > 0 && int(trials->size()) < budget) k.provenance += " [log holds fewer trials than the budget]";
  auto tuned = ReplayTrace(w, best->trace);
  if (!tuned.ok()) {
    k.problem = tuned.status().message();
    return k;
  }
  auto jit = JitCompile(*tuned, Target::Host());
  if (jit.ok()) k.jit = std::move(*jit); else k.problem = "compile failed: " + jit.status().message();
  k.func = *tuned;
  return k;
}

Result<std::vector<ThreadsRow>> CompareWithOneDnn(const Workload& w, std::vector<Kernel>& kernels, const OneDnnSpec& spec,
                                                  const ComparisonOptions& o) {
  OneDnnMaker make = [&spec](std::map<std::string, HostBuffer*>& buffers, HostBuffer* output) {
    return MakeOneDnnOp(spec, buffers, output);
  };
  return CompareWithOneDnn(w, kernels, make, o);
}

Result<std::vector<ThreadsRow>> CompareWithOneDnn(const Workload& w, std::vector<Kernel>& kernels, const OneDnnMaker& make,
                                                  const ComparisonOptions& o) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  if (f.params.size() != f.num_inputs + 1) return Status::InvalidArgument(w.name + ": expected exactly one output");

  // Inputs shared by every implementation; one output buffer per kernel.
  std::vector<HostBuffer> inputs;
  std::map<std::string, HostBuffer*> by_name;
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < f.num_inputs; ++i) inputs.push_back(HostBuffer::Like(f.params[i]));
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].FillRandom(rng);
    by_name[f.params[i]->name] = &inputs[i];
  }
  const ir::Buffer& out_param = f.params.back();
  HostBuffer reference = HostBuffer::Like(out_param);
  std::vector<HostBuffer> outputs;
  for (size_t i = 0; i < kernels.size(); ++i) outputs.push_back(HostBuffer::Like(out_param));
  auto args_for = [&](size_t kernel) {
    std::vector<void*> args;
    for (auto& in : inputs) args.push_back(in.data());
    args.push_back(outputs[kernel].data());
    return args;
  };

  const double flops = w.Flops();
  std::vector<ThreadsRow> rows;
  for (int threads : o.threads) {
    // oneDNN sizes its thread team when a primitive is created: set it first.
    tunefarm_set_num_threads(threads);
    omp_set_num_threads(threads);
    TF_ASSIGN_OR_RETURN(OneDnnOp op, make(by_name, &reference));
    op.run();
    op.fetch();
    ThreadsRow row{threads, 0, 0, 0, op.what, {}};
    double load[1] = {0};
    if (getloadavg(load, 1) == 1) row.load = load[0];
    std::printf("%s (%.3f GFLOP), %d thread(s)\n", w.name.c_str(), flops / 1e9, threads);
    // Check every kernel first; then time oneDNN and the tuned kernels in
    // interleaved rounds, and the default on its own after them.
    std::vector<Cell> cells(kernels.size());
    std::vector<std::unique_ptr<PreparedCall>> calls(kernels.size());
    for (size_t i = 0; i < kernels.size(); ++i) {
      Kernel& k = kernels[i];
      Cell& cell = cells[i];
      if (k.label == "default" && o.skip_default) {
        cell.note = "skipped";
        continue;
      }
      if (!k.problem.empty()) {
        cell.note = k.problem;
        continue;
      }
      // Constant inputs (weights) are packed once, untimed, as oneDNN
      // reorders its weights at setup (split_prepack.h).
      auto call = PreparedCall::Prepare(*k.jit, k.func, args_for(i));
      Status st = call.ok() ? (*call)->Run() : call.status();
      CompareResult cmp = CompareBuffers(outputs[i], reference, 1e-3, 1e-3);
      if (!st.ok()) {
        cell.note = "run failed: " + st.message();
      } else if (!cmp.equal) {
        cell.note = "WRONG RESULT vs oneDNN: " + cmp.message;
        cell.wrong = true;
      } else {
        calls[i] = std::move(call).value();
      }
    }
    std::vector<std::function<void()>> timed = {op.run};
    std::vector<size_t> timed_kernels;
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (calls[i] == nullptr || kernels[i].label == "default") continue;
      PreparedCall* call = calls[i].get();
      timed.push_back([call] { (void)call->Run(); });
      timed_kernels.push_back(i);
    }
    InterleavedTimes times = TimeInterleaved(timed, o.repeat);
    double t_dnnl = times.Median(0);
    for (size_t j = 0; j < timed_kernels.size(); ++j) {
      cells[timed_kernels[j]].seconds = times.Median(j + 1);
      cells[timed_kernels[j]].gflops = flops / times.Median(j + 1) / 1e9;
      cells[timed_kernels[j]].ratio = times.MedianRatio(0, j + 1);
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (calls[i] == nullptr || kernels[i].label != "default") continue;
      PreparedCall* call = calls[i].get();
      double t = TimeMedian([call] { (void)call->Run(); }, std::min(o.repeat, 3));
      cells[i].seconds = t;
      cells[i].gflops = flops / t / 1e9;
      cells[i].ratio = t_dnnl / t;
    }
    row.onednn_seconds = t_dnnl;
    row.onednn_gflops = flops / t_dnnl / 1e9;
    std::printf("  %-14s %8.1f GFLOP/s %9.4f ms  (oneDNN %s)\n", "oneDNN", row.onednn_gflops, t_dnnl * 1e3,
                op.what.c_str());
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Cell& cell = cells[i];
      if (cell.note.empty()) {
        std::printf("  %-14s %8.1f GFLOP/s %9.4f ms  %5.2fx oneDNN\n", kernels[i].label.c_str(), cell.gflops,
                    cell.seconds * 1e3, cell.ratio);
      } else {
        std::printf("  %-14s %s\n", kernels[i].label.c_str(), cell.note.c_str());
      }
    }
    std::fflush(stdout);
    row.cells = std::move(cells);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace tunefarm::bench
