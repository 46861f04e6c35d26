// CostModel: what the evolutionary search asks "which candidates look fast?".
//
// The search scores lowered candidates with Predict (higher = predicted
// faster; only the order within one workload means anything) and feeds
// measurements back with Update. PredictCached scores as Predict does and
// keeps each candidate's features (CachedFeatures), so that a candidate
// scored again, or learned from once measured (MeasuredCandidate::
// FromFeatures), is extracted once. XGBoostCostModel learns a ranking from the
// measurements; RandomCostModel scores at random (the random-search
// baseline, and what a search uses before any measurement exists).
//
// Training data: a Dataset keeps every measured candidate as a feature
// vector grouped by workload key. Labels come from throughput (1 / seconds)
// relative to the best throughput of the same workload (LabelKind; by
// default their ratio, in [0, 1]), failed candidates lowest; the
// ranking objective compares candidates of one workload only (query
// groups = workloads).
// Transfer: WarmStart seeds the dataset with records of other workloads on
// the same target, whose groups then shape the trees the new workload uses.
// Records of unlike loop nests can mislead it, so XGBoostCostModel checks
// transfer against the job's own records as they arrive (TransferReport).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/costmodel/cached_features.h"
#include "tunefarm/costmodel/features.h"
#include "tunefarm/costmodel/xgboost_model.h"

namespace tunefarm::costmodel {

// One measurement, as the cost model sees it.
struct MeasuredCandidate {
  std::string workload_key;  // e.g. the workload's structural hash; groups for ranking
  // kNumFeatures values; when empty, Update/Add extract them from `lowered`.
  FeatureVector features;
  std::shared_ptr<const ir::PrimFunc> lowered;  // LowerForCodegen output; may be null if features are set
  double seconds = 0;   // run time of one evaluation; ignored when failed
  bool failed = false;  // compile/runtime error, timeout, wrong result: throughput 0

  static MeasuredCandidate FromLowered(std::string workload_key, const ir::PrimFunc& lowered, double seconds,
                                       bool failed = false);
  // Features extracted before (when the candidate was scored: CachedFeatures).
  static MeasuredCandidate FromFeatures(std::string workload_key, FeatureVector features, double seconds,
                                        bool failed = false);
};

// How a workload's throughputs become training labels (failed: the lowest).
enum class LabelKind {
  kNormalized,  // throughput / best throughput of the workload, in [0, 1]
  kLog,         // log2(throughput / best), <= 0; failed: the group's lowest - 1
  kLevels,      // round(31 x throughput / best): integer relevance for rank:ndcg / rank:map
  kLogBins,     // floor(bins_per_octave x log2(throughput / best)): near-ties share a label
};

// Measurements grouped by workload key. Insertion order is kept within a group.
class Dataset {
 public:
  // Extracts features from c.lowered when c.features is empty. InvalidArgument
  // when neither is usable or the feature length is wrong.
  Status Add(const MeasuredCandidate& c);
  size_t size() const { return size_; }
  size_t num_workloads() const { return groups_.size(); }
  bool empty() const { return size_ == 0; }

  struct TrainingSet {
    FeatureMatrix x;              // rows grouped by workload, groups in key order
    std::vector<float> labels;    // per LabelKind
    std::vector<unsigned> groups; // rows per workload, in order
  };
  // Rows of every group except those named in `exclude`.
  TrainingSet Build(LabelKind label = LabelKind::kNormalized, double bins_per_octave = 2,
                    const std::set<std::string>& exclude = {}) const;
  // Rows of the groups not named in `exclude`.
  size_t CountRows(const std::set<std::string>& exclude) const;
  // Drops one group's rows; nothing when the key has none.
  void Erase(const std::string& workload_key);

