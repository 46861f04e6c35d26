// The state of one reduction being tiled by the CPU sketch's rule 2, shared
// by the tiling steps (sketch_cpu_tiling.cpp) and the input-copy steps
// (sketch_cpu_inputs.cpp). Internal to the CPU rules; TileReduction
// (sketch_cpu_tiling.h) is the entry point.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sketch_cpu_analysis.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

// A copy of an input the tile reads instead of the input: packed into
// vector-wide panels along the vector axis, or zero-padded, or both, or a
// plain copy a padded axis grows or a stride splits into phases.
struct PackedCopy {
  BlockRV copy;
  int dim;  // packed along this dimension; -1: not packed
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
  ReductionTiler(Schedule& sch, const CpuSketchConfig& config, const sketch_analysis::BlockInfo& info)
      : sch_(sch), config_(config), info_(info), shape_(sketch_analysis::DescribeReduction(info.block, info.store)),
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
  Status SampleDotProduct();    // sketch_cpu_dot.cpp: sdot, smmla or neither
  Status AnnotateDotProduct();  // sketch_cpu_dot.cpp
  Status PackDotSteps(const PackedCopy& p);  // sketch_cpu_dot.cpp
  int InnerUnits(size_t axis) const;
  Result<std::vector<int64_t>> RegisterTileFloors() const;
  Status OrderLoops();
  Status SampleUnroll();
  Status PlaceEpilogue(std::vector<std::string>* placed);
  Status PlaceCopies(std::vector<std::string>* placed);

 private:
  Status PlaceCopy(const PackedCopy& p, std::vector<std::string>* placed);
  Result<bool> VectorizePhaseCopy(const PackedCopy& p);
  Status CopyAxisInputs();
  bool PadFits(size_t axis) const;
  std::vector<int64_t> PadMultiples(size_t axis) const;
  std::optional<LoopRV> PaddedSliceLoop(int read_index) const;
  std::vector<double> UnrollWeights() const;
  Result<bool> MatrixMultiplyFits(size_t* row_axis) const;  // sketch_cpu_dot.cpp
  Status SplitMatrixMultiply(size_t row_axis);            // sketch_cpu_dot.cpp

  Schedule& sch_;
  const CpuSketchConfig& config_;
  const sketch_analysis::BlockInfo& info_;
  const sketch_analysis::ReductionShape shape_;
  const int64_t lanes_;
  const size_t n_spatial_;
  BlockRV block_;
  size_t axis_ = 0;             // the vector axis (a spatial axis index)
  bool forced_lanes_ = false;   // split into whole vectors: its extent is a multiple of the vector, or padded to one
  int64_t pad_multiple_ = 0;    // padded up to a multiple of this (pad_axis), a multiple of the vector; 0: not padded
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
  std::optional<LoopRV> dot_loop_;  // the reduction split off by 4 for dot products (8 for smmla), innermost
  // For smmla: the 2 rows and 2 columns of the tile, between vector_loop_
  // (then 2 pairs of columns, not vectorized) and dot_loop_; else empty.
  std::vector<LoopRV> mmla_tile_;
  LoopRV outer_;  // the fused, parallel outermost loop
};

}  // namespace tunefarm::tuner
