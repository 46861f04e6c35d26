// Cost-model benchmark: ranking quality on real measurements and prediction
// throughput.
//
//   tunefarm_costmodel_bench [--records N] [--save-data FILE] [--load-data FILE]
//                            [--objective rank:pairwise|reg:squarederror] [--rounds N] [--depth N]
//                            [--eta X] [--subsample X] [--colsample X] [--min-child X] [--pairsample N] [--seed N]
//                            [--label normalized|log|logbins|levels] [--bins N] [--per-workload]
//                            [--predictions FILE] [--without-nest] [--remeasure N] [--dump FILE] [--first-seed N]
//                            [--throughput-only] [--reps N]
//
// Builds a dataset of random schedules of three suite workloads at shrunk
// shapes (gmm 128^3, dense_bias_relu 64x256x256, c2d 3x3 at C=K=32, 28x28),
// each JIT-compiled and timed in process on one runtime thread. Per workload,
// every fifth record is held out; the model trains on the rest of all
// workloads (groups keep the ranking within a workload) and reports TenSet's
// metrics on the held-out records: pairwise accuracy, top-1 and top-5 scores.
// A transfer line trains on the other workloads only. Then throughput:
// candidates per second on one core for feature extraction + prediction
// (from LowerForCodegen output) and for prediction alone.
//
// --objective and --rounds override the model's XGBoost settings (to compare);
// --label picks the training label (LabelKind), --per-workload trains one
// model per workload, --predictions writes every held-out record's score.
// --save-data writes "workload seed seconds" lines; --load-data replays them
// (schedules are deterministic in their seed), to compare models on one set.
// --without-nest zeroes the loop-nest block (ablation). --remeasure N times
// the first N records of each workload again and reports how well the two
// timings agree (pairwise): the noise ceiling of the ranking metrics.
// --dump writes every record's timing, non-zero named features and lowered IR.
// --first-seed starts the measured seeds elsewhere, to grow a saved dataset
// (files concatenate; loading drops programs already loaded, by their IR).
//
// Map: Evaluate (train, score held-out records per workload); main: flags,
// workloads, "---- dataset" (measure or load), "---- inspection" (--dump),
// "---- noise ceiling" (--remeasure), "---- ranking quality" (5 folds, then
// transfer), "---- throughput".
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/dataset_gen.h"
#include "tunefarm/costmodel/metrics.h"

using namespace tunefarm;
using namespace tunefarm::costmodel;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchWorkload {
  std::string file;
  std::map<std::string, int64_t> overrides;
  ir::PrimFunc base;
};

struct Record {
  std::string workload;
  uint64_t seed = 0;
  double seconds = 0;
  ir::PrimFunc lowered;
  FeatureVector features;
};

XGBoostCostModelOptions g_options;
bool g_per_workload = false;  // one model per workload instead of one for all
int g_reps = 20;  // --reps: runs per throughput batch, the best one counts
std::FILE* g_predictions = nullptr;  // --predictions: "workload seed seconds score" of held-out records

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds of this thread: on a shared machine wall time also counts the
// time other processes hold the core.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

MeasuredCandidate ToCandidate(const Record& r) {
  MeasuredCandidate c;
  c.workload_key = r.workload;
  c.features = r.features;
  c.seconds = r.seconds;
  return c;
}

struct Scores {
  double pairwise = 0, top1 = 0, top5 = 0;
};

