// Rule 2 of the CPU sketch: multi-level tiling of one reduction
// (sketch_cpu_tiling.h). TileReduction runs the steps below in order; the
// order is the trace's, so a record of an older run replays and its
// decisions meet the same sampling calls. The steps that copy the inputs
// (padding, packing, phases, and placing the copies) are in
// sketch_cpu_inputs.cpp.
#include "sketch_cpu_tiling.h"

#include <algorithm>
#include <vector>

#include "sketch_cpu_tiler.h"

namespace tunefarm::tuner {

using namespace ir;
using namespace sketch_analysis;

// The vector axis: the innermost spatial axis, or one whose extent is a
// multiple of the vector, or -- padded -- one that is not. Padding needs an
// accumulator or fused consumer to hold the padded tile. The innermost axis
// may be padded or tiled by divisors of its extent, a sampled choice.
Status ReductionTiler::SampleVectorAxis(bool has_epilogue) {
  const bool can_pad = config_.pad_vector_axis && has_epilogue && shape_.stores_at_iter_vars;
  std::vector<int64_t> axis_choices;  // spatial axis indices
  for (size_t a = 0; a < n_spatial_; ++a) {
    if (a + 1 == n_spatial_ || (shape_.spatial_extents[a] % lanes_ == 0 && shape_.stores_at_iter_vars)) {
      axis_choices.push_back(int64_t(a));
    }
  }
  // Axes that reach whole vectors only padded come last, so that an older
  // trace's decision still names the axis it named; and only where no other
  // axis but the innermost reaches them unpadded (a convolution with 64
  // output channels vectorizes those, not its 56 rows padded to 64: each
  // extra choice thins the search's samples of the others).
  const bool aligned_outer = axis_choices.size() > 1;
  for (size_t a = 0; can_pad && !aligned_outer && a + 1 < n_spatial_; ++a) {
    if (shape_.spatial_extents[a] % lanes_ != 0 && PadFits(a)) axis_choices.push_back(int64_t(a));
  }
  TF_ASSIGN_OR_RETURN(block_, sch_.GetBlock(info_.block->name));
  TF_ASSIGN_OR_RETURN(ValueRV axis_rv, sch_.SampleCategorical(axis_choices, std::vector<double>(axis_choices.size(), 1.0)));
  axis_ = size_t(sch_.Get(axis_rv));
  axis_innermost_ = axis_ + 1 == n_spatial_;
  const bool aligned = shape_.spatial_extents[axis_] % lanes_ == 0;
  if (!aligned && can_pad && PadFits(axis_)) {
    // The multiple: one vector, or two or four, which leave the register
    // tile more whole-vector counts to choose from (1000 padded to 1008 is
    // 63 vectors: tiles of 1 or 3; padded to 1024, 64: 1, 2 or 4). The
    // innermost axis may also stay unpadded (0).
    std::vector<int64_t> choices = PadMultiples(axis_);
    if (axis_innermost_) choices.insert(choices.begin(), 0);
    TF_ASSIGN_OR_RETURN(ValueRV pad, sch_.SampleCategorical(choices, std::vector<double>(choices.size(), 1.0)));
    pad_multiple_ = sch_.Get(pad);
  }
  forced_lanes_ = aligned || pad_multiple_ > 0;
  return Status::OK();
}

// Multiples of one, two and four vectors whose padded extents fit and differ.
std::vector<int64_t> ReductionTiler::PadMultiples(size_t axis) const {
  const int64_t extent = shape_.spatial_extents[axis];
  std::vector<int64_t> multiples, padded_extents;
  for (int64_t vectors : {1, 2, 4}) {
    const int64_t multiple = lanes_ * vectors;
    const int64_t padded = (extent + multiple - 1) / multiple * multiple;
    if (double(padded) > config_.pad_axis_max_growth * double(extent)) break;
    if (std::find(padded_extents.begin(), padded_extents.end(), padded) != padded_extents.end()) continue;
    multiples.push_back(multiple);
    padded_extents.push_back(padded);
  }
  return multiples;
}

// Padding an axis of extent E to whole vectors computes ceil(E / lanes) *
// lanes of it: worth offering only where that is not mostly padding.
bool ReductionTiler::PadFits(size_t axis) const {
  const int64_t extent = shape_.spatial_extents[axis];
  const int64_t padded = (extent + lanes_ - 1) / lanes_ * lanes_;
  return double(padded) <= config_.pad_axis_max_growth * double(extent);
}

// The fused element-wise consumer, else a local accumulator (cache_write).
Status ReductionTiler::MakeEpilogue(const std::string& fused_consumer) {
  if (!fused_consumer.empty()) {
    TF_ASSIGN_OR_RETURN(epilogue_, sch_.GetBlock(fused_consumer));
  } else if (config_.cache_write) {
    TF_ASSIGN_OR_RETURN(epilogue_, sch_.CacheWrite(block_, MemoryScope::kLocal));
  }
  return Status::OK();
}

// The padded axis grows once the copies and the accumulator exist: they are
// what holds the padding.
Status ReductionTiler::PadVectorAxis() {
  if (pad_multiple_ == 0) return Status::OK();
  int iter_index = -1;
  for (size_t i = 0, spatial = 0; i < shape_.kinds.size() && iter_index < 0; ++i) {
    if (shape_.kinds[i] != IterKind::kSpatial) continue;
    if (spatial++ == axis_) iter_index = int(i);
  }
  return sch_.PadAxis(block_, iter_index, pad_multiple_);
}

// The block's loops; default nests list spatial loops first, then reduction loops.
Status ReductionTiler::CollectLoops() {
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch_.GetLoops(block_));
  for (size_t i = 0; i < shape_.kinds.size() && i < loops.size(); ++i) {
    (shape_.kinds[i] == IterKind::kSpatial ? spatial_ : reduce_).push_back(loops[i]);
  }
  s_levels_.resize(size_t(config_.spatial_levels));
  r_levels_.resize(size_t(config_.reduce_levels));
  return Status::OK();
}

