// Tuned kernels vs the default schedule vs oneDNN, in one run, 1 and 2 threads.
//
//   tunefarm_tuned_vs_onednn --db LOG [--at 200,1000] [--repeat 7] [--threads 1,2]
//                            [--only gmm_512,...] [--skip-default] [--workloads DIR]
//                            [--target 'llvm -num-threads=1']
//
// For each suite workload the kernel is the log's fastest correct record; with
// --at N it is the fastest among the workload's first N records in commit
// order, which is exactly what an N-trial run found (a resumed log keeps the
// earlier run's records first), so one log tuned to 1,000 trials yields the
// 200- and the 1,000-trial kernels for the same run. Every kernel is checked
// against oneDNN's output on the same random inputs; a wrong one is reported,
// never timed. Figures are GFLOP/s of the median group (groups of >= ~50 ms)
// and the ratio of oneDNN's time to the kernel's, both timed in this process:
// oneDNN and the tuned kernels in interleaved rounds (bench_timing.h), the
// ratio the median of the rounds' ratios; the slow default schedule after
// them, against oneDNN's median.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "onednn_reference.h"
#include "tune_log.h"
#include "bench_timing.h"
#include "host_description.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::bench {
namespace {


const std::vector<std::string> kSuite = {"gmm_1024", "gmm_512", "c2d_resnet_3x3", "dep_3x3_c256_28", "t2d", "dense_bias_relu"};

struct Options {
  std::string db;
  std::string workload_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads";
  std::vector<int> budgets = {0};  // 0: every record in the log
  std::vector<int> threads = {1, 2};
  std::vector<std::string> only;
  int repeat = 7;
  bool skip_default = false;
  std::string record_target;  // the log's records of this target (--target; default: llvm)
};

// One kernel of the comparison: the default schedule or a tuned record.
struct Kernel {
  std::string label;  // "default", "tuned@200", "tuned"
  std::unique_ptr<JitKernel> jit;
  ir::PrimFunc func;    // what jit was compiled from (its prepack split, if any)
  std::string problem;  // why it is not timed (compile failure, wrong result)
  std::string provenance;
};

// One cell of the final table.
struct Cell {
  double gflops = 0;
  double ratio = 0;
  std::string note;  // set instead of figures when not timed
};

struct Row {
  std::string workload;
  int threads = 0;
  double load = 0;  // 1-minute load average when this row was timed
  double onednn_gflops = 0;
  std::string onednn_what;
  std::vector<Cell> cells;  // one per kernel, in column order
};

std::vector<std::string> column_labels;
std::vector<Row> rows;
std::vector<std::string> provenance_lines;

std::string KernelLabel(int budget) { return budget > 0 ? "tuned@" + std::to_string(budget) : "tuned (all)"; }

// Builds the kernels of one workload: default first, then one per budget.
std::vector<Kernel> BuildKernels(const Options& o, const Workload& w, database::Database& db) {
  std::vector<Kernel> kernels;
  Target host = Target::Host();
  Kernel def{"default", nullptr, {}, "", "default schedule"};
  auto f = LowerToPrimFunc(w);
  if (!f.ok()) {
    def.problem = "lowering failed: " + f.status().message();
  } else {
    auto jit = JitCompile(*f, host);
    if (jit.ok()) def.jit = std::move(*jit); else def.problem = "compile failed: " + jit.status().message();
    def.func = *f;
  }
  kernels.push_back(std::move(def));
  auto trials = LoadTrials(db, StructuralHashHex(w), o.record_target);
  for (int budget : o.budgets) {
    Kernel k{KernelLabel(budget), nullptr, {}, "", ""};
    if (!trials.ok()) {
      k.problem = "reading the log failed: " + trials.status().message();
    } else if (auto best = BestWithin(*trials, budget); !best) {
      k.problem = "no correct record in the log";
    } else {
      int logged = budget > 0 ? std::min<int>(budget, int(trials->size())) : int(trials->size());
      char buf[256];
      std::string mean_of = best->measurements > 1 ? " (mean of " + std::to_string(best->measurements) + ")" : "";
      std::snprintf(buf, sizeof buf, "%s %s: record #%lld, trial %d of %d, %.4f ms when tuned%s%s", w.name.c_str(),
                    k.label.c_str(), (long long)best->id, best->index, logged, best->seconds * 1e3,
                    mean_of.c_str(), IsDefaultSchedule(best->trace) ? " (the default schedule)" : "");
      k.provenance = buf;
      if (budget > 0 && int(trials->size()) < budget) k.provenance += " [log holds fewer trials than the budget]";
      auto tuned = ReplayTrace(w, best->trace);
      if (!tuned.ok()) {
        k.problem = tuned.status().message();
      } else {
        auto jit = JitCompile(*tuned, host);
        if (jit.ok()) k.jit = std::move(*jit); else k.problem = "compile failed: " + jit.status().message();
        k.func = *tuned;
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

int RunWorkload(const Options& o, const std::string& name, database::Database& db) {
  auto w = ParseWorkloadFile(o.workload_dir + "/" + name + ".tf");
  if (!w.ok()) {
    std::printf("%s: %s\n", name.c_str(), w.status().ToString().c_str());
    return 1;
  }
  auto f = LowerToPrimFunc(*w);
  if (!f.ok()) return 1;
  std::vector<Kernel> kernels = BuildKernels(o, *w, db);
  for (const Kernel& k : kernels) {
    if (!k.provenance.empty() && k.label != "default") provenance_lines.push_back(k.provenance);
  }

  // Inputs shared by every implementation; one output buffer per kernel.
  std::vector<HostBuffer> inputs;
  std::map<std::string, HostBuffer*> by_name;
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < f->num_inputs; ++i) inputs.push_back(HostBuffer::Like(f->params[i]));
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].FillRandom(rng);
    by_name[f->params[i]->name] = &inputs[i];
  }
  if (f->params.size() != f->num_inputs + 1) {
    std::printf("%s: expected exactly one output\n", name.c_str());
    return 1;
  }
  const ir::Buffer& out_param = f->params.back();
  HostBuffer reference = HostBuffer::Like(out_param);
  std::vector<HostBuffer> outputs;
  for (size_t i = 0; i < kernels.size(); ++i) outputs.push_back(HostBuffer::Like(out_param));
  auto args_for = [&](size_t kernel) {
    std::vector<void*> args;
    for (auto& in : inputs) args.push_back(in.data());
    args.push_back(outputs[kernel].data());
    return args;
  };

  const double flops = w->Flops();
  int rc = 0;
  for (int threads : o.threads) {
    // oneDNN sizes its thread team when a primitive is created: set it first.
    tunefarm_set_num_threads(threads);
    omp_set_num_threads(threads);
    auto op = MakeOneDnnOp(name, by_name, &reference);
    if (!op.ok()) {
      std::printf("%s: %s\n", name.c_str(), op.status().ToString().c_str());
      return 1;
    }
    op->run();
    op->fetch();
    Row row{name, threads, 0, 0, op->what, {}};
    double load[1] = {0};
    if (getloadavg(load, 1) == 1) row.load = load[0];
    std::printf("%s (%.3f GFLOP), %d thread(s)\n", name.c_str(), flops / 1e9, threads);
    // Check every kernel first; then time oneDNN and the tuned kernels in
    // interleaved rounds, and the default (seconds per call for the big
    // workloads: fewer groups) on its own after them.
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
        rc = 1;
      } else {
        calls[i] = std::move(call).value();
      }
    }
    std::vector<std::function<void()>> timed = {op->run};
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
      cells[timed_kernels[j]].gflops = flops / times.Median(j + 1) / 1e9;
      cells[timed_kernels[j]].ratio = times.MedianRatio(0, j + 1);
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (calls[i] == nullptr || kernels[i].label != "default") continue;
      PreparedCall* call = calls[i].get();
      double t = TimeMedian([call] { (void)call->Run(); }, std::min(o.repeat, 3));
      cells[i].gflops = flops / t / 1e9;
      cells[i].ratio = t_dnnl / t;
    }
    row.onednn_gflops = flops / t_dnnl / 1e9;
    std::printf("  %-14s %8.1f GFLOP/s  (oneDNN %s)\n", "oneDNN", row.onednn_gflops, op->what.c_str());
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Cell& cell = cells[i];
      if (cell.note.empty()) {
        std::printf("  %-14s %8.1f GFLOP/s  %5.2fx oneDNN\n", kernels[i].label.c_str(), cell.gflops, cell.ratio);
      } else {
        std::printf("  %-14s %s\n", kernels[i].label.c_str(), cell.note.c_str());
      }
    }
    std::fflush(stdout);
    row.cells = std::move(cells);
    rows.push_back(row);
  }
  if (column_labels.empty()) {
    for (const Kernel& k : kernels) column_labels.push_back(k.label);
  }
  return rc;
}

