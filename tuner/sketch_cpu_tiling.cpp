// Rule 2 of the CPU sketch: multi-level tiling of one reduction
// (sketch_cpu_tiling.h). TileReduction runs the steps below in order; the
// order is the trace's, so a record of an older run replays and its
// decisions meet the same sampling calls.
#include "sketch_cpu_tiling.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace tunefarm::tuner {

using namespace ir;
using namespace sketch_analysis;

namespace {

// A copy of an input the tile reads instead of the input: packed into
// vector-wide panels along the vector axis, or zero-padded, or both.
struct PackedCopy {
  BlockRV copy;
  int dim;  // packed along this dimension; -1: a padded copy, not packed
  int outer_position;
  bool ahead;   // of a constant input: at the root, made ahead of the calls
  bool padded;  // made by pad_input
  bool per_task = false;  // a padded copy always computed per parallel task
  int read_index = -1;    // the input it copies
  int phase_dim = -1;     // split into its stride phases along this dimension (split_phases)
  int64_t phase_stride = 0;
};

// One reduction being tiled: what TileReduction's steps hand each other.
class ReductionTiler {
 public:
  ReductionTiler(Schedule& sch, const CpuSketchConfig& config, const BlockInfo& info)
      : sch_(sch), config_(config), info_(info), shape_(DescribeReduction(info.block, info.store)),
        lanes_(config.vector_lanes), n_spatial_(shape_.spatial_extents.size()) {}

  Status SampleVectorAxis(bool has_epilogue);
  Status PadGuardedInputs();
  Status PackInputs();
  Status SamplePhases();
  Status MakeEpilogue(const std::string& fused_consumer);
  Status PadVectorAxis();
  Status CollectLoops();
  Status SampleStrideClasses();
  Status SplitLoops();
  Status OrderLoops();
  Status SampleUnroll();
  Status PlaceEpilogue(std::vector<std::string>* placed);
  Status PlaceCopies(std::vector<std::string>* placed);

 private:
  Status PlaceCopy(const PackedCopy& p, std::vector<std::string>* placed);
  Status CopyAxisInputs();
  bool PadFits(size_t axis) const;
  std::optional<LoopRV> PaddedSliceLoop(int read_index) const;
  std::vector<double> UnrollWeights() const;

