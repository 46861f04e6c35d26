// Cost-model ranking quality on tuning logs: how well the XGBoost cost model
// orders the kernels a search actually measured, in two readings.
//
//   tunefarm_log_ranking --log DB [--log DB ...] [--online-log DB ...] [--only W,... | --all]
//                        [--folds K] [--window N] [--max-programs N] [--predictions FILE] [--transfer]
//                        [--rounds N --depth N --eta X --min-child X --colsample X --subsample X
//                         --pairsample N --seed N]   (XGBoost settings; default: the tuner's)
//
// Workloads: --only's names, read from --workloads DIR (default
// configs/workloads) as NAME.tf; the six suite workloads by default; --all:
// every workload the logs hold, from the text each log keeps of it (the
// layer suite's, a model's tasks), no files needed.
//
// Held out (TenSet's metrics): every distinct program of a workload, from all
// the logs given (--log and --online-log), goes into one of K folds (default
// 5); a model trained on the other folds of every workload scores it.
// Pairwise accuracy, top-1 and top-5 per workload, means over the folds, and
// pairwise accuracy by how far apart the pair's true speeds are. The same
// program measured by several logs is one record with the mean of its times.
// --max-programs keeps a random N of each workload's programs (a learning
// curve on the same data).
//
// Transfer (--transfer): for each workload, a model trained on every other
// workload's programs scores all of its own -- what a warm-started search
// knows before its first measurement.
//
// Online (what the search sees), on the --online-log logs only (give the
// model-guided ones: a random-search log's next trials are random picks):
// for each log on its own, a model trained on its first n correct trials
// scores its next N (default 50), for n = N, 2N, ... A run whose trials
// repeat an earlier run's (a log copied into another) is read once.
//
// Only correct trials count (the tuner also trains on failures, as the
// slowest); the default schedule's baseline and traces that no longer replay
// are skipped, the latter counted. The programs are lowered the way the
// tuner's candidates are (evolutionary_search.cpp, Finish): the prepacked
// entry when constant inputs are packed ahead.
// bench/costmodel measures the same metrics on random schedules of small
// workloads (docs/costmodel.md, "On tuning logs").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tune_log.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/features.h"
#include "tunefarm/costmodel/metrics.h"

namespace tunefarm::bench {
namespace {

using costmodel::FeatureMatrix;
using costmodel::MeasuredCandidate;
using costmodel::XGBoostCostModel;

const std::vector<std::string> kSuite = {"gmm_1024", "gmm_512", "c2d_resnet_3x3", "dep_3x3_c256_28", "t2d", "dense_bias_relu"};

// Upper bounds of the speed-ratio bins of the pair breakdown.
const std::vector<double> kRatioBins = {1.2, 1.5, 2.0, 4.0, INFINITY};

// One measured program: its features and its time.
struct Program {
  std::string workload;
  costmodel::FeatureVector features;
  double seconds = 0;
  uint64_t hash = 0;  // of the lowered program's text
};

// A log's correct trials of one workload as programs, in trial order.
struct LoggedRun {
  std::string workload;
  bool online = false;  // from --online-log
  std::vector<Program> trials;
};

struct Metrics {
  double pairwise = 0, top1 = 0, top5 = 0;
  int evaluations = 0;
  std::vector<double> bin_right = std::vector<double>(kRatioBins.size(), 0);  // pairs ordered right (ties: half)
  std::vector<double> bin_pairs = std::vector<double>(kRatioBins.size(), 0);

