// Search efficiency from tuning logs: for each suite workload, the trials each
// log needed to reach 90 % and 95 % of a reference throughput.
//
//   tunefarm_tune_efficiency --log model=A.db --log random=B.db [--budget 200]
//                            [--reference-db R.db] [--only W,...]
//
// Records are read in commit order, the order the search measured them; trial
// n is the n-th record of the workload (failed ones count: they cost a
// measurement). The reference is the fastest correct record in --reference-db
// (e.g. a 1,000-trial log) if given, else in all the logs read, so
// every log is judged against the same kernel. --budget cuts each log to its
// first N trials, so a 1,000-trial log can also be read as a 200-trial run.
// Logs given under the same label are runs of one search with different
// seeds: the table then shows each run's trial counts ("—": not reached) and
// their median per label (an unreached level counts as more than the budget;
// with an even number of runs, the upper of the two middle ones).
// --retime [--retime-threads N] [--retime-calls N] reads each log as the
// kernels it would have handed out, each timed here (N fresh compilations,
// their median) instead of as logged while tuning.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <chrono>
#include <functional>
#include <random>

#include "tune_log.h"
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

struct NamedLog {
  std::string label;
  std::string path;
  std::unique_ptr<database::Database> db;
};

// Seconds per call of `trace` on `w`, timed here (median of 5 groups of
// >= ~50 ms). The log's own timings were taken while tuning, under
// whatever load the machine had then; re-timing the kernels a log would have
// handed out puts every log and trial count on the same footing. 0: failed.
double RetimeOnce(const Workload& w, const std::string& trace) {
  auto f = ReplayTrace(w, trace);
  if (!f.ok()) return 0;
  auto jit = JitCompile(*f, Target::Host());
  if (!jit.ok()) return 0;
  std::vector<HostBuffer> bufs;
  std::vector<void*> args;
  std::mt19937_64 rng(7);
  for (const auto& p : f->params) {
    bufs.push_back(HostBuffer::Like(p));
    bufs.back().FillRandom(rng);
  }
  for (auto& b : bufs) args.push_back(b.data());
  // Constant inputs packed once, untimed, as when tuning (split_prepack.h).
  auto call = PreparedCall::Prepare(**jit, *f, args);
  if (!call.ok()) return 0;
  auto run = [&] { (void)(*call)->Run(); };
  using Clock = std::chrono::steady_clock;
  run();
  auto t0 = Clock::now();
  run();
  double once = std::chrono::duration<double>(Clock::now() - t0).count();
  int number = std::max(1, int(0.05 / std::max(once, 1e-7)));
  std::vector<double> samples;
  for (int r = 0; r < 5; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < number; ++i) run();
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// The median of `calls` re-timings, each compiled and given inputs afresh: a
// 9 us kernel on two threads varies by a fifth from one compiled copy to the
// next here (docs/tuning-benchmarks.md, DEP's 95 % goal), more than within one.
double Retime(const Workload& w, const std::string& trace, int calls) {
  std::vector<double> times;
  for (int c = 0; c < calls; ++c) {
    double t = RetimeOnce(w, trace);
    if (t <= 0) return 0;
    times.push_back(t);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Replaces each trial's time by the re-timed time of the kernel the log would
// have handed out after that trial (its best so far), so TrialsToReach reads
// the re-timed curve. Only the improvement points are compiled and timed.
std::vector<LoggedTrial> RetimedCurve(const Workload& w, const std::vector<LoggedTrial>& trials, int calls,
                                      std::map<std::string, double>& cache) {
  std::vector<LoggedTrial> out;
  TraceRanking ranking;
  std::optional<std::string> handed_out;  // the default schedule's trace text may be empty
  double delivered = 0;
  for (const LoggedTrial& t : trials) {
    ranking.Add(t);
    if (ranking.best() && ranking.best()->trace != handed_out) {
      handed_out = ranking.best()->trace;
      auto it = cache.find(*handed_out);
      if (it == cache.end()) it = cache.emplace(*handed_out, Retime(w, *handed_out, calls)).first;
      if (it->second > 0) delivered = it->second;
    }
    LoggedTrial r = t;
    r.ok = delivered > 0;
    r.seconds = delivered;
    out.push_back(r);
  }
  return out;
}

// On a re-timed curve: the first trial after which the kernel handed out is
// within `fraction` of the reference (no credit for a kernel later replaced).
std::optional<int> DeliveredToReach(const std::vector<LoggedTrial>& curve, double reference, double fraction) {
  for (const LoggedTrial& t : curve) {
    if (t.ok && reference / t.seconds >= fraction) return t.index;
  }
  return std::nullopt;
}

std::string Cell(const std::optional<int>& n) { return n ? std::to_string(*n) : "not reached"; }

// "random / model" style ratio of trials to reach a level; unreached counts as
// "more than the budget", so the ratio is a lower bound (">").
std::string TrialRatio(const std::optional<int>& slow, const std::optional<int>& fast, int budget) {
  if (!fast) return "—";
  char buf[32];
  if (!slow) {
    std::snprintf(buf, sizeof buf, "> %.1fx", double(budget) / *fast);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fx", double(*slow) / *fast);
  }
  return buf;
}

// Median of trial counts, unreached (nullopt) sorting after every number.
std::optional<int> MedianTrials(std::vector<std::optional<int>> v) {
  std::sort(v.begin(), v.end(), [](const std::optional<int>& a, const std::optional<int>& b) {
    return a && (!b || *a < *b);
  });
  return v[v.size() / 2];
}

std::string Runs(const std::vector<std::optional<int>>& v) {
  std::string out;
  for (const auto& n : v) out += (out.empty() ? "" : " / ") + (n ? std::to_string(*n) : std::string("—"));
  return out;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm;
  using namespace tunefarm::bench;
  std::vector<NamedLog> logs;
  std::string reference_path;
  std::string workload_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads";
  std::vector<std::string> only;
  int budget = 0;
  bool retime = false;
  int retime_threads = 2;  // what tunefarm tune measures with on this machine
  int retime_calls = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--retime") {
      retime = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s --log LABEL=DB [--log ...] [--budget N] [--reference-db DB] [--only W,...] [--retime [--retime-threads N] [--retime-calls N]]\n"
                   "  (logs under one LABEL are seeds of one configuration: per-run counts and their median)\n", argv[0]);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--log") {
      auto eq = v.find('=');
      logs.push_back({eq == std::string::npos ? v : v.substr(0, eq), eq == std::string::npos ? v : v.substr(eq + 1), nullptr});
    } else if (a == "--reference-db") {
      reference_path = v;
    } else if (a == "--retime-threads") {
      retime_threads = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--retime-calls") {
      retime_calls = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--budget") {
      budget = std::atoi(v.c_str());
    } else if (a == "--only") {
      only = SplitList(v);
    } else if (a == "--workloads") {
      workload_dir = v;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (logs.empty()) {
    std::fprintf(stderr, "give at least one --log LABEL=DB\n");
    return 2;
  }
  database::OpenOptions read_only;
  read_only.read_only = true;
  auto open = [&](const std::string& path) -> std::unique_ptr<database::Database> {
    auto db = database::Database::Open(path, read_only);
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(*db);
  };
  for (auto& log : logs) log.db = open(log.path);
  std::unique_ptr<database::Database> reference_db = reference_path.empty() ? nullptr : open(reference_path);
  const std::string target = DefaultRecordTargetString();
  tunefarm_set_num_threads(retime_threads);

  // Labels in order of first appearance; a repeated label groups seeds.
  std::vector<std::string> labels;
  for (const auto& log : logs) {
    if (std::find(labels.begin(), labels.end(), log.label) == labels.end()) labels.push_back(log.label);
  }
  const bool grouped = labels.size() < logs.size();
  if (grouped) {
    std::printf("| workload | reference GFLOP/s |");
    for (const auto& l : labels) std::printf(" %s best GFLOP/s | %s to 90%% | %s to 95%% |", l.c_str(), l.c_str(), l.c_str());
    if (labels.size() == 2) std::printf(" %s/%s median to 90%% | to 95%% |", labels[1].c_str(), labels[0].c_str());
    std::printf("\n|---|---|");
    for (size_t i = 0; i < labels.size(); ++i) std::printf("---|---|---|");
    if (labels.size() == 2) std::printf("---|---|");
    std::printf("\n");
  } else {
    std::printf("| workload | reference GFLOP/s |");
    for (const auto& log : logs) std::printf(" %s trials | %s best GFLOP/s | %s to 90%% | %s to 95%% |", log.label.c_str(),
                                             log.label.c_str(), log.label.c_str(), log.label.c_str());
    if (logs.size() == 2) std::printf(" %s/%s trials to 90%% | to 95%% |", logs[1].label.c_str(), logs[0].label.c_str());
    std::printf("\n|---|---|");
    for (size_t i = 0; i < logs.size(); ++i) std::printf("---|---|---|---|");
    if (logs.size() == 2) std::printf("---|---|");
    std::printf("\n");
  }

  for (const std::string& name : only.empty() ? kSuite : only) {
    auto w = ParseWorkloadFile(workload_dir + "/" + name + ".tf");
    if (!w.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), w.status().ToString().c_str());
      return 1;
    }
    const std::string hash = StructuralHashHex(*w);
    const double flops = w->Flops();
    std::vector<std::vector<LoggedTrial>> per_log;
    double reference = 0;  // seconds
    auto consider = [&](const std::optional<LoggedTrial>& t) {
      if (t && (reference == 0 || t->seconds < reference)) reference = t->seconds;
    };
    for (auto& log : logs) {
      auto trials = LoadTrials(*log.db, hash, target);
      if (!trials.ok()) {
        std::fprintf(stderr, "%s: %s\n", log.path.c_str(), trials.status().ToString().c_str());
        return 1;
      }
      if (budget > 0 && int(trials->size()) > budget) trials->resize(size_t(budget));
      per_log.push_back(std::move(*trials));
    }
    std::map<std::string, double> retimed;  // trace -> seconds, shared by the logs
    if (retime) {
      for (auto& trials : per_log) trials = RetimedCurve(*w, trials, retime_calls, retimed);
    }
    if (reference_db) {
      auto ref = LoadTrials(*reference_db, hash, target);
      if (ref.ok() && retime) {
        // What the reference log hands out at its end, not the best of its history.
        *ref = RetimedCurve(*w, *ref, retime_calls, retimed);
        if (!ref->empty() && ref->back().ok) reference = ref->back().seconds;
      } else if (ref.ok()) {
        consider(BestWithin(*ref, 0));
      }
    } else {
      for (const auto& trials : per_log) consider(BestWithin(trials, 0));
    }
    if (reference == 0) {
      std::printf("| %s | no correct record |\n", name.c_str());
      continue;
    }
    std::printf("| %s | %.1f |", name.c_str(), flops / reference / 1e9);
    std::vector<std::optional<int>> at90, at95;
    std::vector<std::optional<int>> best_gflops;  // nullopt: no correct record
    int max_trials = 0;
    for (const auto& trials : per_log) {
      auto best = BestWithin(trials, 0);
      if (retime && !trials.empty() && trials.back().ok) best = trials.back();  // what it hands out at the end
      at90.push_back(retime ? DeliveredToReach(trials, reference, 0.90) : TrialsToReach(trials, reference, 0.90));
      at95.push_back(retime ? DeliveredToReach(trials, reference, 0.95) : TrialsToReach(trials, reference, 0.95));
      best_gflops.push_back(best ? std::optional<int>(int(flops / best->seconds / 1e9 + 0.5)) : std::nullopt);
      max_trials = std::max(max_trials, int(trials.size()));
      if (!grouped) {
        std::printf(" %zu | %s | %s | %s |", trials.size(), best ? std::to_string(*best_gflops.back()).c_str() : "—",
                    Cell(at90.back()).c_str(), Cell(at95.back()).c_str());
      }
    }
    if (!grouped && logs.size() == 2) {
      std::printf(" %s | %s |", TrialRatio(at90[1], at90[0], max_trials).c_str(),
                  TrialRatio(at95[1], at95[0], max_trials).c_str());
    }
    if (grouped) {
      std::vector<std::optional<int>> median90, median95;
      std::vector<bool> has_runs;
      for (const std::string& label : labels) {
        std::vector<std::optional<int>> g90, g95;
        std::string bests;
        for (size_t i = 0; i < logs.size(); ++i) {
          if (logs[i].label != label || per_log[i].empty()) continue;  // a log without this workload
          g90.push_back(at90[i]);
          g95.push_back(at95[i]);
          bests += (bests.empty() ? "" : " / ") + (best_gflops[i] ? std::to_string(*best_gflops[i]) : std::string("—"));
          // A run shorter than the longest: its "—" may only mean it stopped early.
          if (int(per_log[i].size()) < max_trials) bests += " [" + std::to_string(per_log[i].size()) + " trials]";
        }
        has_runs.push_back(!g90.empty());
        if (g90.empty()) {
          median90.push_back(std::nullopt);
          median95.push_back(std::nullopt);
          std::printf(" — | — | — |");
          continue;
        }
        median90.push_back(MedianTrials(g90));
        median95.push_back(MedianTrials(g95));
        std::printf(" %s | %s (median %s) | %s (median %s) |", bests.c_str(), Runs(g90).c_str(), Cell(median90.back()).c_str(),
                    Runs(g95).c_str(), Cell(median95.back()).c_str());
      }
      if (labels.size() == 2 && has_runs[0] && has_runs[1]) {
        std::printf(" %s | %s |", TrialRatio(median90[1], median90[0], max_trials).c_str(),
                    TrialRatio(median95[1], median95[0], max_trials).c_str());
      } else if (labels.size() == 2) {
        std::printf(" — | — |");  // a label without runs of this workload
      }
    }
    std::printf("\n");
  }
  if (retime) {
    std::printf("\nRe-timed: every kernel a log handed out (its best so far) was re-timed in this process at %d "
                "thread(s), the median of %d compilation(s); GFLOP/s and trial counts use those times, not the ones "
                "logged while tuning.\n", retime_threads, retime_calls);
  }
  if (grouped) std::printf("\nCells list the runs of a label in the order given; —: not reached within the run.\n");
  std::printf("\nReference: %s. Trial n = the n-th record of the workload in commit order (the default "
              "schedule's baseline and failed candidates included).\n",
              reference_path.empty() ? "the fastest correct record in any of the logs above" : reference_path.c_str());
  return 0;
}