  Schedule& sch_;
  const CpuSketchConfig& config_;
  const BlockInfo& info_;
  const ReductionShape shape_;
  const int64_t lanes_;
  const size_t n_spatial_;
  BlockRV block_;
  size_t axis_ = 0;             // the vector axis (a spatial axis index)
  bool forced_lanes_ = false;   // split into whole vectors: its extent is a multiple of the vector, or padded to one
  bool pad_axis_ = false;       // padded up to a multiple of the vector (pad_axis)
  std::set<int> copied_;        // read indices the block reads through a copy
  bool axis_innermost_ = false;
  std::vector<PackedCopy> packed_;
  std::map<int, BlockRV> padded_;  // read index -> its padded copy, until packed
  std::set<int> pad_per_task_;     // read indices whose copy is made per task only
  bool keeps_guards_ = false;      // some input is still read under its padding guards
  std::optional<BlockRV> epilogue_;
  std::vector<LoopRV> spatial_, reduce_;
  std::vector<std::vector<LoopRV>> s_levels_, r_levels_;
  bool classes_outer_ = false;
  std::vector<LoopRV> class_loops_;
  LoopRV vector_loop_;
  LoopRV outer_;  // the fused, parallel outermost loop
};

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
  // trace's decision still names the axis it named.
  for (size_t a = 0; can_pad && a + 1 < n_spatial_; ++a) {
    if (shape_.spatial_extents[a] % lanes_ != 0 && PadFits(a)) axis_choices.push_back(int64_t(a));
  }
  TF_ASSIGN_OR_RETURN(block_, sch_.GetBlock(info_.block->name));
  TF_ASSIGN_OR_RETURN(ValueRV axis_rv, sch_.SampleCategorical(axis_choices, std::vector<double>(axis_choices.size(), 1.0)));
  axis_ = size_t(sch_.Get(axis_rv));
  axis_innermost_ = axis_ + 1 == n_spatial_;
  const bool aligned = shape_.spatial_extents[axis_] % lanes_ == 0;
  if (!aligned && can_pad && PadFits(axis_)) {
    pad_axis_ = !axis_innermost_;
    if (axis_innermost_) {
      TF_ASSIGN_OR_RETURN(ValueRV pad, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
      pad_axis_ = sch_.Get(pad) == 1;
    }
  }
  forced_lanes_ = aligned || pad_axis_;
  return Status::OK();
}

// Padding an axis of extent E to whole vectors computes ceil(E / lanes) *
// lanes of it: worth offering only where that is not mostly padding.
bool ReductionTiler::PadFits(size_t axis) const {
  const int64_t extent = shape_.spatial_extents[axis];
  const int64_t padded = (extent + lanes_ - 1) / lanes_ * lanes_;
  return double(padded) <= config_.pad_axis_max_growth * double(extent);
}

// Inputs read under padding guards (a convolution's): a zero-padded copy, so
// that the guards leave the inner loops for one extra pass over the input,
// or the guards kept; a sampled choice per input. The copy may be made once
// before the kernel only where that pass is cheap against the work
// (pad_root_min_reuse reads per element); else per task.
Status ReductionTiler::PadGuardedInputs() {
  for (size_t r = 0; r < shape_.read_constant.size(); ++r) {
    if (shape_.read_constant[r] || !sch_.CanPadInput(block_, int(r))) continue;
    if (!config_.pad_inputs) {
      keeps_guards_ = true;
      continue;
    }
    TF_ASSIGN_OR_RETURN(ValueRV pad, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
    if (sch_.Get(pad) == 0) {
      keeps_guards_ = true;
      continue;
    }
    TF_ASSIGN_OR_RETURN(padded_[int(r)], sch_.PadInput(block_, int(r)));
    const int64_t reads_per_element = shape_.iterations / std::max<int64_t>(1, shape_.read_elements[r]);
    if (reads_per_element < config_.pad_root_min_reuse) pad_per_task_.insert(int(r));
  }
  return Status::OK();
}

// Inputs indexed with a stride along the vector axis get a packed copy (a
// padded input in its padded copy). A constant input (weights) read along it
// in rows may be copied into panels [.., rows/lanes, .., lanes] too: the copy
// is made once, ahead of the calls (split_prepack.h), and the kernel then
// walks its reduction through 64-byte steps instead of whole rows (a
// 1024-wide matmul's B).
Status ReductionTiler::PackInputs() {
  if (forced_lanes_) {
    for (const auto& [read_index, dim] : shape_.strided_inputs[axis_]) {
      auto pad = padded_.find(read_index);
      const bool from_pad = pad != padded_.end();
      BlockRV copy;
      if (from_pad) {
        copy = pad->second;
        padded_.erase(pad);
      } else {
        TF_ASSIGN_OR_RETURN(copy, sch_.CacheRead(block_, read_index, MemoryScope::kGlobal));
      }
      // A constant input's copy is made ahead of the calls: always at the root.
      packed_.push_back({copy, dim, dim, shape_.read_constant[size_t(read_index)], from_pad,
                         from_pad && pad_per_task_.count(read_index) > 0, read_index});
      copied_.insert(read_index);
    }
    for (const auto& [read_index, dim] : shape_.constant_rows[axis_]) {
      // Padded, the panels are what holds the zeros past the rows' end.
      if (!pad_axis_) {
        TF_ASSIGN_OR_RETURN(ValueRV panel, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
        if (sch_.Get(panel) == 0) continue;
      }
      TF_ASSIGN_OR_RETURN(BlockRV copy, sch_.CacheRead(block_, read_index, MemoryScope::kGlobal));
      packed_.push_back({copy, dim, 0, true, false, false, read_index});
      copied_.insert(read_index);
    }
  }
  for (const auto& [read_index, copy] : padded_) {
    packed_.push_back({copy, -1, 0, false, true, pad_per_task_.count(read_index) > 0, read_index});
    copied_.insert(read_index);
  }
  if (pad_axis_) TF_RETURN_IF_ERROR(CopyAxisInputs());
  return Status::OK();
}

// A padded axis reads its inputs past their ends: each input it indexes is
// read through a copy that pad_axis can grow with zeros, unless the read
// sits under a padding guard that already bounds it (a convolution's input
// whose guards are kept). A copy of a row-major input is a plain copy,
// placed like a padded one.
Status ReductionTiler::CopyAxisInputs() {
  for (size_t r = 0; r < shape_.uses.size(); ++r) {
    const int read_index = int(r);
    if (!shape_.uses[r][axis_] || copied_.count(read_index) || sch_.CanPadInput(block_, read_index)) continue;
    TF_ASSIGN_OR_RETURN(BlockRV copy, sch_.CacheRead(block_, read_index, MemoryScope::kGlobal));
    packed_.push_back({copy, -1, 0, shape_.read_constant[r], false, false, read_index});
    copied_.insert(read_index);
  }
  return Status::OK();
}

// An input read with a stride S >= 2 along the vector axis (a stride-2
// convolution's image along w: X[.., 2 * w + s]) gathers every vector it
// loads. Read through a copy split into its S phases (split_phases) it
// loads X[.., s % 2, w + s / 2], contiguous; a sampled choice per input,
// since the copy costs a pass over the input with scattered stores. A
// copy packed into panels is left as it is.
Status ReductionTiler::SamplePhases() {
  if (!config_.stride_phases) return Status::OK();
  for (size_t r = 0; r < shape_.strided_by.size(); ++r) {
    const auto [dim, stride] = shape_.strided_by[r][axis_];
    if (stride < 2) continue;
    auto copy = std::find_if(packed_.begin(), packed_.end(), [&](const PackedCopy& p) { return p.read_index == int(r); });
    if (copy != packed_.end() && copy->dim >= 0) continue;
    TF_ASSIGN_OR_RETURN(ValueRV phases, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
    if (sch_.Get(phases) == 0) continue;
    if (copy == packed_.end()) {
      TF_ASSIGN_OR_RETURN(BlockRV plain, sch_.CacheRead(block_, int(r), MemoryScope::kGlobal));
      packed_.push_back({plain, -1, 0, shape_.read_constant[r], false, false, int(r)});
      copied_.insert(int(r));
      copy = packed_.end() - 1;
    }
    copy->phase_dim = dim;
    copy->phase_stride = stride;
  }
  return Status::OK();
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
  if (!pad_axis_) return Status::OK();
  int iter_index = -1;
  for (size_t i = 0, spatial = 0; i < shape_.kinds.size() && iter_index < 0; ++i) {
    if (shape_.kinds[i] != IterKind::kSpatial) continue;
    if (spatial++ == axis_) iter_index = int(i);
  }
  return sch_.PadAxis(block_, iter_index, lanes_);
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

// Each spatial loop split into spatial_levels tiles (the vector axis into
// whole vectors first, the stride classes off first), each reduction loop
// into reduce_levels.
Status ReductionTiler::SplitLoops() {
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
      max_inner = config_.max_vector_register_tile;
    } else if (i == axis_) {
      max_inner = config_.max_vector_lanes;
    }
    // An axis along which no input is reused (a depthwise convolution's
    // channels: each channel reads its own plane and its own weights) is
    // tiled only outside the first reduction level. In the register tile it
    // would add accumulators that share no loaded value with each other:
    // DEP's fast kernels (184+ GFLOP/s) kept channels out of those levels in
    // 19 of 20 runs, its slow ones (158 or less) in 5 of 22.
    const int inner_units = (config_.register_tile_needs_reuse && i != axis_ && !shape_.reused[i] &&
                             config_.spatial_levels > 2) ? config_.spatial_levels - 2 : 0;
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f,
                        sch_.SamplePerfectTile(loop, config_.spatial_levels - inner_units,
                                               inner_units > 0 ? shape_.spatial_extents[i] : max_inner));
    std::vector<Factor> factors(f.begin(), f.end());
    factors.insert(factors.end(), size_t(inner_units), Factor(int64_t(1)));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(loop, factors));
    for (size_t l = 0; l < parts.size(); ++l) s_levels_[l].push_back(parts[l]);
    if (i == axis_ && !forced_lanes_) vector_loop_ = parts.back();
  }
  for (LoopRV r : reduce_) {
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch_.SamplePerfectTile(r, config_.reduce_levels, config_.max_reduce_inner_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(r, std::vector<Factor>(f.begin(), f.end())));
    for (size_t l = 0; l < parts.size(); ++l) r_levels_[l].push_back(parts[l]);
  }
  return Status::OK();
}

// SSRSRS: S0 S1 R0 S2 R1 S3 (with more levels, the extra ones interleave the
// same way), then the vector loop innermost; the stride classes, if split
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
  TF_RETURN_IF_ERROR(sch_.Reorder(order));
  outer_ = s_levels_[0][0];
  if (s_levels_[0].size() > 1) {
    TF_ASSIGN_OR_RETURN(outer_, sch_.Fuse(s_levels_[0]));
  }
  TF_RETURN_IF_ERROR(sch_.Parallel(outer_));
  TF_ASSIGN_OR_RETURN(int64_t vector_extent, sch_.LoopExtent(vector_loop_));
  if (vector_extent > 1) TF_RETURN_IF_ERROR(sch_.Vectorize(vector_loop_));
  return Status::OK();
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

Status ReductionTiler::PlaceCopies(std::vector<std::string>* placed) {
  for (const PackedCopy& p : packed_) TF_RETURN_IF_ERROR(PlaceCopy(p, placed));
  return Status::OK();
}

// A packed or padded copy: once for the whole call, or per parallel task
// (only the panels or rows the task reads, while they are hot in its cache).
Status ReductionTiler::PlaceCopy(const PackedCopy& p, std::vector<std::string>* placed) {
  TF_ASSIGN_OR_RETURN(std::string copy_name, sch_.BlockName(p.copy));
  placed->push_back(copy_name);
  bool at_root = true;
  if (p.per_task) {
    at_root = false;
  } else if (!p.ahead) {
    TF_ASSIGN_OR_RETURN(ValueRV where, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
    at_root = sch_.Get(where) == 0;
  }
  if (!at_root) {
    std::optional<LoopRV> slice;
    if (p.dim < 0) slice = PaddedSliceLoop(p.read_index);
    Status moved = sch_.ComputeAt(p.copy, slice ? *slice : outer_);
    if (!moved.ok() && slice) moved = sch_.ComputeAt(p.copy, outer_);
    // A padded copy whose region per task cannot be bounded (T2D's
    // (h + 1 - r') / 2 rows) stays at the root; compute_at changed nothing.
    if (!moved.ok() && !p.padded) return moved;
    at_root = !moved.ok();
  }
  if (p.dim >= 0) TF_RETURN_IF_ERROR(sch_.PackLayout(p.copy, p.dim, lanes_, p.outer_position));
  // After compute_at: the region a task copies is found on the plain layout.
  if (p.phase_dim >= 0) TF_RETURN_IF_ERROR(sch_.SplitPhases(p.copy, p.phase_dim, p.phase_stride));
  // A copy not re-laid out (padded, or of an input a padded axis reads)
  // writes whole rows: one vector each (the guard becomes a masked load),
  // not an element at a time.
  if (p.dim < 0) {
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch_.GetLoops(p.copy));
    TF_ASSIGN_OR_RETURN(int64_t row, sch_.LoopExtent(copy_loops.back()));
    if (row > 1 && row <= config_.max_vector_lanes) TF_RETURN_IF_ERROR(sch_.Vectorize(copy_loops.back()));
  }
  // A copy made once for the whole call is a loop nest of its own before the
  // kernel's: without this it would run on one thread (a transposed
  // convolution's 8 MiB of weights, a 1024x1024 matmul's B). Of a constant
  // input, it is made once ahead of the calls instead.
  if (!at_root) return Status::OK();
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch_.GetLoops(p.copy));
  if (copy_loops.empty()) return Status::OK();
  // A row copy's leading loops (batch 1, channels) are fused so that every
  // core gets rows to copy; the innermost row stays one loop.
  if (p.dim < 0 && copy_loops.size() < 2) return Status::OK();
  if (p.dim < 0 && copy_loops.size() > 2) {
    TF_ASSIGN_OR_RETURN(LoopRV fused, sch_.Fuse({copy_loops.begin(), copy_loops.end() - 1}));
    copy_loops = {fused};
  }
  TF_ASSIGN_OR_RETURN(int64_t copy_outer_extent, sch_.LoopExtent(copy_loops[0]));
  if (copy_outer_extent > 1) TF_RETURN_IF_ERROR(sch_.Parallel(copy_loops[0]));
  return Status::OK();
}

// Where a padded copy made per parallel task goes: the level-1 loop of the
// last of the leading spatial axes the input is indexed by directly (a
// depthwise convolution's c_1, after n_1), or none. Why: a task of 64
// channels that pads all 64 planes before it reads any has them out of L1
// by then; padded per channel, each plane is read while hot. DEP's padded
// 28-lane kernels ran 80 GFLOP/s with 4 or 8 channel tiles of 64 or 32
// channels and 150 with 256 tiles of one channel (the same copy per task).
// Level 1 is the outermost loop under the parallel one.
std::optional<LoopRV> ReductionTiler::PaddedSliceLoop(int read_index) const {
  if (read_index < 0 || size_t(read_index) >= shape_.direct.size() || s_levels_.size() < 3) return std::nullopt;
  const std::vector<bool>& direct = shape_.direct[size_t(read_index)];
  std::optional<LoopRV> slice;
  for (size_t a = 0; a < direct.size() && a < s_levels_[1].size() && direct[a]; ++a) slice = s_levels_[1][a];
  return slice;
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

}  // namespace

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
