// Flattened XGBoost trees and their inference (tree_ensemble.h).
#include "tree_ensemble.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tunefarm::costmodel::detail {

namespace {

// Deeper trees would take 2^depth slots each; XGBoostModel then keeps
// XGBoost's predictor.
constexpr int kMaxDepth = 12;

// The integer after `key` in `line`, or -1.
int64_t IntAfter(std::string_view line, std::string_view key) {
  size_t p = line.find(key);
  if (p == std::string_view::npos) return -1;
  int64_t v = -1;
  const char* b = line.data() + p + key.size();
  std::from_chars(b, line.data() + line.size(), v);
  return v;
}

// A float written by XGBoost (max_digits10 digits, so it round-trips).
bool ParseFloat(std::string_view s, float* out) {
  std::string buf(s);
  char* end = nullptr;
  *out = std::strtof(buf.c_str(), &end);
  return end != buf.c_str();
}

}  // namespace

Result<TreeEnsemble> TreeEnsemble::FromTextDump(const std::vector<std::string_view>& trees, float base,
                                                int num_features) {
  TreeEnsemble e;
  e.base_ = base;
  e.num_features_ = num_features;
  std::vector<Node> all;
  std::vector<int32_t> roots;
  for (std::string_view tree : trees) {
    // Node ids are local to a tree and not in order; map them to slots.
    struct Parsed {
      int64_t id;
      Node node;
    };
    std::vector<Parsed> parsed;
    while (!tree.empty()) {
      size_t eol = tree.find('\n');
      std::string_view line = tree.substr(0, eol);
      tree = eol == std::string_view::npos ? std::string_view() : tree.substr(eol + 1);
      line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
      if (line.empty()) continue;
      Parsed p{};
      std::from_chars(line.data(), line.data() + line.size(), p.id);
      if (size_t leaf = line.find("leaf="); leaf != std::string_view::npos) {
        if (!ParseFloat(line.substr(leaf + 5), &p.node.value)) return Status::Corruption("tree dump: bad leaf: " + std::string(line));
      } else {
        size_t f = line.find("[f"), lt = line.find('<'), close = line.find(']');
        if (f == std::string_view::npos || lt == std::string_view::npos || close == std::string_view::npos || lt > close) {
          return Status::Corruption("tree dump: bad split: " + std::string(line));
        }
        int64_t feature = -1;
        std::from_chars(line.data() + f + 2, line.data() + lt, feature);
        if (feature < 0 || feature >= num_features) return Status::Corruption("tree dump: feature out of range");
        p.node.feature = static_cast<int32_t>(feature);
        if (!ParseFloat(line.substr(lt + 1, close - lt - 1), &p.node.value)) {
          return Status::Corruption("tree dump: bad threshold: " + std::string(line));
        }
        p.node.yes = static_cast<int32_t>(IntAfter(line, "yes="));
        p.node.no = static_cast<int32_t>(IntAfter(line, "no="));
        p.node.missing = static_cast<int32_t>(IntAfter(line, "missing="));
        if (p.node.yes < 0 || p.node.no < 0 || p.node.missing < 0) return Status::Corruption("tree dump: bad children");
      }
      parsed.push_back(p);
    }
    if (parsed.empty()) return Status::Corruption("tree dump: empty tree");
    // Slot of each local id, then children rewritten to absolute indices.
    int64_t max_id = 0;
    for (const Parsed& p : parsed) max_id = std::max(max_id, p.id);
    std::vector<int32_t> slot(static_cast<size_t>(max_id) + 1, -1);
    const auto first = static_cast<int32_t>(all.size());
    for (size_t i = 0; i < parsed.size(); ++i) slot[static_cast<size_t>(parsed[i].id)] = first + static_cast<int32_t>(i);
    auto resolve = [&](int32_t id, int32_t* out) {
      if (id < 0 || id > max_id || slot[static_cast<size_t>(id)] < 0) return false;
      *out = slot[static_cast<size_t>(id)];
      return true;
    };
    for (Parsed& p : parsed) {
      if (p.node.feature >= 0 &&
          !(resolve(p.node.yes, &p.node.yes) && resolve(p.node.no, &p.node.no) && resolve(p.node.missing, &p.node.missing))) {
        return Status::Corruption("tree dump: child id without a node");
      }
      all.push_back(p.node);
    }
    if (slot[0] < 0) return Status::Corruption("tree dump: no root");
    roots.push_back(slot[0]);
  }

  // Depth of the deepest leaf (a walk bounded by the node count guards
  // against cycles in a corrupt dump).
  int depth = 0;
  for (int32_t root : roots) {
    std::vector<std::pair<int32_t, int>> stack{{root, 0}};
    size_t visited = 0;
    while (!stack.empty()) {
      auto [n, d] = stack.back();
      stack.pop_back();
      if (++visited > all.size()) return Status::Corruption("tree dump: cycle");
      const Node& node = all[static_cast<size_t>(n)];
      if (node.feature < 0) {
        depth = std::max(depth, d);
      } else {
        if (node.missing != node.yes && node.missing != node.no) return Status::Corruption("tree dump: bad missing child");
        stack.push_back({node.yes, d + 1});
        stack.push_back({node.no, d + 1});
      }
    }
  }
  if (depth > kMaxDepth) return Status::Unimplemented("tree ensemble deeper than " + std::to_string(kMaxDepth));
  e.depth_ = depth;
  e.num_trees_ = roots.size();
  const size_t internal = (size_t{1} << depth) - 1;
  e.split_feature_.assign(e.num_trees_ * internal, 0);
  e.split_threshold_.assign(e.num_trees_ * internal, 0.f);
  e.missing_left_.assign(e.num_trees_ * internal, 0);
  e.leaves_.assign(e.num_trees_ * (internal + 1), 0.f);
  for (size_t t = 0; t < roots.size(); ++t) e.Pad(all, roots[t], t, 0, 0);
  return e;
}

