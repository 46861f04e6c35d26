// Rule 2 of the CPU sketch (sketch_cpu.cpp): multi-level tiling (SSRSRS) of
// one reduction with spatial loops. Internal to the CPU rules.
#pragma once

#include <string>
#include <vector>

#include "sketch_cpu_analysis.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

// Tiles the reduction `info` names; `placed` receives the blocks this placed
// too (the fused consumer or the accumulator's write-back, packed and padded
// copies). `fused_consumer`: an element-wise consumer to fuse into the tile
// instead of a local accumulator (empty: none).
//
// The vector axis is sampled among the spatial axes whose extent is a
// multiple of the native vector (16 f32 lanes), the innermost one, and the
// axes padding fits (below): a
// non-innermost choice (output channels of an NCHW conv, say) packs every
// input it indexes with a stride into 16-wide panels and keeps the
// accumulator tile axis-innermost, so every load, FMA and store is a whole
// vector; the innermost choice keeps the plain layouts. An axis whose extent
// is not a multiple of the vector may be padded up to one (pad_axis): the
// accumulator and the copies of its inputs hold the padding, and only the
// valid part is stored (CpuSketchConfig::pad_vector_axis).
Status TileReduction(Schedule& sch, const CpuSketchConfig& config, const sketch_analysis::BlockInfo& info,
                     const std::string& fused_consumer, std::vector<std::string>* placed);

}  // namespace tunefarm::tuner