  void Print(const char* label) const {
    if (evaluations == 0) return;
    std::printf("  %-18s pairwise %.3f  top-1 %.3f  top-5 %.3f  (%d evaluations)\n", label, pairwise / evaluations,
                top1 / evaluations, top5 / evaluations, evaluations);
  }
  void PrintBins(const char* label) const {
    double all = 0;
    for (double n : bin_pairs) all += n;
    if (all == 0) return;
    std::printf("  %-18s", label);
    double lower = 1.0;
    for (size_t b = 0; b < kRatioBins.size(); ++b) {
      char range[32];
      if (std::isinf(kRatioBins[b])) std::snprintf(range, sizeof range, ">=%.1fx", lower);
      else std::snprintf(range, sizeof range, "%.1f-%.1fx", lower, kRatioBins[b]);
      if (bin_pairs[b] > 0) {
        std::printf("  %s: %.0f%% of pairs, %.3f", range, 100 * bin_pairs[b] / all, bin_right[b] / bin_pairs[b]);
      }
      lower = kRatioBins[b];
    }
    std::printf("\n");
  }
};

// The tuner's view of a trace: features of the lowered program one measured
// call runs; `hash` names the program.
Result<costmodel::FeatureVector> FeaturesOf(const Workload& w, const std::string& trace, uint64_t* hash) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, ReplayTrace(w, trace));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, LowerMeasuredCall(f));
  *hash = std::hash<std::string>()(ir::ToString(lowered));
  return costmodel::ExtractFeatures(lowered);
}

// A fresh model with `options` (the tuner's defaults unless flags say
// otherwise) trained on `train` (query groups: workloads).
Result<std::unique_ptr<XGBoostCostModel>> Train(const std::vector<const Program*>& train,
                                                const costmodel::XGBoostCostModelOptions& options) {
  auto model = std::make_unique<XGBoostCostModel>(options);
  std::vector<MeasuredCandidate> candidates;
  for (const Program* p : train) {
    MeasuredCandidate c;
    c.workload_key = p->workload;
    c.features = p->features;
    c.seconds = p->seconds;
    candidates.push_back(std::move(c));
  }
  TF_RETURN_IF_ERROR(model->Update(candidates));
  return model;
}

// Scores `test` with `model` and adds the metrics to `out`; writes
// "workload seconds score" lines to `predictions` when given.
Status Score(XGBoostCostModel& model, const std::vector<const Program*>& test, Metrics& out,
             std::FILE* predictions) {
  if (test.size() < 2) return Status::OK();
  FeatureMatrix x(static_cast<Eigen::Index>(test.size()), costmodel::kNumFeatures);
  for (size_t i = 0; i < test.size(); ++i) {
    std::copy(test[i]->features.begin(), test[i]->features.end(), x.row(static_cast<Eigen::Index>(i)).data());
  }
  TF_ASSIGN_OR_RETURN(std::vector<double> scores, model.PredictFeatures(x));
  std::vector<double> truth;
  for (const Program* p : test) truth.push_back(1.0 / p->seconds);
  for (size_t i = 0; predictions && i < test.size(); ++i) {
    std::fprintf(predictions, "%s %.9g %.9g\n", test[i]->workload.c_str(), test[i]->seconds, scores[i]);
  }
  out.pairwise += costmodel::PairwiseAccuracy(scores, truth);
  out.top1 += costmodel::TopKScore(scores, truth, 1);
  out.top5 += costmodel::TopKScore(scores, truth, 5);
  ++out.evaluations;
  for (size_t i = 0; i < test.size(); ++i) {
    for (size_t j = i + 1; j < test.size(); ++j) {
      if (truth[i] == truth[j]) continue;
      const double ratio = std::max(truth[i], truth[j]) / std::min(truth[i], truth[j]);
      const size_t bin = size_t(std::upper_bound(kRatioBins.begin(), kRatioBins.end(), ratio) - kRatioBins.begin());
      const size_t b = std::min(bin, kRatioBins.size() - 1);
      out.bin_pairs[b] += 1;
      if (scores[i] == scores[j]) out.bin_right[b] += 0.5;
      else if ((scores[i] > scores[j]) == (truth[i] > truth[j])) out.bin_right[b] += 1;
    }
  }
  return Status::OK();
}