// Stride classes first in each task, or interleaved in the tiles: sampled.
// Why: T2D's register tile of 8 x 2 outputs (both parities of h and w) reads
// 4 weight vectors per input channel and tap, one per class, each feeding 4
// FMAs; a tile of one class reads one, feeding all of them (a 300-trial best
// kernel hand-edited to one class per tile: 102 -> 110 GFLOP/s at 1 thread,
// oneDNN 126; docs/tuning-benchmarks.md).
Status ReductionTiler::SampleStrideClasses() {
  if (!config_.stride_classes_outer) return Status::OK();
  bool any = false;
  for (size_t a = 0; a < n_spatial_; ++a) any = any || (a != axis_ && shape_.class_stride[a] > 1);
  if (!any) return Status::OK();
  TF_ASSIGN_OR_RETURN(ValueRV classes, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
  classes_outer_ = sch_.Get(classes) == 1;
  return Status::OK();
}

// Whole vectors the register tile may hold along a vector axis of `vectors`
// vectors: divisors up to the largest power of two within
// max_vector_register_tile (2 on AVX2), or up to max_vector_register_tile
// itself (3) where those leave only the 1-vector tile -- 24 output channels
// are 3 vectors of AVX2's 8 lanes. Why not 3 everywhere: on dense+bias+relu's
// 384 vectors the 3-vector tiles thinned the 2-vector ones, and its 150-trial
// kernels lost 7.6 % at one thread over four seeds (docs/tuning-benchmarks.md).
static int64_t VectorTileCap(int64_t vectors, int64_t cap) {
  int64_t power_of_two = 1;
  while (power_of_two * 2 <= cap) power_of_two *= 2;
  for (int64_t d = 2; d <= power_of_two; ++d) {
    if (vectors % d == 0) return power_of_two;
  }
  return cap;
}

// Each spatial loop split into spatial_levels tiles (the vector axis into
// whole vectors first, the stride classes off first), each reduction loop
// into reduce_levels.
Status ReductionTiler::SplitLoops() {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> floors, RegisterTileFloors());
  for (size_t i = 0; i < spatial_.size(); ++i) {
    LoopRV loop = spatial_[i];
    if (classes_outer_ && i != axis_ && shape_.class_stride[i] > 1) {
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> by_class, sch_.Split(loop, {-1, shape_.class_stride[i]}));
      loop = by_class[0];
      class_loops_.push_back(by_class[1]);
    }
    int64_t max_inner = config_.max_inner_tile;
    if (i == axis_ && forced_lanes_) {
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> halves, sch_.Split(loop, {-1, lanes_}));
      loop = halves[0];
      vector_loop_ = halves[1];
      TF_ASSIGN_OR_RETURN(int64_t vectors, sch_.LoopExtent(loop));
      max_inner = VectorTileCap(vectors, config_.max_vector_register_tile);
    } else if (i == axis_) {
      max_inner = config_.max_vector_lanes;
    }
    // An axis along which no input is reused (a depthwise convolution's
    // channels: each channel reads its own plane and its own weights) is
    // tiled only outside the first reduction level. In the register tile it
    // would add accumulators that share no loaded value with each other:
    // DEP's fast kernels (184+ GFLOP/s) kept channels out of those levels in
    // 19 of 20 runs, its slow ones (158 or less) in 5 of 22.
    const int inner_units = InnerUnits(i);
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f,
                        sch_.SamplePerfectTile(loop, config_.spatial_levels - inner_units,
                                               inner_units > 0 ? shape_.spatial_extents[i] : max_inner, std::nullopt,
                                               inner_units > 0 ? 1 : floors[i]));
    std::vector<Factor> factors(f.begin(), f.end());
    factors.insert(factors.end(), size_t(inner_units), Factor(int64_t(1)));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(loop, factors));
    for (size_t l = 0; l < parts.size(); ++l) s_levels_[l].push_back(parts[l]);
    if (i == axis_ && !forced_lanes_) vector_loop_ = parts.back();
  }
  TF_RETURN_IF_ERROR(SampleDotProduct());
  for (LoopRV r : reduce_) {
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch_.SamplePerfectTile(r, config_.reduce_levels, config_.max_reduce_inner_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(r, std::vector<Factor>(f.begin(), f.end())));
    for (size_t l = 0; l < parts.size(); ++l) r_levels_[l].push_back(parts[l]);
  }
  return Status::OK();
}

