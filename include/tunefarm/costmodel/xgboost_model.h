// XGBoostModel: the one wrapper of XGBoost's C API in tunefarm.
//
// Owns one booster handle (moved, never copied). Every failing C API call is
// turned into a Status carrying XGBoost's own message (XGBGetLastError read
// right after the call). Training builds a DMatrix from a row-major Eigen
// feature matrix with labels and query groups; prediction runs in place on
// a dense matrix (no DMatrix copy). Models serialize to XGBoost's JSON
// format, to a file or to bytes.
//
// Thread-compatibility: const methods (Predict, SaveToBytes) may not run
// concurrently with each other either, since XGBoost returns prediction
// buffers owned by the booster; callers serialize access per model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel {

namespace detail {
class TreeEnsemble;
}

struct XGBoostParams {
  std::string objective = "rank:pairwise";  // or "reg:squarederror"
  // Chosen on bench/costmodel's 2,000 measured schedules (5-fold held-out
  // pairwise accuracy): shallow trees with a lower rate, half the features
  // per tree and more sampled pairs beat 120 rounds at depth 8 (0.82 vs
  // 0.79). 140 trees of depth 5 score within 0.005 of 200 and keep
  // prediction near 1 us a candidate.
  int num_rounds = 140;
  int max_depth = 5;
  double eta = 0.14;
  double min_child_weight = 1;
  double gamma = 0.0;
  double subsample = 1.0;
  double colsample_bytree = 0.5;
  // Ranking objectives: pairs sampled per candidate per round (XGBoost's
  // num_pairsample); ignored by the others.
  int num_pairsample = 8;
  int nthread = 1;  // explicit: XGBoost would otherwise take every core
  uint64_t seed = 0;
};

class XGBoostModel {
 public:
  XGBoostModel() = default;
  ~XGBoostModel();
  XGBoostModel(XGBoostModel&& other) noexcept;
  XGBoostModel& operator=(XGBoostModel&& other) noexcept;
  XGBoostModel(const XGBoostModel&) = delete;
  XGBoostModel& operator=(const XGBoostModel&) = delete;

  // Trains a new booster (replacing any previous one) on x (one row per
  // candidate) and labels. group_sizes, when not empty, splits the rows into
  // consecutive query groups (ranking objectives compare rows of one group
  // only) and must sum to x.rows().
  Status Train(const FeatureMatrix& x, const std::vector<float>& labels,
               const std::vector<unsigned>& group_sizes, const XGBoostParams& params);

  // Scores of the rows of x (higher = predicted faster for rank objectives).
  // FailedPrecondition before Train/Load.
  Result<std::vector<float>> Predict(const FeatureMatrix& x) const;
  // Scores of `rows` rows of `cols` floats at data (row-major), into out[rows].
  Status Predict(const float* data, size_t rows, size_t cols, float* out) const;

  Status SaveToFile(const std::string& path) const;
  Status LoadFromFile(const std::string& path);
  Result<std::string> SaveToBytes() const;
  Status LoadFromBytes(std::string_view bytes);

  // Scores with XGBoost's own predictor (what Predict uses when the
  // booster's trees could not be flattened); for tests and comparisons.
  Status PredictWithXGBoost(const float* data, size_t rows, size_t cols, float* out) const;
  // True when Predict walks tunefarm's flattened copy of the trees.
  bool uses_flattened_trees() const { return trees_ != nullptr; }

  bool trained() const { return booster_ != nullptr; }
  int num_features() const { return num_features_; }
  const XGBoostParams& params() const { return params_; }

 private:
  // Creates an empty booster with params_ set (for training or loading).
  Status CreateBooster(void* const* dmats, uint64_t num_dmats, void** out) const;
  Status AfterLoad(void* handle);
  void Reset();
  // Flattens the booster's trees for Predict; leaves trees_ empty (XGBoost
  // predicts) when the objective is not a plain margin or the copies disagree.
  void FlattenTrees();

  void* booster_ = nullptr;  // BoosterHandle; null until trained or loaded
  std::shared_ptr<const detail::TreeEnsemble> trees_;  // shared_ptr: the type is incomplete here
  int num_features_ = 0;
  XGBoostParams params_;
};

}  // namespace tunefarm::costmodel
