// Tree-ensemble inference for XGBoostModel (internal to costmodel/).
//
// Why not XGBoost's own predictor: scoring thousands of candidates per
// search round is the cost model's hot path, and XGBoost spends about
// 1.7 us per row before touching a tree (it copies every row into its own
// feature vector, checking each value for missing). Walking flattened
// copies of the trees straight over the caller's rows costs only the node
// visits. The trees come from XGBoost's text dump of the same booster, and
// XGBoostModel checks the two predictors agree before using this one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::costmodel::detail {

class TreeEnsemble {
 public:
  // Parses one text dump per tree ("0:[f12<0.5] yes=1,no=2,missing=1",
  // "1:leaf=0.25", one node a line); `base` is the booster's base score.
  static Result<TreeEnsemble> FromTextDump(const std::vector<std::string_view>& trees, float base, int num_features);

  // Raw margin of each row (rows of `cols` floats, row-major), summed in
  // tree order in float; equal to XGBoost's up to float rounding.
  void Predict(const float* data, size_t rows, size_t cols, float* out) const;

  size_t num_trees() const { return num_trees_; }
  int depth() const { return depth_; }

 private:
  // As parsed: linked nodes.
  struct Node {
    float value = 0;       // split threshold, or the leaf's value
    int32_t feature = -1;  // -1: leaf
    int32_t yes = 0;       // x[feature] < value (absolute node indices)
    int32_t no = 0;
    int32_t missing = 0;   // x[feature] is NaN
  };
  // Inference layout: every tree padded to the ensemble's depth (a leaf
  // above the bottom repeats its value in every bottom slot below it) and
  // stored as an implicit binary heap, so that each walk is exactly depth_
  // steps of branch-free index arithmetic: no pointer chasing and no
  // mispredicted exits, and the walks of several rows overlap.
  void Pad(const std::vector<Node>& nodes, int32_t node, size_t tree, uint32_t heap, int level);
  // Rows walk each tree together in blocks: the walks are independent, so
  // the core overlaps their loads, and the block's rows stay in L1.
  static constexpr size_t kPredictBlock = 16;
  template <bool kMaybeNaN>
  void PredictBlock(const float* data, size_t n, size_t cols, float* out) const;

  size_t num_trees_ = 0;
  int depth_ = 0;
  // Split of each internal heap slot, num_trees_ x (2^depth_ - 1): feature
  // and threshold in separate arrays, so that a step indexes each directly
  // (a leaf above the bottom: feature 0, threshold 0, both children alike).
  std::vector<int32_t> split_feature_;
  std::vector<float> split_threshold_;
  std::vector<uint8_t> missing_left_;  // same shape: NaN goes to the left child
  std::vector<float> leaves_;          // num_trees_ x 2^depth_
  float base_ = 0;
  int num_features_ = 0;
};

}  // namespace tunefarm::costmodel::detail
