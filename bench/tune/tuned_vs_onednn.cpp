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
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "host_description.h"
#include "kernel_comparison.h"
#include "onednn_spec.h"
#include "tune_log.h"
#include "tunefarm/compiler/workload/workload_parser.h"

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

struct Row {
  std::string workload;
  ThreadsRow figures;
};

std::vector<std::string> column_labels;
std::vector<Row> rows;
std::vector<std::string> provenance_lines;

// The default kernel first, then one per budget.
std::vector<Kernel> BuildKernels(const Options& o, const Workload& w, database::Database& db) {
  std::vector<Kernel> kernels;
  kernels.push_back(DefaultKernel(w));
  auto trials = LoadTrials(db, StructuralHashHex(w), o.record_target);
  for (int budget : o.budgets) kernels.push_back(TunedKernel(w, trials, budget));
  return kernels;
}

int RunWorkload(const Options& o, const std::string& name, database::Database& db) {
  auto w = ParseWorkloadFile(o.workload_dir + "/" + name + ".tf");
  if (!w.ok()) {
    std::printf("%s: %s\n", name.c_str(), w.status().ToString().c_str());
    return 1;
  }
  auto spec = SuiteOneDnnSpec(name);
  if (!spec.ok()) {
    std::printf("%s: %s\n", name.c_str(), spec.status().ToString().c_str());
    return 1;
  }
  std::vector<Kernel> kernels = BuildKernels(o, *w, db);
  for (const Kernel& k : kernels) {
    if (!k.provenance.empty() && k.label != "default") provenance_lines.push_back(k.provenance);
  }
  ComparisonOptions options;
  options.threads = o.threads;
  options.repeat = o.repeat;
  options.skip_default = o.skip_default;
  auto figures = CompareWithOneDnn(*w, kernels, *spec, options);
  if (!figures.ok()) {
    std::printf("%s: %s\n", name.c_str(), figures.status().ToString().c_str());
    return 1;
  }
  int rc = 0;
  for (ThreadsRow& r : *figures) {
    for (const Cell& c : r.cells) rc |= c.wrong ? 1 : 0;
    rows.push_back({name, std::move(r)});
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
  for (const Row& row : rows) {
    const ThreadsRow& r = row.figures;
    std::printf("| %s | %d | %.2f | %.1f |", row.workload.c_str(), r.threads, r.load, r.onednn_gflops);
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