struct Options {
  std::vector<std::string> logs;         // --log
  std::vector<std::string> online_logs;  // --online-log
  std::vector<std::string> only;
  std::string workload_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads";
  int folds = 5;
  int window = 50;
  size_t max_programs = 0;  // 0: all
  std::FILE* predictions = nullptr;
  bool transfer = false;  // --transfer
  bool all = false;       // --all: every workload of the logs
  costmodel::XGBoostCostModelOptions model;  // --rounds --depth --eta --min-child --colsample --subsample --pairsample --seed
};

// The workloads to rank, by name: --only's (files under --workloads), the
// suite's by default, or with --all every workload the logs hold, parsed
// from the text each log keeps of it (a text this build no longer parses
// is skipped and counted).
Result<std::vector<std::pair<std::string, Workload>>> SelectedWorkloads(const Options& o) {
  std::vector<std::pair<std::string, Workload>> out;
  if (!o.all) {
    for (const std::string& name : o.only.empty() ? kSuite : o.only) {
      TF_ASSIGN_OR_RETURN(Workload w, ParseWorkloadFile(o.workload_dir + "/" + name + ".tf"));
      out.emplace_back(name, std::move(w));
    }
    return out;
  }
  std::vector<std::string> paths = o.logs;
  paths.insert(paths.end(), o.online_logs.begin(), o.online_logs.end());
  TF_ASSIGN_OR_RETURN(LoggedWorkloads logged, WorkloadsOfLogs(paths));
  if (logged.unparsed > 0) {
    std::printf("(%d workloads skipped: their texts do not parse with this build)\n", logged.unparsed);
  }
  out = std::move(logged.workloads);
  return out;
}

// Every log's correct trials per workload, as runs; duplicate runs dropped.
Result<std::vector<LoggedRun>> ReadRuns(const Options& o) {
  database::OpenOptions read_only;
  read_only.read_only = true;
  const std::string target = DefaultRecordTargetString();
  std::vector<std::pair<std::string, bool>> paths;
  for (const std::string& p : o.logs) paths.emplace_back(p, false);
  for (const std::string& p : o.online_logs) paths.emplace_back(p, true);
  std::vector<LoggedRun> runs;
  std::set<std::vector<std::string>> seen_runs;  // trace sequences read already
  int unreadable = 0;
  TF_ASSIGN_OR_RETURN(auto selected, SelectedWorkloads(o));
  for (const auto& [name, w] : selected) {
    const std::string hash = StructuralHashHex(w);
    for (const auto& [path, online] : paths) {
      TF_ASSIGN_OR_RETURN(auto db, database::Database::Open(path, read_only));
      TF_ASSIGN_OR_RETURN(std::vector<LoggedTrial> trials, LoadTrials(*db, hash, target));
      std::vector<std::string> traces;
      for (const LoggedTrial& t : trials) traces.push_back(t.trace);
      if (trials.empty() || !seen_runs.insert(traces).second) continue;
      LoggedRun run{name, online, {}};
      for (const LoggedTrial& t : trials) {
        if (!t.ok || IsDefaultSchedule(t.trace)) continue;  // failures and the baseline
        uint64_t program_hash = 0;
        auto features = FeaturesOf(w, t.trace, &program_hash);
        if (!features.ok()) {
          ++unreadable;
          continue;
        }
        run.trials.push_back({name, std::move(*features), t.seconds, program_hash});
      }
      runs.push_back(std::move(run));
    }
  }
  if (unreadable > 0) std::printf("(%d trials skipped: their traces do not replay on today's workloads)\n", unreadable);
  return runs;
}

