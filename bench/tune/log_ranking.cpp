// Cost-model ranking quality on tuning logs: how well the XGBoost cost model
// orders the kernels a search actually measured, in two readings.
//
//   tunefarm_log_ranking --log DB [--log DB ...] [--only W,...] [--folds K] [--window N]
//                        [--predictions FILE] [--max-programs N]
//
// Held out (TenSet's metrics): every distinct program of a workload, from all
// the logs given, goes into one of K folds (default 5); a model trained on the
// other folds of every workload scores it. Pairwise accuracy, top-1 and top-5
// per workload, means over the folds. The same program measured by several
// logs is one record with the mean of its times. --max-programs keeps a
// random N of each workload's programs (a learning curve on the same data).
//
// Online (what the search sees): for each log on its own, a model trained on
// its first n trials scores its next N (default 50) trials, for n = N, 2N, ...
// The next trials are what the search picked after those n, so they are
// near-best candidates the model itself ranked high: a harder set to order
// than random programs.
//
// bench/costmodel's benchmark measures the same metrics on random schedules
// of small workloads; this one reads what `tunefarm tune` measured on the
// suite (docs/costmodel.md, "On tuning logs").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tune_log.h"
#include "tunefarm/compiler/ir_printer.h"
#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/split_prepack.h"
#include "tunefarm/compiler/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/features.h"
#include "tunefarm/costmodel/metrics.h"

namespace tunefarm::bench {
namespace {

using costmodel::FeatureMatrix;
using costmodel::MeasuredCandidate;
using costmodel::XGBoostCostModel;

const std::vector<std::string> kSuite = {"gmm_1024", "gmm_512", "c2d_resnet_3x3", "dep_3x3_c256_28", "t2d", "dense_bias_relu"};

// One measured program: its features and its time.
struct Program {
  std::string workload;
  costmodel::FeatureVector features;
  double seconds = 0;
};

// A log's correct trials of one workload as programs, in trial order.
struct LoggedRun {
  std::string workload;
  std::vector<Program> trials;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// What the tuner's cost model reads for a trace: the lowered program one
// measured call runs (the prepacked entry when constant inputs are packed).
Result<costmodel::FeatureVector> FeaturesOf(const Workload& w, const std::string& trace, uint64_t* hash) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, ReplayTrace(w, trace));
  std::optional<PrepackSplit> split = SplitPrepack(f);
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, LowerForCodegen(split ? split->prepacked : f));
  *hash = std::hash<std::string>()(ir::ToString(lowered));
  return costmodel::ExtractFeatures(lowered);
}

FeatureMatrix Rows(const std::vector<const Program*>& programs) {
  FeatureMatrix x(static_cast<Eigen::Index>(programs.size()), costmodel::kNumFeatures);
  for (size_t i = 0; i < programs.size(); ++i) {
    std::copy(programs[i]->features.begin(), programs[i]->features.end(), x.row(static_cast<Eigen::Index>(i)).data());
  }
  return x;
}

struct Scores {
  double pairwise = 0, top1 = 0, top5 = 0;
  int n = 0;
  void Add(double p, double t1, double t5) {
    pairwise += p;
    top1 += t1;
    top5 += t5;
    ++n;
  }
  void Print(const char* label) const {
    if (n == 0) return;
    std::printf("  %-18s pairwise %.3f  top-1 %.3f  top-5 %.3f  (%d evaluations)\n", label, pairwise / n, top1 / n,
                top5 / n, n);
  }
};