void PrintTable() {
  std::printf("\n| workload | threads | load | oneDNN GFLOP/s |");
  for (const auto& l : column_labels) std::printf(" %s GFLOP/s | %s / oneDNN |", l.c_str(), l.c_str());
  std::printf("\n|---|---|---|---|");
  for (size_t i = 0; i < column_labels.size(); ++i) std::printf("---|---|");
  std::printf("\n");
  for (const Row& r : rows) {
    std::printf("| %s | %d | %.2f | %.1f |", r.workload.c_str(), r.threads, r.load, r.onednn_gflops);
    for (const Cell& c : r.cells) {
      if (c.note.empty()) {
        std::printf(" %.1f | %.2fx |", c.gflops, c.ratio);
      } else {
        std::printf(" %s | — |", c.note.size() > 40 ? (c.note.substr(0, 40) + "...").c_str() : c.note.c_str());
      }
    }
    std::printf("\n");
  }
  std::printf("\nKernels:\n");
  for (const auto& line : provenance_lines) std::printf("- %s\n", line.c_str());
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm::bench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--workloads") o.workload_dir = value();
    else if (a == "--repeat") o.repeat = std::max(3, std::atoi(value().c_str()));
    else if (a == "--skip-default") o.skip_default = true;
    else if (a == "--only") o.only = SplitList(value());
    else if (a == "--target") {
      auto target = RecordTargetString(value());
      if (!target.ok()) {
        std::fprintf(stderr, "--target: %s\n", target.status().ToString().c_str());
        return 2;
      }
      o.record_target = *target;
    } else if (a == "--at") {
      o.budgets.clear();
      for (const auto& s : SplitList(value())) o.budgets.push_back(std::atoi(s.c_str()));
    } else if (a == "--threads") {
      o.threads.clear();
      for (const auto& s : SplitList(value())) o.threads.push_back(std::atoi(s.c_str()));
    } else {
      std::fprintf(stderr, "usage: %s --db LOG [--at N,...] [--repeat R] [--threads 1,2] [--only W,...] [--skip-default] [--target T]\n",
                   argv[0]);
      return 2;
    }
  }
  if (o.db.empty()) {
    std::fprintf(stderr, "--db is required\n");
    return 2;
  }
  if (o.record_target.empty()) o.record_target = DefaultRecordTargetString();
  tunefarm::database::OpenOptions read_only;
  read_only.read_only = true;
  auto db = tunefarm::database::Database::Open(o.db, read_only);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  std::printf("host: %s\n", HostDescription().c_str());
  int rc = 0;
  for (const std::string& name : o.only.empty() ? kSuite : o.only) rc |= RunWorkload(o, name, **db);
  PrintTable();
  return rc;
}