// Trains on `train`; the metrics of `test` per workload, printed unless quiet.
Result<std::map<std::string, Scores>> Evaluate(const char* title, const std::vector<const Record*>& train,
                                               const std::vector<const Record*>& test, bool quiet = false) {
  std::map<std::string, XGBoostCostModel> models;
  std::map<std::string, std::vector<MeasuredCandidate>> cands;
  for (const Record* r : train) cands[g_per_workload ? r->workload : ""].push_back(ToCandidate(*r));
  auto t0 = Clock::now();
  for (const auto& [key, c] : cands) TF_RETURN_IF_ERROR(models.try_emplace(key, g_options).first->second.Update(c));
  const double train_s = Since(t0);
  std::map<std::string, std::vector<const Record*>> by_workload;
  for (const Record* r : test) by_workload[r->workload].push_back(r);
  if (!quiet) std::printf("%s (trained on %zu records in %.2f s)\n", title, train.size(), train_s);
  std::map<std::string, Scores> out;
  Scores sum;
  for (const auto& [name, recs] : by_workload) {
    FeatureMatrix x(static_cast<Eigen::Index>(recs.size()), kNumFeatures);
    std::vector<double> truth;
    for (size_t i = 0; i < recs.size(); ++i) {
      std::copy(recs[i]->features.begin(), recs[i]->features.end(), x.row(static_cast<Eigen::Index>(i)).data());
      truth.push_back(1.0 / recs[i]->seconds);
    }
    auto it = models.find(g_per_workload ? name : "");
    if (it == models.end()) return Status::InvalidArgument("no training records of " + name);
    TF_ASSIGN_OR_RETURN(std::vector<double> scores, it->second.PredictFeatures(x));
    if (g_predictions) {
      for (size_t i = 0; i < recs.size(); ++i) {
        std::fprintf(g_predictions, "%s %llu %.9g %.9g\n", name.c_str(), static_cast<unsigned long long>(recs[i]->seed),
                     recs[i]->seconds, scores[i]);
      }
    }
    Scores m{PairwiseAccuracy(scores, truth), TopKScore(scores, truth, 1), TopKScore(scores, truth, 5)};
    if (!quiet) {
      std::printf("  %-18s held out %4zu  pairwise %.3f  top-1 %.3f  top-5 %.3f\n", name.c_str(), recs.size(),
                  m.pairwise, m.top1, m.top5);
    }
    out[name] = m;
    sum.pairwise += m.pairwise;
    sum.top1 += m.top1;
    sum.top5 += m.top5;
  }
  const double n = static_cast<double>(by_workload.size());
  if (!quiet) {
    std::printf("  %-18s                pairwise %.3f  top-1 %.3f  top-5 %.3f\n", "mean", sum.pairwise / n,
                sum.top1 / n, sum.top5 / n);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int target_records = 1000;
  std::string save_path, load_path;
  bool without_nest = false;
  bool throughput_only = false;
  uint64_t first_seed = 1;
  std::string dump_path;
  int remeasure = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      target_records = std::atoi(argv[++i]);
    } else if (a == "--save-data" && i + 1 < argc) {
      save_path = argv[++i];
    } else if (a == "--load-data" && i + 1 < argc) {
      load_path = argv[++i];
    } else if (a == "--objective" && i + 1 < argc) {
      g_options.params.objective = argv[++i];
    } else if (a == "--label" && i + 1 < argc) {
      const std::string l = argv[++i];
      g_options.label = l == "log"      ? LabelKind::kLog
                        : l == "levels" ? LabelKind::kLevels
                        : l == "logbins" ? LabelKind::kLogBins
                                         : LabelKind::kNormalized;
    } else if (a == "--bins" && i + 1 < argc) {
      g_options.bins_per_octave = std::atof(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      g_options.params.num_rounds = std::atoi(argv[++i]);
    } else if (a == "--depth" && i + 1 < argc) {
      g_options.params.max_depth = std::atoi(argv[++i]);
    } else if (a == "--subsample" && i + 1 < argc) {
      g_options.params.subsample = std::atof(argv[++i]);
    } else if (a == "--colsample" && i + 1 < argc) {
      g_options.params.colsample_bytree = std::atof(argv[++i]);
    } else if (a == "--min-child" && i + 1 < argc) {
      g_options.params.min_child_weight = std::atof(argv[++i]);
    } else if (a == "--pairsample" && i + 1 < argc) {
      g_options.params.num_pairsample = std::atoi(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      g_options.params.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--eta" && i + 1 < argc) {
      g_options.params.eta = std::atof(argv[++i]);
    } else if (a == "--dump" && i + 1 < argc) {
      dump_path = argv[++i];
    } else if (a == "--first-seed" && i + 1 < argc) {
      first_seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--predictions" && i + 1 < argc) {
      g_predictions = std::fopen(argv[++i], "w");
    } else if (a == "--reps" && i + 1 < argc) {
      g_reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--per-workload") {
      g_per_workload = true;
    } else if (a == "--throughput-only") {
      throughput_only = true;
    } else if (a == "--without-nest") {
      without_nest = true;
    } else if (a == "--remeasure" && i + 1 < argc) {
      remeasure = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--records N] [--save-data FILE] [--load-data FILE] [--objective O] [--rounds N] [--depth N] [--eta X] [--subsample X] [--colsample X] [--min-child X] [--pairsample N] [--seed N] [--label L] [--bins N] [--per-workload] [--predictions FILE] [--without-nest] [--remeasure N] [--dump FILE] [--first-seed N] [--throughput-only] [--reps N]\n",
                   argv[0]);
      return 2;
    }
  }

  std::map<std::string, BenchWorkload> workloads = {
      {"gmm", {"gmm_512.tf", {{"M", 128}, {"N", 128}, {"K", 128}}, {}}},
      {"dense_bias_relu", {"dense_bias_relu.tf", {{"M", 64}, {"N", 256}, {"K", 256}}, {}}},
      {"c2d", {"c2d_resnet_3x3.tf", {{"C", 32}, {"K", 32}, {"H", 28}, {"W", 28}}, {}}},
  };
  for (auto& [name, w] : workloads) {
    ParseOptions options;
    options.param_overrides = w.overrides;
    auto parsed = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + w.file, options);
    if (!parsed.ok()) return Fail(parsed.status());
    auto base = LowerToPrimFunc(*parsed);
    if (!base.ok()) return Fail(base.status());
    w.base = *base;
  }

  // ---- dataset
  std::vector<Record> records;
  auto add = [&](const std::string& name, uint64_t seed, double seconds, bool measure) -> Status {
    TF_ASSIGN_OR_RETURN(ir::PrimFunc scheduled, SampleRandomSchedule(workloads.at(name).base, seed));
    TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, LowerForCodegen(scheduled));
    if (measure) {
      TF_ASSIGN_OR_RETURN(seconds, MeasureSeconds(scheduled));
    }
    records.push_back({name, seed, seconds, std::move(lowered), {}});
    records.back().features = ExtractFeatures(records.back().lowered);
    // Ablation: the features as they were before the loop-nest block.
    if (without_nest) std::fill(records.back().features.begin() + kNestOffset, records.back().features.end(), 0.f);
    return Status::OK();
  };
  auto t0 = Clock::now();
  if (!load_path.empty()) {
    std::ifstream in(load_path);
    std::string name;
    uint64_t seed;
    double seconds;
    std::set<std::string> programs;  // the same program under two seeds counts once
    while (in >> name >> seed >> seconds) {
      Status s = add(name, seed, seconds, false);
      if (!s.ok()) return Fail(s);
      if (!programs.insert(name + ir::ToString(records.back().lowered)).second) records.pop_back();
    }
    std::printf("loaded %zu records from %s\n", records.size(), load_path.c_str());
  } else {
    const int per_workload = target_records / static_cast<int>(workloads.size());
    for (const auto& [name, w] : workloads) {
      std::set<FeatureVector> seen;
      int kept = 0;
      for (uint64_t seed = first_seed; kept < per_workload && seed < first_seed + 20u * per_workload; ++seed) {
        auto scheduled = SampleRandomSchedule(w.base, seed);
        if (!scheduled.ok()) return Fail(scheduled.status());
        auto lowered = LowerForCodegen(*scheduled);
        if (!lowered.ok()) return Fail(lowered.status());
        if (!seen.insert(ExtractFeatures(*lowered)).second) continue;  // same program again
        Status s = add(name, seed, 0, true);
        if (!s.ok()) return Fail(s);
        ++kept;
      }
      std::printf("measured %d schedules of %s (%.0f s so far)\n", kept, name.c_str(), Since(t0));
      std::fflush(stdout);
    }
  }
  if (!save_path.empty()) {
    std::ofstream out(save_path);
    for (const Record& r : records) out << r.workload << ' ' << r.seed << ' ' << r.seconds << '\n';
  }
  std::map<std::string, std::pair<double, double>> spread;
  for (const Record& r : records) {
    auto [it, inserted] = spread.try_emplace(r.workload, r.seconds, r.seconds);
    it->second.first = std::min(it->second.first, r.seconds);
    it->second.second = std::max(it->second.second, r.seconds);
  }
  for (const auto& [name, s] : spread) {
    std::printf("  %-18s fastest %.3f ms, slowest %.3f ms (%.0fx)\n", name.c_str(), s.first * 1e3, s.second * 1e3,
                s.second / s.first);
  }

  // ---- inspection: every record's timing, named features and lowered IR
  if (!dump_path.empty()) {
    std::ofstream out(dump_path);
    for (const Record& r : records) {
      out << "record " << r.workload << ' ' << r.seed << ' ' << r.seconds << '\n';
      for (int k = 0; k < kNumFeatures; ++k) {
        if (r.features[static_cast<size_t>(k)] != 0) out << "  " << FeatureName(k) << ' ' << r.features[static_cast<size_t>(k)] << '\n';
      }
      out << ir::ToString(r.lowered) << '\n';
    }
  }

  // ---- noise ceiling: time the first N records of each workload again and
  // rank the new timings by the stored ones; no model can rank the stored
  // timings much better than they rank themselves.
  if (remeasure > 0) {
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> again;
    for (const Record& r : records) {
      auto& [old_speed, new_speed] = again[r.workload];
      if (static_cast<int>(old_speed.size()) >= remeasure) continue;
      auto scheduled = SampleRandomSchedule(workloads.at(r.workload).base, r.seed);
      if (!scheduled.ok()) return Fail(scheduled.status());
      auto seconds = MeasureSeconds(*scheduled);
      if (!seconds.ok()) return Fail(seconds.status());
      old_speed.push_back(1.0 / r.seconds);
      new_speed.push_back(1.0 / *seconds);
    }
    for (const auto& [name, v] : again) {
      std::printf("  %-18s re-measured %zu: pairwise of old timings vs new %.3f\n", name.c_str(), v.first.size(),
                  PairwiseAccuracy(v.first, v.second));
    }
  }

  // ---- ranking quality: every fifth record of each workload is held out
  // (fold 4: the split reported since the first benchmark); then all five
  // folds, so that every record is held out once and the averages do not
  // hang on one draw of 66 test records per workload.
  std::vector<const Record*> train, test;
  std::map<std::string, Scores> cv;
  for (int fold = 0; fold < 5 && !throughput_only; ++fold) {
    train.clear();
    test.clear();
    std::map<std::string, int> counter;
    for (const Record& r : records) (counter[r.workload]++ % 5 == fold ? test : train).push_back(&r);
    auto m = Evaluate("held-out records, trained on 80% of every workload", train, test, fold != 4);
    if (!m.ok()) return Fail(m.status());
    for (const auto& [name, sc] : *m) {
      cv[name].pairwise += sc.pairwise / 5;
      cv[name].top1 += sc.top1 / 5;
      cv[name].top5 += sc.top5 / 5;
    }
  }
  if (!throughput_only) std::printf("5-fold cross-validation (every record held out once), mean over folds\n");
  Scores cv_mean;
  for (const auto& [name, sc] : cv) {
    std::printf("  %-18s                pairwise %.3f  top-1 %.3f  top-5 %.3f\n", name.c_str(), sc.pairwise, sc.top1,
                sc.top5);
    cv_mean.pairwise += sc.pairwise / static_cast<double>(cv.size());
    cv_mean.top1 += sc.top1 / static_cast<double>(cv.size());
    cv_mean.top5 += sc.top5 / static_cast<double>(cv.size());
  }
  std::printf("  %-18s                pairwise %.3f  top-1 %.3f  top-5 %.3f\n", "mean", cv_mean.pairwise,
              cv_mean.top1, cv_mean.top5);
  // Transfer: on fold 4's split (the last one evaluated).
  if (g_predictions) std::fclose(g_predictions);
  g_predictions = nullptr;
  Status s;
  for (const auto& [name, w] : workloads) {
    if (throughput_only) break;
    std::vector<const Record*> others, mine;
    for (const Record* r : train) {
      if (r->workload != name) others.push_back(r);
    }
    for (const Record* r : test) {
      if (r->workload == name) mine.push_back(r);
    }
    auto m = Evaluate(("transfer to " + name + ", trained on the other workloads only").c_str(), others, mine);
    if (!m.ok()) return Fail(m.status());
  }

  // ---- throughput on one core (nthread = 1)
  XGBoostCostModel model(g_options);
  std::vector<MeasuredCandidate> all;
  for (const Record& r : records) all.push_back(ToCandidate(r));
  s = model.Update(all);
  if (!s.ok()) return Fail(s);
  // Batches of 1000 candidates, as a search round scores them; every
  // record is in one batch. Per batch the best of kReps runs, summed.
  constexpr size_t kBatch = 1000;
  std::vector<std::vector<const ir::PrimFunc*>> batches;
  for (size_t i = 0; i < records.size(); ++i) {
    if (i % kBatch == 0) batches.emplace_back();
    batches.back().push_back(&records[i].lowered);
  }
  const int kReps = g_reps;
  double total_extract = 0, total_predict = 0, total_both = 0, total_both_cpu = 0;
  for (const auto& programs : batches) {
    FeatureMatrix x = ExtractFeatureMatrix(programs);
    double best_extract = 1e9, best_predict = 1e9, best_both = 1e9, best_both_cpu = 1e9;
    for (int rep = 0; rep < kReps; ++rep) {
      auto a = Clock::now();
      FeatureMatrix m = ExtractFeatureMatrix(programs);
      best_extract = std::min(best_extract, Since(a));
      a = Clock::now();
      auto p = model.PredictFeatures(x);
      best_predict = std::min(best_predict, Since(a));
      if (!p.ok()) return Fail(p.status());
      a = Clock::now();
      const double cpu = ThreadCpuSeconds();
      auto q = model.Predict(programs);
      best_both_cpu = std::min(best_both_cpu, ThreadCpuSeconds() - cpu);
      best_both = std::min(best_both, Since(a));
      if (!q.ok()) return Fail(q.status());
    }
    total_extract += best_extract;
    total_predict += best_predict;
    total_both += best_both;
    total_both_cpu += best_both_cpu;
  }
  const double n = static_cast<double>(records.size());
  std::printf("throughput, one core, %zu batches of up to %zu candidates (best of %d each), %s trees:\n",
              batches.size(), kBatch, kReps, model.model().uses_flattened_trees() ? "flattened" : "XGBoost's");
  std::printf("  feature extraction       %10.0f candidates/s (%.2f us each)\n", n / total_extract, total_extract / n * 1e6);
  std::printf("  prediction only          %10.0f candidates/s (%.2f us each)\n", n / total_predict, total_predict / n * 1e6);
  std::printf("  features + prediction    %10.0f candidates/s (%.2f us each)\n", n / total_both, total_both / n * 1e6);
  std::printf("    the same in thread CPU time %6.0f candidates/s (%.2f us each)\n", n / total_both_cpu,
              total_both_cpu / n * 1e6);
  return 0;
}