// A fresh model trained on `train` (query groups: workloads).
Result<std::unique_ptr<XGBoostCostModel>> Train(const std::vector<const Program*>& train) {
  auto model = std::make_unique<XGBoostCostModel>();
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

std::FILE* g_predictions = nullptr;  // --predictions: "workload seconds score" of held-out programs

// Scores `test` with `model`; adds the metrics to `out`.
Status Score(XGBoostCostModel& model, const std::vector<const Program*>& test, Scores& out,
             std::FILE* predictions = nullptr) {
  if (test.size() < 2) return Status::OK();
  TF_ASSIGN_OR_RETURN(std::vector<double> scores, model.PredictFeatures(Rows(test)));
  std::vector<double> truth;
  for (const Program* p : test) truth.push_back(1.0 / p->seconds);
  for (size_t i = 0; predictions && i < test.size(); ++i) {
    std::fprintf(predictions, "%s %.9g %.9g\n", test[i]->workload.c_str(), test[i]->seconds, scores[i]);
  }
  out.Add(costmodel::PairwiseAccuracy(scores, truth), costmodel::TopKScore(scores, truth, 1),
          costmodel::TopKScore(scores, truth, 5));
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
  std::vector<std::string> log_paths;
  std::vector<std::string> only;
  std::string workload_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads";
  int folds = 5;
  int window = 50;
  size_t max_programs = 0;  // 0: all
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s --log DB [--log DB ...] [--only W,...] [--folds K] [--window N] [--predictions FILE] [--max-programs N]\n", argv[0]);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--log") {
      log_paths.push_back(v);
    } else if (a == "--only") {
      only = SplitList(v);
    } else if (a == "--folds") {
      folds = std::max(2, std::atoi(v.c_str()));
    } else if (a == "--window") {
      window = std::max(2, std::atoi(v.c_str()));
    } else if (a == "--max-programs") {
      max_programs = size_t(std::max(0, std::atoi(v.c_str())));
    } else if (a == "--predictions") {
      g_predictions = std::fopen(v.c_str(), "w");
      if (!g_predictions) {
        std::fprintf(stderr, "cannot write %s\n", v.c_str());
        return 1;
      }
    } else if (a == "--workloads") {
      workload_dir = v;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (log_paths.empty()) {
    std::fprintf(stderr, "give at least one --log DB\n");
    return 2;
  }
  database::OpenOptions read_only;
  read_only.read_only = true;
  const std::string target = DefaultRecordTargetString();
  std::vector<std::unique_ptr<database::Database>> dbs;
  for (const std::string& path : log_paths) {
    auto db = database::Database::Open(path, read_only);
    if (!db.ok()) return Fail(db.status());
    dbs.push_back(std::move(*db));
  }

  // ---- read every log: programs per workload, distinct programs pooled
  std::vector<LoggedRun> runs;
  std::map<std::string, std::map<uint64_t, std::pair<Program, int>>> distinct;  // workload -> hash -> (sum, count)
  for (const std::string& name : only.empty() ? kSuite : only) {
    auto w = ParseWorkloadFile(workload_dir + "/" + name + ".tf");
    if (!w.ok()) return Fail(w.status());
    const std::string hash = StructuralHashHex(*w);
    for (size_t l = 0; l < dbs.size(); ++l) {
      const std::string& path = log_paths[l];
      auto trials = LoadTrials(*dbs[l], hash, target);
      if (!trials.ok()) return Fail(trials.status());
      if (trials->empty()) continue;
      LoggedRun run;
      run.workload = name;
      for (const LoggedTrial& t : *trials) {
        if (!t.ok || t.trace.empty()) continue;  // failures and the default schedule's baseline
        uint64_t program_hash = 0;
        auto features = FeaturesOf(*w, t.trace, &program_hash);
        if (!features.ok()) return Fail(Status(features.status().code(), path + ": " + features.status().message()));
        run.trials.push_back({name, std::move(*features), t.seconds});
        auto& [sum, count] = distinct[name][program_hash];
        if (count == 0) sum = run.trials.back();
        else sum.seconds += t.seconds;
        ++count;
      }
      runs.push_back(std::move(run));
    }
  }
  std::map<std::string, std::vector<Program>> programs;
  std::mt19937_64 subset_rng(2);
  for (auto& [name, by_hash] : distinct) {
    std::vector<Program>& list = programs[name];
    for (auto& [h, entry] : by_hash) {
      entry.first.seconds /= entry.second;
      list.push_back(std::move(entry.first));
    }
    if (max_programs > 0 && list.size() > max_programs) {
      std::shuffle(list.begin(), list.end(), subset_rng);
      list.resize(max_programs);
    }
  }
  std::printf("---- records\n");
  for (const auto& [name, list] : programs) {
    int logged = 0, logs = 0;
    for (const LoggedRun& r : runs) {
      if (r.workload == name) logged += int(r.trials.size()), ++logs;
    }
    std::printf("  %-18s %d logs, %d correct trials, %zu distinct programs\n", name.c_str(), logs, logged, list.size());
  }

  // ---- held out: K folds over each workload's distinct programs
  std::printf("---- held out (%d folds; trained on the other folds of every workload)\n", folds);
  std::map<std::string, Scores> held_out;
  std::mt19937_64 rng(1);
  std::map<std::string, std::vector<int>> fold_of;
  for (const auto& [name, list] : programs) {
    std::vector<int>& f = fold_of[name];
    for (size_t i = 0; i < list.size(); ++i) f.push_back(int(i % size_t(folds)));
    std::shuffle(f.begin(), f.end(), rng);
  }
  for (int k = 0; k < folds; ++k) {
    std::vector<const Program*> train;
    std::map<std::string, std::vector<const Program*>> test;
    for (const auto& [name, list] : programs) {
      for (size_t i = 0; i < list.size(); ++i) (fold_of[name][i] == k ? test[name] : train).push_back(&list[i]);
    }
    auto model = Train(train);
    if (!model.ok()) return Fail(model.status());
    for (const auto& [name, t] : test) {
      Status st = Score(**model, t, held_out[name], g_predictions);
      if (!st.ok()) return Fail(st);
    }
  }
  Scores mean;
  for (const auto& [name, s] : held_out) {
    s.Print(name.c_str());
    if (s.n > 0) mean.Add(s.pairwise / s.n, s.top1 / s.n, s.top5 / s.n);
  }
  mean.Print("mean of workloads");

  // ---- online: each log's first n trials predict its next `window`
  std::printf("---- online (each log alone: trained on its first n trials, scoring the next %d)\n", window);
  std::map<std::string, Scores> online;
  for (const LoggedRun& run : runs) {
    for (size_t n = size_t(window); n + size_t(window) <= run.trials.size(); n += size_t(window)) {
      std::vector<const Program*> train, test;
      for (size_t i = 0; i < n; ++i) train.push_back(&run.trials[i]);
      for (size_t i = n; i < n + size_t(window); ++i) test.push_back(&run.trials[i]);
      auto model = Train(train);
      if (!model.ok()) return Fail(model.status());
      Status st = Score(**model, test, online[run.workload]);
      if (!st.ok()) return Fail(st);
    }
  }
  Scores online_mean;
  for (const auto& [name, s] : online) {
    s.Print(name.c_str());
    if (s.n > 0) online_mean.Add(s.pairwise / s.n, s.top1 / s.n, s.top5 / s.n);
  }
  online_mean.Print("mean of workloads");
  if (g_predictions) std::fclose(g_predictions);
  return 0;
}