 private:
  struct Group {
    std::vector<float> features;    // rows x kNumFeatures, row-major
    std::vector<double> throughput; // 1 / seconds, 0 when failed
  };
  std::map<std::string, Group> groups_;
  size_t size_ = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Adds measurements and refreshes the model.
  virtual Status Update(const std::vector<MeasuredCandidate>& measured) = 0;
  // Scores for lowered candidates (LowerForCodegen output), one per input.
  virtual Result<std::vector<double>> Predict(const std::vector<const ir::PrimFunc*>& lowered) = 0;
  // Scores for precomputed feature rows (kNumFeatures columns).
  virtual Result<std::vector<double>> PredictFeatures(const FeatureMatrix& x) = 0;
  // A program to score and where its features are kept (null: nowhere).
  struct CachedProgram {
    const ir::PrimFunc* lowered = nullptr;
    CachedFeatures* features = nullptr;
  };
  // Scores as Predict does; a model that reads features takes each program's
  // from its cache, extracting them there when not yet, so that a candidate
  // scored again, or learned from once measured, is not extracted again.
  // This default scores with Predict and extracts nothing (models that read
  // no features: RandomCostModel).
  virtual Result<std::vector<double>> PredictCached(const std::vector<CachedProgram>& programs);
  virtual Status Save(const std::string& path) const = 0;
  virtual Status Load(const std::string& path) = 0;
  // Transfer: learns from records of other workloads measured on the same
  // target before this workload has any. Models that cannot transfer ignore it.
  virtual Status WarmStart(const std::vector<MeasuredCandidate>& records) { return Status::OK(); }
};

struct XGBoostCostModelOptions {
  XGBoostParams params;
  // Retrain only once this many records exist (fewer give meaningless trees).
  size_t min_records_to_train = 8;
  // kLogBins (2 per octave) scored +0.002 pairwise in bench/costmodel, within
  // noise, and gives every candidate within sqrt(2) of the best one label:
  // no order among the near-best candidates a converging search measures.
  LabelKind label = LabelKind::kNormalized;
  double bins_per_octave = 2;  // LabelKind::kLogBins
  // Transfer check: pairs of this job's own measured candidates both models
  // must have ranked before the transfer records can be dropped (two batches
  // of 16 give 240). 0: keep transfer records for good, unchecked.
  size_t transfer_check_min_pairs = 200;
};

// What the transfer check saw (XGBoostCostModel::transfer_report).
struct TransferReport {
  size_t transfer_records = 0;  // rows WarmStart added; 0: no transfer
  bool dropped = false;         // transfer records removed for the rest of the job
  size_t own_records_at_drop = 0;
  size_t pairs = 0;             // measured pairs both models ranked before being trained on them
  double with_transfer = 0;     // pairwise accuracy on them of the model with transfer records
  double own_only = 0;          // of the model trained on the job's own records alone
};

// Retrains from the whole accumulated dataset on every Update: simplest
// correct incremental scheme, and cheap at tuning-log sizes (thousands of
// rows train in about a second; see docs/costmodel.md). Before the first
// training every score is 0 (ties: the search's order is then random).
//
// Transfer check: while WarmStart's records are in the dataset, a second
// booster learns from the job's own records alone. Update scores each
// measured batch with both boosters before learning from it; once at least
// transfer_check_min_pairs pairs have been ranked and the own-records model
// ranked them at least as well, the transfer records are erased and the
// model is the own-records one from then on. The check costs one more
// training per Update on the (small) own-records set.
class XGBoostCostModel : public CostModel {
 public:
  explicit XGBoostCostModel(XGBoostCostModelOptions options = {});

  // Transfer: seeds the dataset with records of other workloads measured on
  // the same target and trains on them.
  Status WarmStart(const std::vector<MeasuredCandidate>& records) override;
  Status Update(const std::vector<MeasuredCandidate>& measured) override;
  Result<std::vector<double>> Predict(const std::vector<const ir::PrimFunc*>& lowered) override;
  Result<std::vector<double>> PredictFeatures(const FeatureMatrix& x) override;
  // Untrained: zeros, extracting nothing (as Predict).
  Result<std::vector<double>> PredictCached(const std::vector<CachedProgram>& programs) override;
  // The booster only (XGBoost JSON); the dataset lives in the tuning log.
  Status Save(const std::string& path) const override;
  Status Load(const std::string& path) override;
  Result<std::string> SaveToBytes() const { return model_.SaveToBytes(); }
  Status LoadFromBytes(std::string_view bytes) { return model_.LoadFromBytes(bytes); }

  const Dataset& dataset() const { return dataset_; }
  const XGBoostModel& model() const { return model_; }
  bool trained() const { return model_.trained(); }
  const TransferReport& transfer_report() const { return transfer_; }

 private:
  Status Retrain();
  // Scores n rows, `fill(i, row)` writing row i's kNumFeatures values, a
  // chunk at a time (Predict, PredictCached).
  Result<std::vector<double>> PredictRows(size_t n, const std::function<void(size_t, float*)>& fill);
  bool TransferActive() const { return !transfer_keys_.empty(); }
  // Scores `measured` (features set) with model_ and own_model_ and adds to transfer_'s counts.
  Status CompareOnBatch(const std::vector<MeasuredCandidate>& measured);
  void DropTransfer();

  XGBoostCostModelOptions options_;
  Dataset dataset_;
  XGBoostModel model_;       // trained on every row of dataset_
  XGBoostModel own_model_;   // own rows only; trained only while TransferActive()
  std::set<std::string> transfer_keys_;  // groups WarmStart added; emptied when dropped
  TransferReport transfer_;
  double agree_with_transfer_ = 0, agree_own_only_ = 0;  // over transfer_.pairs
  FeatureMatrix scratch_;  // one chunk of Predict's rows
};

// Uniform random scores in [0, 1); Update, Save and Load do nothing.
class RandomCostModel : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed = 0) : rng_(seed) {}
  Status Update(const std::vector<MeasuredCandidate>&) override { return Status::OK(); }
  Result<std::vector<double>> Predict(const std::vector<const ir::PrimFunc*>& lowered) override;
  Result<std::vector<double>> PredictFeatures(const FeatureMatrix& x) override;
  Status Save(const std::string&) const override { return Status::OK(); }
  Status Load(const std::string&) override { return Status::OK(); }

 private:
  std::vector<double> Draw(size_t n);
  std::mt19937_64 rng_;
};

}  // namespace tunefarm::costmodel
