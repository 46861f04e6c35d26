// The input-copy steps of the CPU sketch's reduction tiling (rule 2,
// sketch_cpu_tiling.cpp runs them in order): padded copies of guarded
// inputs, panels of inputs strided along the vector axis, copies a padded
// axis reads past their ends, stride phases, and where each copy is made.
#include <algorithm>
#include <optional>
#include <vector>

#include "sketch_cpu_tiler.h"

namespace tunefarm::tuner {

using namespace ir;
using namespace sketch_analysis;

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
      if (pad_multiple_ == 0) {
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
  if (pad_multiple_ > 0) TF_RETURN_IF_ERROR(CopyAxisInputs());
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
// since the copy costs a pass over the input (phase after phase, a vector
// at a time: VectorizePhaseCopy). A copy packed into panels is left as it
// is.
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
  if (p.dim >= 0) {
    TF_RETURN_IF_ERROR(sch_.PackLayout(p.copy, p.dim, lanes_, p.outer_position));
    TF_RETURN_IF_ERROR(PackDotSteps(p));
  }
  // After compute_at: the region a task copies is found on the plain layout.
  bool vectorized = false;
  if (p.phase_dim >= 0) {
    TF_RETURN_IF_ERROR(sch_.SplitPhases(p.copy, p.phase_dim, p.phase_stride));
    TF_ASSIGN_OR_RETURN(vectorized, VectorizePhaseCopy(p));
  }
  // A copy not re-laid out (padded, or of an input a padded axis reads)
  // writes whole rows: one vector each (the guard becomes a masked load),
  // not an element at a time.
  if (p.dim < 0 && !vectorized) {
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

// A copy split into its stride phases along its innermost dimension writes
// phase after phase, each a contiguous row of the phase, vectorized: the
// copy's innermost loop x = S * x' + q becomes q outside x', and each vector
// of x' is one deinterleaved load of the input and one whole store. Why: the
// copy loop as it was walked x, storing one element to every other slot --
// MobileNet-V2's stride-2 depthwise kernels that read such a copy took 125
// us, against 41 for the best without it (docs/tuning-benchmarks.md).
// Returns whether it vectorized the copy; a copy split along another
// dimension is left as it was.
Result<bool> ReductionTiler::VectorizePhaseCopy(const PackedCopy& p) {
  TF_ASSIGN_OR_RETURN(std::string copy_name, sch_.BlockName(p.copy));
  size_t rank = 0;
  for (const BlockInfo& b : Analyze(sch_.func())) {
    if (b.block->name == copy_name && b.store) rank = b.store->buffer->shape.size();
  }
  // After split_phases the innermost dimension [.., S, E / S] was E's alone.
  if (rank < 2 || size_t(p.phase_dim) + 2 != rank) return false;
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch_.GetLoops(p.copy));
  if (loops.empty()) return false;
  TF_ASSIGN_OR_RETURN(int64_t extent, sch_.LoopExtent(loops.back()));
  if (extent < 2 * p.phase_stride) return false;
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(loops.back(), {-1, p.phase_stride}));
  TF_RETURN_IF_ERROR(sch_.Reorder({parts[1], parts[0]}));
  LoopRV row = parts[0];
  TF_ASSIGN_OR_RETURN(int64_t row_extent, sch_.LoopExtent(row));
  // A phase's row longer than a vector loop may be (a 224-wide image padded
  // to 225: 113) is copied a vector at a time.
  if (row_extent > config_.max_vector_lanes) {
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> vectors, sch_.Split(row, {-1, lanes_}));
    row = vectors[1];
  }
  TF_RETURN_IF_ERROR(sch_.Vectorize(row));
  return true;
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

}  // namespace tunefarm::tuner