void TreeEnsemble::Pad(const std::vector<Node>& nodes, int32_t node, size_t tree, uint32_t heap, int level) {
  const size_t internal = (size_t{1} << depth_) - 1;
  const Node& n = nodes[static_cast<size_t>(node)];
  if (level == depth_) {  // a leaf, at the bottom or repeated down to it
    leaves_[tree * (internal + 1) + heap - internal] = n.value;
    return;
  }
  const bool leaf = n.feature < 0;
  split_feature_[tree * internal + heap] = leaf ? 0 : n.feature;
  split_threshold_[tree * internal + heap] = leaf ? 0.f : n.value;
  missing_left_[tree * internal + heap] = !leaf && n.missing == n.yes;
  Pad(nodes, leaf ? node : n.yes, tree, 2 * heap + 1, level + 1);
  Pad(nodes, leaf ? node : n.no, tree, 2 * heap + 2, level + 1);
}

template <bool kMaybeNaN>
void TreeEnsemble::PredictBlock(const float* data, size_t n, size_t cols, float* out) const {
  constexpr size_t kBlock = kPredictBlock;
  const size_t internal = (size_t{1} << depth_) - 1;
  float acc[kBlock];
  std::fill(acc, acc + n, base_);
  for (size_t t = 0; t < num_trees_; ++t) {
    const int32_t* feature = split_feature_.data() + t * internal;
    const float* threshold = split_threshold_.data() + t * internal;
    const uint8_t* missing_left = missing_left_.data() + t * internal;
    const float* leaves = leaves_.data() + t * (internal + 1);
    // One step down the heap: right unless v < threshold, or v is NaN and
    // NaN goes left.
    auto step = [&](const float* x, uint32_t i) {
      const float v = x[feature[i]];
      uint32_t right = static_cast<uint32_t>(!(v < threshold[i]));
      if constexpr (kMaybeNaN) right &= static_cast<uint32_t>(!(std::isnan(v) && missing_left[i]));
      return 2 * i + 1 + right;
    };
    // Four rows walk the tree together: their steps are independent, so the
    // loads overlap, and the four heap indices stay in registers (an index
    // array in memory cost a load and a store per step, about half the
    // instructions of prediction).
    size_t r = 0;
    for (; r + 4 <= n; r += 4) {
      const float* x0 = data + r * cols;
      const float* x1 = x0 + cols;
      const float* x2 = x1 + cols;
      const float* x3 = x2 + cols;
      uint32_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;
      for (int level = 0; level < depth_; ++level) {
        i0 = step(x0, i0);
        i1 = step(x1, i1);
        i2 = step(x2, i2);
        i3 = step(x3, i3);
      }
      acc[r] += leaves[i0 - internal];
      acc[r + 1] += leaves[i1 - internal];
      acc[r + 2] += leaves[i2 - internal];
      acc[r + 3] += leaves[i3 - internal];
    }
    for (; r < n; ++r) {
      uint32_t i = 0;
      for (int level = 0; level < depth_; ++level) i = step(data + r * cols, i);
      acc[r] += leaves[i - internal];
    }
  }
  std::copy(acc, acc + n, out);
}

namespace {

// True when any of the n floats is NaN.
bool AnyNaN(const float* x, size_t n) {
  size_t i = 0;
  bool nan = false;
#if defined(__SSE2__)
  // Four at a time (GCC's -O2 vectorizer leaves the scalar loop alone; it
  // was a tenth of prediction).
  __m128 unordered = _mm_setzero_ps();
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    unordered = _mm_or_ps(unordered, _mm_cmpunord_ps(v, v));
  }
  nan = _mm_movemask_ps(unordered) != 0;
#endif
  for (; i < n; ++i) nan |= x[i] != x[i];
  return nan;
}

}  // namespace

void TreeEnsemble::Predict(const float* data, size_t rows, size_t cols, float* out) const {
  // Features are never NaN in practice; a block without NaN skips the
  // missing-value test in every step (one scan instead).
  for (size_t r0 = 0; r0 < rows; r0 += kPredictBlock) {
    const size_t n = std::min(kPredictBlock, rows - r0);
    const float* block = data + r0 * cols;
    if (AnyNaN(block, n * cols)) {
      PredictBlock<true>(block, n, cols, out + r0);
    } else {
      PredictBlock<false>(block, n, cols, out + r0);
    }
  }
}

}  // namespace tunefarm::costmodel::detail