// Distinct programs per workload (same lowered program: mean of its times).
std::map<std::string, std::vector<Program>> DistinctPrograms(const Options& o, const std::vector<LoggedRun>& runs) {
  std::map<std::string, std::map<uint64_t, std::pair<Program, int>>> by_hash;
  for (const LoggedRun& run : runs) {
    for (const Program& p : run.trials) {
      auto& [sum, count] = by_hash[p.workload][p.hash];
      if (count == 0) {
        sum = p;
      } else {
        sum.seconds += p.seconds;
      }
      ++count;
    }
  }
  std::map<std::string, std::vector<Program>> programs;
  std::mt19937_64 subset_rng(2);
  for (auto& [name, entries] : by_hash) {
    std::vector<Program>& list = programs[name];
    for (auto& [h, entry] : entries) {
      entry.first.seconds /= entry.second;
      list.push_back(std::move(entry.first));
    }
    if (o.max_programs > 0 && list.size() > o.max_programs) {
      std::shuffle(list.begin(), list.end(), subset_rng);
      list.resize(o.max_programs);
    }
  }
  return programs;
}

Status HeldOut(const Options& o, const std::map<std::string, std::vector<Program>>& programs) {
  std::printf("---- held out (%d folds; trained on the other folds of every workload)\n", o.folds);
  std::mt19937_64 rng(1);
  std::map<std::string, std::vector<int>> fold_of;
  for (const auto& [name, list] : programs) {
    std::vector<int>& f = fold_of[name];
    for (size_t i = 0; i < list.size(); ++i) f.push_back(int(i % size_t(o.folds)));
    std::shuffle(f.begin(), f.end(), rng);
  }
  std::map<std::string, Metrics> held_out;
  for (int k = 0; k < o.folds; ++k) {
    std::vector<const Program*> train;
    std::map<std::string, std::vector<const Program*>> test;
    for (const auto& [name, list] : programs) {
      for (size_t i = 0; i < list.size(); ++i) (fold_of[name][i] == k ? test[name] : train).push_back(&list[i]);
    }
    TF_ASSIGN_OR_RETURN(auto model, Train(train, o.model));
    for (const auto& [name, t] : test) TF_RETURN_IF_ERROR(Score(*model, t, held_out[name], o.predictions));
  }
  Metrics mean;
  for (const auto& [name, m] : held_out) {
    m.Print(name.c_str());
    if (m.evaluations == 0) continue;
    mean.pairwise += m.pairwise / m.evaluations;
    mean.top1 += m.top1 / m.evaluations;
    mean.top5 += m.top5 / m.evaluations;
    ++mean.evaluations;
  }
  mean.Print("mean of workloads");
  std::printf("  pairwise accuracy by the speed ratio of the pair (share of the workload's pairs, accuracy):\n");
  for (const auto& [name, m] : held_out) m.PrintBins(name.c_str());
  return Status::OK();
}

Status Transfer(const Options& o, const std::map<std::string, std::vector<Program>>& programs) {
  std::printf("---- transfer (each workload scored by a model trained on the other workloads only)\n");
  Metrics mean;
  for (const auto& [name, list] : programs) {
    std::vector<const Program*> train, test;
    for (const auto& [other, other_list] : programs) {
      for (const Program& p : other_list) (other == name ? test : train).push_back(&p);
    }
    if (train.empty()) continue;
    TF_ASSIGN_OR_RETURN(auto model, Train(train, o.model));
    Metrics m;
    TF_RETURN_IF_ERROR(Score(*model, test, m, nullptr));
    m.Print(name.c_str());
    if (m.evaluations == 0) continue;
    mean.pairwise += m.pairwise, mean.top1 += m.top1, mean.top5 += m.top5, ++mean.evaluations;
  }
  mean.Print("mean of workloads");
  return Status::OK();
}