int ReductionTiler::InnerUnits(size_t axis) const {
  return (config_.register_tile_needs_reuse && axis != axis_ && !shape_.reused[axis] && config_.spatial_levels > 2)
             ? config_.spatial_levels - 2
             : 0;
}

// The smallest divisor of `extent` in [want, cap], else the largest below
// want (the most the axis can hold), at least 1.
static int64_t TileFloor(int64_t extent, int64_t cap, int64_t want) {
  int64_t below = 1;
  for (int64_t d = 1; d <= std::min(extent, cap); ++d) {
    if (extent % d != 0) continue;
    if (d >= want) return d;
    below = d;
  }
  return below;
}

// The least innermost tile per spatial axis (sample_perfect_tile's
// min_innermost): the register tile -- the innermost spatial tiles, whose
// accumulators stay in registers across the inner reduction loop -- holds at
// least register_tile_floor vectors where the axes allow it: two along the
// vector axis, the rest along the innermost other axis that reuses loads.
// Why: with one or two accumulators each multiply-add waits for the one
// before it (latency-bound), and a 150-trial search of the layer suite kept
// such kernels as its best on BERT's QKV projection (two accumulators) and
// MobileNet-V2's first convolution (two), at 0.4-0.7x oneDNN.
Result<std::vector<int64_t>> ReductionTiler::RegisterTileFloors() const {
  std::vector<int64_t> floors(n_spatial_, 1);
  if (config_.register_tile_floor <= 1 || config_.spatial_levels < 2) return floors;
  std::vector<int64_t> extent(n_spatial_), cap(n_spatial_);
  for (size_t i = 0; i < n_spatial_; ++i) {
    TF_ASSIGN_OR_RETURN(extent[i], sch_.LoopExtent(spatial_[i]));
    if (classes_outer_ && i != axis_ && shape_.class_stride[i] > 1) extent[i] /= shape_.class_stride[i];
    cap[i] = config_.max_inner_tile;
    if (i == axis_ && forced_lanes_) extent[i] /= lanes_;
    if (i == axis_) cap[i] = forced_lanes_ ? VectorTileCap(extent[i], config_.max_vector_register_tile) : 0;  // lanes: no floor
    if (InnerUnits(i) > 0) cap[i] = 0;
  }
  int64_t want = config_.register_tile_floor;
  if (cap[axis_] > 0) {
    floors[axis_] = TileFloor(extent[axis_], cap[axis_], std::min<int64_t>(2, want));
    want = (want + floors[axis_] - 1) / floors[axis_];
  }
  for (size_t i = n_spatial_; i-- > 0;) {
    if (i == axis_ || cap[i] <= 1 || !shape_.reused[i] || extent[i] <= 1) continue;
    floors[i] = TileFloor(extent[i], cap[i], want);
    break;
  }
  return floors;
}

// SSRSRS: S0 S1 R0 S2 R1 S3 (with more levels, the extra ones interleave the
// same way), then the vector loop innermost (and inside it the dot-product
// loop, when one was split off, or the smmla tile's rows, columns and
// steps); the stride classes, if split
// off, between S0 (the parallel loop) and S1. S0 fused and parallel, the
// vector loop vectorized.
Status ReductionTiler::OrderLoops() {
  std::vector<LoopRV> order;
  size_t ri = 0;
  for (size_t l = 0; l < s_levels_.size(); ++l) {
    for (LoopRV x : s_levels_[l]) {
      if (x.id != vector_loop_.id) order.push_back(x);
    }
    if (l == 0) order.insert(order.end(), class_loops_.begin(), class_loops_.end());
    if (l >= 1 && ri < r_levels_.size()) {
      order.insert(order.end(), r_levels_[ri].begin(), r_levels_[ri].end());
      ++ri;
    }
  }
  order.push_back(vector_loop_);
  order.insert(order.end(), mmla_tile_.begin(), mmla_tile_.end());
  if (dot_loop_) order.push_back(*dot_loop_);
  TF_RETURN_IF_ERROR(sch_.Reorder(order));
  outer_ = s_levels_[0][0];
  if (s_levels_[0].size() > 1) {
    TF_ASSIGN_OR_RETURN(outer_, sch_.Fuse(s_levels_[0]));
  }
  TF_RETURN_IF_ERROR(sch_.Parallel(outer_));
  TF_ASSIGN_OR_RETURN(int64_t vector_extent, sch_.LoopExtent(vector_loop_));
  if (vector_extent > 1 && mmla_tile_.empty()) TF_RETURN_IF_ERROR(sch_.Vectorize(vector_loop_));
  return AnnotateDotProduct();
}

