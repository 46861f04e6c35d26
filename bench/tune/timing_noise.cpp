// How much the same kernel's measured time varies on this machine: the spread
// that a tuning run's ranking, and its best-so-far, have to live with.
//
//   tunefarm_timing_noise --db LOG --workload W.tf [--top 2] [--calls 20]
//                         [--threads 2]
//
// For each of the log's `top` fastest distinct traces of W (its records of
// the target `llvm`), `calls` times in alternation:
//   runner   one measurement as `tunefarm tune` takes it: LocalMeasurer, the
//            tunefarm-runner child, 3 groups of >= 20 ms, the fastest
//            (database::RecordTime, what the log keeps);
//   in-proc  the benchmarks' recipe in this process: 2 warm-up calls, the
//            median of 5 groups of ~50 ms (bench_timing.h).
// It prints each kernel's logged GFLOP/s and, per method, the median, the
// range and the calls below 3/4 of the median (a stretch in which the kernel
// ran far slower, e.g. at half speed). The first and last calls are printed
// too, so a drift during the run shows.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "tune_log.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/record.h"
#include "tunefarm/runtime/runtime.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::bench {
namespace {

// Seconds per call of `trace` in this process (median of 5 groups), 0 on failure.
double InProcess(const Workload& w, const std::string& trace) {
  auto f = ReplayTrace(w, trace);
  if (!f.ok()) return 0;
  auto jit = JitCompile(*f, Target::Host());
  if (!jit.ok()) return 0;
  std::mt19937_64 rng(7);
  std::vector<HostBuffer> buffers;
  std::vector<void*> args;
  for (const auto& p : f->params) {
    buffers.push_back(HostBuffer::Like(p));
    buffers.back().FillRandom(rng);
  }
  for (auto& b : buffers) args.push_back(b.data());
  auto call = PreparedCall::Prepare(**jit, *f, args);
  if (!call.ok()) return 0;
  return TimeMedian([&] { (void)(*call)->Run(); }, 5);
}

void Summarize(const char* method, const std::vector<double>& gflops) {
  if (gflops.empty()) return;
  std::vector<double> sorted = gflops;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  int slow = int(std::count_if(sorted.begin(), sorted.end(), [&](double g) { return g < 0.75 * median; }));
  std::printf("  %-8s median %7.1f  range %7.1f .. %7.1f  below 3/4 of the median: %d of %zu  first %7.1f  last %7.1f\n",
              method, median, sorted.front(), sorted.back(), slow, sorted.size(), gflops.front(), gflops.back());
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm;
  using namespace tunefarm::bench;
  std::string db_path, workload_path;
  int top = 2, calls = 20, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--db") {
      db_path = v;
    } else if (a == "--workload") {
      workload_path = v;
    } else if (a == "--top") {
      top = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--calls") {
      calls = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--threads") {
      threads = std::max(1, std::atoi(v.c_str()));
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (db_path.empty() || workload_path.empty()) {
    std::fprintf(stderr, "usage: %s --db LOG --workload W.tf [--top 2] [--calls 20] [--threads 2]\n", argv[0]);
    return 2;
  }
  auto w = ParseWorkloadFile(workload_path);
  if (!w.ok()) {
    std::fprintf(stderr, "%s\n", w.status().ToString().c_str());
    return 1;
  }
  std::ifstream in(workload_path);
  std::stringstream text;
  text << in.rdbuf();
  database::OpenOptions read_only;
  read_only.read_only = true;
  auto db = database::Database::Open(db_path, read_only);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  auto trials = LoadTrials(**db, StructuralHashHex(*w), DefaultRecordTargetString());
  if (!trials.ok()) {
    std::fprintf(stderr, "%s\n", trials.status().ToString().c_str());
    return 1;
  }
  // The log's fastest distinct kernels as tunefarm ranks them: by the mean
  // of each trace's measurements (a best is measured twice), first trial kept.
  std::map<std::string, LoggedTrial> by_trace;
  for (const LoggedTrial& t : *trials) {
    if (!t.ok) continue;
    auto [it, added] = by_trace.emplace(t.trace, t);
    if (!added) {
      LoggedTrial& kept = it->second;
      kept.seconds = (kept.seconds * kept.measurements + t.seconds) / (kept.measurements + 1);
      ++kept.measurements;
    }
  }
  std::vector<LoggedTrial> best;
  for (auto& [trace, t] : by_trace) best.push_back(std::move(t));
  std::sort(best.begin(), best.end(), [](const auto& a, const auto& b) {
    return a.seconds != b.seconds ? a.seconds < b.seconds : a.id < b.id;
  });
  std::vector<LoggedTrial> kernels(best.begin(), best.begin() + std::min<size_t>(best.size(), size_t(std::max(top, 0))));
  if (kernels.empty()) {
    std::fprintf(stderr, "%s: no successful record of %s for %s\n", db_path.c_str(), w->name.c_str(),
                 DefaultRecordTargetString().c_str());
    return 1;
  }

  tunefarm_set_num_threads(threads);
  const double flops = w->Flops();
  LocalMeasurer measurer;
  MeasureOptions options;  // tunefarm tune's defaults: 3 groups of >= 20 ms
  options.num_threads = threads;
  std::printf("%s, %d thread(s), %d calls per method, alternating\n", w->name.c_str(), threads, calls);
  for (const LoggedTrial& k : kernels) {
    std::vector<double> runner, in_process;
    for (int c = 0; c < calls; ++c) {
      MeasureInput input{"noise", text.str(), k.trace, "llvm"};
      std::vector<MeasureResult> r = measurer.Measure({input}, options);
      if (r.size() == 1 && r[0].error == MeasureErrorKind::kNone) runner.push_back(flops / *database::RecordTime(r[0].repeat_seconds) / 1e9);
      double s = InProcess(*w, k.trace);
      if (s > 0) in_process.push_back(flops / s / 1e9);
    }
    std::printf("record of trial %d: logged %.1f GFLOP/s\n", k.index, flops / k.seconds / 1e9);
    Summarize("runner", runner);
    Summarize("in-proc", in_process);
  }
  return 0;
}