Status Online(const Options& o, const std::vector<LoggedRun>& runs) {
  std::printf("---- online (each --online-log alone: trained on its first n trials, scoring the next %d)\n", o.window);
  std::map<std::string, Metrics> online;
  for (const LoggedRun& run : runs) {
    if (!run.online) continue;
    const size_t window = size_t(o.window);
    for (size_t n = window; n + window <= run.trials.size(); n += window) {
      std::vector<const Program*> train, test;
      for (size_t i = 0; i < n; ++i) train.push_back(&run.trials[i]);
      for (size_t i = n; i < n + window; ++i) test.push_back(&run.trials[i]);
      TF_ASSIGN_OR_RETURN(auto model, Train(train, o.model));
      TF_RETURN_IF_ERROR(Score(*model, test, online[run.workload], nullptr));
    }
  }
  for (const auto& [name, m] : online) m.Print(name.c_str());
  return Status::OK();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm;
  using namespace tunefarm::bench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--transfer") {
      o.transfer = true;
      continue;
    }
    if (a == "--all") {
      o.all = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: %s --log DB [--log DB ...] [--online-log DB ...] [--only W,... | --all] [--folds K] [--window N] "
                   "[--max-programs N] [--predictions FILE] [--transfer]\n"
                   "  XGBoost settings (default: the tuner's): [--rounds N] [--depth N] [--eta X] [--min-child X]\n"
                   "  [--colsample X] [--subsample X] [--pairsample N] [--seed N]\n",
                   argv[0]);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--log") {
      o.logs.push_back(v);
    } else if (a == "--online-log") {
      o.online_logs.push_back(v);
    } else if (a == "--only") {
      o.only = SplitList(v);
    } else if (a == "--folds") {
      o.folds = std::max(2, std::atoi(v.c_str()));
    } else if (a == "--window") {
      o.window = std::max(2, std::atoi(v.c_str()));
    } else if (a == "--max-programs") {
      o.max_programs = size_t(std::max(0, std::atoi(v.c_str())));
    } else if (a == "--predictions") {
      o.predictions = std::fopen(v.c_str(), "w");
      if (!o.predictions) {
        std::fprintf(stderr, "cannot write %s\n", v.c_str());
        return 1;
      }
    } else if (a == "--workloads") {
      o.workload_dir = v;
    } else if (a == "--rounds") {
      o.model.params.num_rounds = std::atoi(v.c_str());
    } else if (a == "--depth") {
      o.model.params.max_depth = std::atoi(v.c_str());
    } else if (a == "--eta") {
      o.model.params.eta = std::atof(v.c_str());
    } else if (a == "--min-child") {
      o.model.params.min_child_weight = std::atof(v.c_str());
    } else if (a == "--colsample") {
      o.model.params.colsample_bytree = std::atof(v.c_str());
    } else if (a == "--subsample") {
      o.model.params.subsample = std::atof(v.c_str());
    } else if (a == "--pairsample") {
      o.model.params.num_pairsample = std::atoi(v.c_str());
    } else if (a == "--seed") {
      o.model.params.seed = uint64_t(std::atoll(v.c_str()));
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (o.logs.empty() && o.online_logs.empty()) {
    std::fprintf(stderr, "give at least one --log DB or --online-log DB\n");
    return 2;
  }
  if (o.all && !o.only.empty()) {
    std::fprintf(stderr, "--all and --only exclude each other: --all ranks every workload of the logs\n");
    return 2;
  }
  auto runs = ReadRuns(o);
  if (!runs.ok()) return Fail(runs.status());
  std::map<std::string, std::vector<Program>> programs = DistinctPrograms(o, *runs);
  std::printf("---- records\n");
  for (const auto& [name, list] : programs) {
    int trials = 0, logs = 0;
    for (const LoggedRun& r : *runs) {
      if (r.workload != name) continue;
      trials += int(r.trials.size());
      ++logs;
    }
    std::printf("  %-18s %d runs, %d correct trials, %zu distinct programs\n", name.c_str(), logs, trials, list.size());
  }
  Status st = o.transfer ? Transfer(o, programs) : HeldOut(o, programs);
  if (st.ok()) st = Online(o, *runs);
  if (o.predictions) std::fclose(o.predictions);
  return st.ok() ? 0 : Fail(st);
}