Status ReductionTiler::SampleUnroll() {
  TF_ASSIGN_OR_RETURN(ValueRV unroll, sch_.SampleCategorical(config_.unroll_steps, UnrollWeights()));
  if (sch_.Get(unroll) > 0) TF_RETURN_IF_ERROR(sch_.Annotate(outer_, "pragma_auto_unroll_max_step", sch_.Get(unroll)));
  return Status::OK();
}

// The accumulator tile lives under the parallel loop or one level deeper;
// under the parallel loop only when a class loop is between them: one
// class's outputs are no box, and the write-back copies the box around what
// its loop wrote.
Status ReductionTiler::PlaceEpilogue(std::vector<std::string>* placed) {
  if (!epilogue_) return Status::OK();
  TF_ASSIGN_OR_RETURN(std::string epilogue_name, sch_.BlockName(*epilogue_));
  placed->push_back(epilogue_name);
  LoopRV at = outer_;
  if (class_loops_.empty()) {
    TF_ASSIGN_OR_RETURN(ValueRV level, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
    if (sch_.Get(level) == 1) at = s_levels_[1].back();
  }
  TF_RETURN_IF_ERROR(sch_.ReverseComputeAt(*epilogue_, at));
  // Axis-innermost accumulator: one whole vector register per accumulator.
  if (forced_lanes_ && !axis_innermost_) TF_RETURN_IF_ERROR(sch_.PackLayout(block_, int(axis_), lanes_, int(axis_)));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> e_loops, sch_.GetLoops(*epilogue_));
  TF_ASSIGN_OR_RETURN(int64_t e_lanes, sch_.LoopExtent(e_loops.back()));
  if (e_lanes > 1 && e_lanes <= config_.max_vector_lanes) TF_RETURN_IF_ERROR(sch_.Vectorize(e_loops.back()));
  return Status::OK();
}

// Weights of unroll_steps: all alike, except that a kernel keeping its
// padding guards leaves out the depths below guarded_unroll_min_step (all
// alike again if that leaves none). Weights rather than a shorter list, so
// that a decision keeps its index: an older record's deep unroll is still a
// hint its replay follows, and only a guarded kernel's shallow one is drawn
// anew.
std::vector<double> ReductionTiler::UnrollWeights() const {
  std::vector<double> weights(config_.unroll_steps.size(), 1.0);
  if (!keeps_guards_) return weights;
  bool any = false;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (config_.unroll_steps[i] < config_.guarded_unroll_min_step) weights[i] = 0.0;
    any = any || weights[i] > 0;
  }
  if (!any) std::fill(weights.begin(), weights.end(), 1.0);
  return weights;
}

Status TileReduction(Schedule& sch, const CpuSketchConfig& config, const BlockInfo& info,
                     const std::string& fused_consumer, std::vector<std::string>* placed) {
  ReductionTiler tiler(sch, config, info);
  TF_RETURN_IF_ERROR(tiler.SampleVectorAxis(!fused_consumer.empty() || config.cache_write));
  TF_RETURN_IF_ERROR(tiler.PadGuardedInputs());
  TF_RETURN_IF_ERROR(tiler.PackInputs());
  TF_RETURN_IF_ERROR(tiler.SamplePhases());
  TF_RETURN_IF_ERROR(tiler.MakeEpilogue(fused_consumer));
  TF_RETURN_IF_ERROR(tiler.PadVectorAxis());
  TF_RETURN_IF_ERROR(tiler.CollectLoops());
  TF_RETURN_IF_ERROR(tiler.SampleStrideClasses());
  TF_RETURN_IF_ERROR(tiler.SplitLoops());
  TF_RETURN_IF_ERROR(tiler.OrderLoops());
  TF_RETURN_IF_ERROR(tiler.SampleUnroll());
  TF_RETURN_IF_ERROR(tiler.PlaceEpilogue(placed));
  return tiler.PlaceCopies(placed);
}

}  // namespace tunefarm::tuner
