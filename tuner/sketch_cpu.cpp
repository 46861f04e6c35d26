// The CPU sketch rules, in the order Ansor applies them, consumers first:
//   1. inline element-wise producers of intermediate tensors (padding, bias);
//   2. multi-level tiling (SSRSRS) of reductions with spatial loops: an outer
//      fused parallel loop, a local accumulator (or the fusible element-wise
//      consumer) placed at a sampled tile level, the innermost spatial tile
//      vectorized and an auto-unroll step sampled; a spatial axis along which
//      no input is reused (a depthwise convolution's channels) is tiled only
//      outside the reduction tiles; an input read under padding guards is
//      read from a zero-padded copy or not, a sampled choice (a copy made per
//      task is made slice by slice: a depthwise convolution's per channel);
//      an axis read modulo a stride (a transposed convolution's output rows)
//      may be split into its stride classes, one class at a time per task;
//   2a. rfactor of reductions with few outputs and a long reduction: partial
//      sums one per vector lane (vectorized) or one per parallel task;
//   3. every other block: spatial loops fused, parallel outside, vectorized inside.
// What the rules read off the IR first (blocks, consumers, a reduction's
// shape) is in sketch_cpu_analysis.h.
#include <algorithm>
#include <map>
#include <set>

#include "sketch_cpu_analysis.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

using namespace ir;
using namespace sketch_analysis;

namespace {

class CpuSketchPolicy : public SketchPolicy {
 public:
  explicit CpuSketchPolicy(CpuSketchConfig config) : config_(std::move(config)) {}

  Status Apply(Schedule& sch) const override {
    std::vector<BlockInfo> blocks = Analyze(sch.func());
    std::set<std::string> handled;
    // Rule 1: inline element-wise producers of intermediates.
    if (config_.inline_elementwise) {
      // Names first: each inlining rebuilds (and frees) the blocks it touches.
      std::vector<std::string> inline_names;
      for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
        const BlockInfo& info = *it;
        if (info.reduction || !info.store || IsParam(sch.func(), info.store->buffer.get())) continue;
        if (StoresAtIterVars(info.block, info.store)) inline_names.push_back(info.block->name);
      }
      for (const std::string& name : inline_names) {
        TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(name));
        // An illegal inlining leaves the schedule unchanged: keep the block.
        if (sch.ComputeInline(b).ok()) handled.insert(name);
      }
      blocks = Analyze(sch.func());
    }
    // Rule 2: tile reductions that have spatial loops. Every rewrite frees
    // the old tree, so blocks are looked up afresh by name each time.
    std::vector<std::string> reductions;
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      if (it->reduction) reductions.push_back(it->block->name);
    }
    for (const std::string& name : reductions) {
      if (handled.count(name)) continue;
      blocks = Analyze(sch.func());
      auto found = std::find_if(blocks.begin(), blocks.end(), [&](const BlockInfo& b) { return b.block->name == name; });
      if (found == blocks.end()) continue;
      const BlockInfo& info = *found;
      size_t spatial = 0;
      int64_t outputs = 1, reduced = 1;
      for (const IterVar& iv : info.block->iter_vars) {
        spatial += iv.kind == IterKind::kSpatial;
        (iv.kind == IterKind::kSpatial ? outputs : reduced) *= iv.extent;
      }
      // Rule 2a: few outputs, a long reduction: factor it into partial sums.
      if (outputs <= config_.rfactor_max_spatial && reduced >= config_.rfactor_min_reduction) {
        TF_ASSIGN_OR_RETURN(std::string rf_name, FactorReduction(sch, name, spatial, reduced));
        handled.insert(rf_name);
        continue;  // the original block, now reducing partials, is left to rule 3
      }
      if (spatial == 0) continue;
      // A single element-wise consumer reading the result in place is fused into the tile.
      std::string fused_consumer;
      if (info.consumers.size() == 1 && !IsParam(sch.func(), info.store->buffer.get())) {
        for (const BlockInfo& c : blocks) {
          if (c.block->name == info.consumers[0] && !c.reduction && StoresAtIterVars(c.block, c.store) &&
              ReadsAtIterVars(c.block, info.store->buffer.get()) && !handled.count(c.block->name)) {
            fused_consumer = c.block->name;
          }
        }
      }
      std::vector<std::string> placed;
      TF_RETURN_IF_ERROR(TileReduction(sch, info, fused_consumer, &placed));
      handled.insert(name);
      handled.insert(placed.begin(), placed.end());
    }
    // Rule 3: everything else.
    for (const std::string& name : sch.BlockNames()) {
      if (handled.count(name)) continue;
      TF_RETURN_IF_ERROR(ParallelizeAndVectorize(sch, name));
    }
    return Status::OK();
  }

 private:
  // Where a padded copy made per parallel task goes: the level-1 loop of the
  // last of the leading spatial axes the input is indexed by directly (a
  // depthwise convolution's c_1, after n_1), or none. Why: a task of 64
  // channels that pads all 64 planes before it reads any has them out of L1
  // by then; padded per channel, each plane is read while hot. DEP's padded
  // 28-lane kernels ran 80 GFLOP/s with 4 or 8 channel tiles of 64 or 32
  // channels and 150 with 256 tiles of one channel (the same copy per task).
  // Level 1 is the outermost loop under the parallel one.
  std::optional<LoopRV> PaddedSliceLoop(const ReductionShape& shape, int read_index,
                                        const std::vector<std::vector<LoopRV>>& s_levels) const {
    if (read_index < 0 || size_t(read_index) >= shape.direct.size() || s_levels.size() < 3) return std::nullopt;
    const std::vector<bool>& direct = shape.direct[size_t(read_index)];
    std::optional<LoopRV> slice;
    for (size_t a = 0; a < direct.size() && a < s_levels[1].size() && direct[a]; ++a) slice = s_levels[1][a];
    return slice;
  }

  // Tiles one reduction (SSRSRS); `placed` receives the blocks this placed
  // too (the fused consumer or the accumulator's write-back, packed copies).
  //
  // The vector axis is sampled among the spatial axes whose extent is a
  // multiple of the native vector (16 f32 lanes) and the innermost one: a
  // non-innermost choice (output channels of an NCHW conv, say) packs every
  // input it indexes with a stride into 16-wide panels and keeps the
  // accumulator tile axis-innermost, so every load, FMA and store is a whole
  // vector; the innermost choice keeps the plain layouts.
  Status TileReduction(Schedule& sch, const BlockInfo& info, const std::string& fused_consumer,
                       std::vector<std::string>* placed) const {
    const ReductionShape shape = DescribeReduction(info.block, info.store);
    const int64_t lanes = config_.vector_lanes;
    size_t n_spatial = shape.spatial_extents.size();
    std::vector<int64_t> axis_choices;  // spatial axis indices
    for (size_t a = 0; a < n_spatial; ++a) {
      if (a + 1 == n_spatial || (shape.spatial_extents[a] % lanes == 0 && shape.stores_at_iter_vars)) {
        axis_choices.push_back(int64_t(a));
      }
    }
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(info.block->name));
    TF_ASSIGN_OR_RETURN(ValueRV axis_rv, sch.SampleCategorical(axis_choices, std::vector<double>(axis_choices.size(), 1.0)));
    const size_t axis = size_t(sch.Get(axis_rv));
    const bool forced_lanes = shape.spatial_extents[axis] % lanes == 0;
    const bool axis_innermost = axis + 1 == n_spatial;

    // Inputs indexed with a stride along the vector axis get a packed copy.
    // A constant input (weights) read along it in rows may be copied into
    // panels [.., rows/lanes, .., lanes] too: the copy is made once, ahead of
    // the calls (split_prepack.h), and the kernel then walks its reduction
    // through 64-byte steps instead of whole rows (a 1024-wide matmul's B).
    struct PackedCopy {
      BlockRV copy;
      int dim;  // packed along this dimension; -1: a padded copy, not packed
      int outer_position;
      bool ahead;   // of a constant input: at the root, made ahead of the calls
      bool padded;  // made by pad_input
      bool per_task = false;  // a padded copy always computed per parallel task
      int read_index = -1;    // of a padded copy: the input it pads
    };
    std::vector<PackedCopy> packed;
    // Inputs read under padding guards (a convolution's): a zero-padded copy,
    // so that the guards leave the inner loops for one extra pass over the
    // input, or the guards kept; a sampled choice per input. The copy may be
    // made once before the kernel only where that pass is cheap against the
    // work (pad_root_min_reuse reads per element); else per task. A padded
    // input the vector axis strides through is packed in its padded copy.
    std::map<int, BlockRV> padded;  // read index -> its padded copy
    std::set<int> pad_per_task;     // read indices whose copy is made per task only
    bool keeps_guards = false;  // some input is still read under its padding guards
    for (size_t r = 0; r < shape.read_constant.size(); ++r) {
      if (shape.read_constant[r] || !sch.CanPadInput(block, int(r))) continue;
      if (!config_.pad_inputs) {
        keeps_guards = true;
        continue;
      }
      TF_ASSIGN_OR_RETURN(ValueRV pad, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
      if (sch.Get(pad) == 0) {
        keeps_guards = true;
        continue;
      }
      TF_ASSIGN_OR_RETURN(padded[int(r)], sch.PadInput(block, int(r)));
      const int64_t reads_per_element = shape.iterations / std::max<int64_t>(1, shape.read_elements[r]);
      if (reads_per_element < config_.pad_root_min_reuse) pad_per_task.insert(int(r));
    }
    if (forced_lanes) {
      for (const auto& [read_index, dim] : shape.strided_inputs[axis]) {
        auto pad = padded.find(read_index);
        const bool from_pad = pad != padded.end();
        BlockRV copy;
        if (from_pad) {
          copy = pad->second;
          padded.erase(pad);
        } else {
          TF_ASSIGN_OR_RETURN(copy, sch.CacheRead(block, read_index, MemoryScope::kGlobal));
        }
        // A constant input's copy is made ahead of the calls: always at the root.
        packed.push_back({copy, dim, dim, shape.read_constant[size_t(read_index)], from_pad,
                          from_pad && pad_per_task.count(read_index) > 0});
      }
      for (const auto& [read_index, dim] : shape.constant_rows[axis]) {
        TF_ASSIGN_OR_RETURN(ValueRV panel, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
        if (sch.Get(panel) == 0) continue;
        TF_ASSIGN_OR_RETURN(BlockRV copy, sch.CacheRead(block, read_index, MemoryScope::kGlobal));
        packed.push_back({copy, dim, 0, true, false});
      }
    }
    for (const auto& [read_index, copy] : padded) {
      packed.push_back({copy, -1, 0, false, true, pad_per_task.count(read_index) > 0, read_index});
    }
    BlockRV epilogue;
    bool have_epilogue = false;
    if (!fused_consumer.empty()) {
      TF_ASSIGN_OR_RETURN(epilogue, sch.GetBlock(fused_consumer));
      have_epilogue = true;
    } else if (config_.cache_write) {
      TF_ASSIGN_OR_RETURN(epilogue, sch.CacheWrite(block, MemoryScope::kLocal));
      have_epilogue = true;
    }
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
    // Default nests list spatial loops first, then reduction loops.
    std::vector<LoopRV> spatial, reduce;
    for (size_t i = 0; i < shape.kinds.size() && i < loops.size(); ++i) {
      (shape.kinds[i] == IterKind::kSpatial ? spatial : reduce).push_back(loops[i]);
    }
    std::vector<std::vector<LoopRV>> s_levels(size_t(config_.spatial_levels)), r_levels(size_t(config_.reduce_levels));
    // Stride classes first in each task, or interleaved in the tiles: sampled.
    // Why: T2D's register tile of 8 x 2 outputs (both parities of h and w)
    // reads 4 weight vectors per input channel and tap, one per class, each
    // feeding 4 FMAs; a tile of one class reads one, feeding all of them
    // (a 300-trial best kernel hand-edited to one class per tile: 102 -> 110
    // GFLOP/s at 1 thread, oneDNN 126; docs/tuning-benchmarks.md).
    bool classes_outer = false;
    if (config_.stride_classes_outer) {
      bool any = false;
      for (size_t a = 0; a < n_spatial; ++a) any = any || (a != axis && shape.class_stride[a] > 1);
      if (any) {
        TF_ASSIGN_OR_RETURN(ValueRV classes, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
        classes_outer = sch.Get(classes) == 1;
      }
    }
    std::vector<LoopRV> class_loops;
    LoopRV vector_loop;
    for (size_t i = 0; i < spatial.size(); ++i) {
      LoopRV loop = spatial[i];
      if (classes_outer && i != axis && shape.class_stride[i] > 1) {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> by_class, sch.Split(loop, {-1, shape.class_stride[i]}));
        loop = by_class[0];
        class_loops.push_back(by_class[1]);
      }
      int64_t max_inner = config_.max_inner_tile;
      if (i == axis && forced_lanes) {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> halves, sch.Split(loop, {-1, lanes}));
        loop = halves[0];
        vector_loop = halves[1];
        max_inner = config_.max_vector_register_tile;
      } else if (i == axis) {
        max_inner = config_.max_vector_lanes;
      }
      // An axis along which no input is reused (a depthwise convolution's
      // channels: each channel reads its own plane and its own weights) is
      // tiled only outside the first reduction level. In the register tile
      // it would add accumulators that share no loaded value with each
      // other: DEP's fast kernels (184+ GFLOP/s) kept channels out of those
      // levels in 19 of 20 runs, its slow ones (158 or less) in 5 of 22.
      const int inner_units = (config_.register_tile_needs_reuse && i != axis && !shape.reused[i] &&
                               config_.spatial_levels > 2) ? config_.spatial_levels - 2 : 0;
      TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f,
                          sch.SamplePerfectTile(loop, config_.spatial_levels - inner_units,
                                                inner_units > 0 ? shape.spatial_extents[i] : max_inner));
      std::vector<Factor> factors(f.begin(), f.end());
      factors.insert(factors.end(), size_t(inner_units), Factor(int64_t(1)));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(loop, factors));
      for (size_t l = 0; l < parts.size(); ++l) s_levels[l].push_back(parts[l]);
      if (i == axis && !forced_lanes) vector_loop = parts.back();
    }
    for (LoopRV r : reduce) {
      TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch.SamplePerfectTile(r, config_.reduce_levels, config_.max_reduce_inner_tile));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(r, std::vector<Factor>(f.begin(), f.end())));
      for (size_t l = 0; l < parts.size(); ++l) r_levels[l].push_back(parts[l]);
    }
    // SSRSRS: S0 S1 R0 S2 R1 S3 (with more levels, the extra ones interleave
    // the same way), then the vector loop innermost; the stride classes, if
    // split off, between S0 (the parallel loop) and S1.
    std::vector<LoopRV> order;
    size_t ri = 0;
    for (size_t l = 0; l < s_levels.size(); ++l) {
      for (LoopRV x : s_levels[l]) {
        if (x.id != vector_loop.id) order.push_back(x);
      }
      if (l == 0) order.insert(order.end(), class_loops.begin(), class_loops.end());
      if (l >= 1 && ri < r_levels.size()) {
        order.insert(order.end(), r_levels[ri].begin(), r_levels[ri].end());
        ++ri;
      }
    }
    order.push_back(vector_loop);
    TF_RETURN_IF_ERROR(sch.Reorder(order));
    LoopRV outer = s_levels[0][0];
    if (s_levels[0].size() > 1) {
      TF_ASSIGN_OR_RETURN(outer, sch.Fuse(s_levels[0]));
    }
    TF_RETURN_IF_ERROR(sch.Parallel(outer));
    TF_ASSIGN_OR_RETURN(int64_t vector_extent, sch.LoopExtent(vector_loop));
    if (vector_extent > 1) TF_RETURN_IF_ERROR(sch.Vectorize(vector_loop));
    TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical(config_.unroll_steps, UnrollWeights(keeps_guards)));
    if (sch.Get(unroll) > 0) TF_RETURN_IF_ERROR(sch.Annotate(outer, "pragma_auto_unroll_max_step", sch.Get(unroll)));
    if (have_epilogue) {
      TF_ASSIGN_OR_RETURN(std::string epilogue_name, sch.BlockName(epilogue));
      placed->push_back(epilogue_name);
      // The accumulator tile lives under the parallel loop or one level
      // deeper; under the parallel loop only when a class loop is between
      // them: one class's outputs are no box, and the write-back copies
      // the box around what its loop wrote.
      LoopRV at = outer;
      if (class_loops.empty()) {
        TF_ASSIGN_OR_RETURN(ValueRV level, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
        if (sch.Get(level) == 1) at = s_levels[1].back();
      }
      TF_RETURN_IF_ERROR(sch.ReverseComputeAt(epilogue, at));
      // Axis-innermost accumulator: one whole vector register per accumulator.
      if (forced_lanes && !axis_innermost) TF_RETURN_IF_ERROR(sch.PackLayout(block, int(axis), lanes, int(axis)));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> e_loops, sch.GetLoops(epilogue));
      TF_ASSIGN_OR_RETURN(int64_t e_lanes, sch.LoopExtent(e_loops.back()));
      if (e_lanes > 1 && e_lanes <= config_.max_vector_lanes) TF_RETURN_IF_ERROR(sch.Vectorize(e_loops.back()));
    }
    // Packed and padded copies: once for the whole call, or per parallel task
    // (only the panels or rows the task reads, while they are hot in its cache).
    for (const PackedCopy& p : packed) {
      TF_ASSIGN_OR_RETURN(std::string copy_name, sch.BlockName(p.copy));
      placed->push_back(copy_name);
      bool at_root = true;
      if (p.per_task) {
        at_root = false;
      } else if (!p.ahead) {
        TF_ASSIGN_OR_RETURN(ValueRV where, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
        at_root = sch.Get(where) == 0;
      }
      if (!at_root) {
        std::optional<LoopRV> slice;
        if (p.padded && p.dim < 0) slice = PaddedSliceLoop(shape, p.read_index, s_levels);
        Status moved = sch.ComputeAt(p.copy, slice ? *slice : outer);
        if (!moved.ok() && slice) moved = sch.ComputeAt(p.copy, outer);
        // A padded copy whose region per task cannot be bounded (T2D's
        // (h + 1 - r') / 2 rows) stays at the root; compute_at changed nothing.
        if (!moved.ok() && !p.padded) return moved;
        at_root = !moved.ok();
      }
      if (p.dim >= 0) TF_RETURN_IF_ERROR(sch.PackLayout(p.copy, p.dim, lanes, p.outer_position));
      // A padded copy not re-laid out writes whole rows: one vector each
      // (the guard becomes a masked load), not an element at a time.
      if (p.padded && p.dim < 0) {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch.GetLoops(p.copy));
        TF_ASSIGN_OR_RETURN(int64_t row, sch.LoopExtent(copy_loops.back()));
        if (row > 1 && row <= config_.max_vector_lanes) TF_RETURN_IF_ERROR(sch.Vectorize(copy_loops.back()));
      }
      // A copy made once for the whole call is a loop nest of its own before
      // the kernel's: without this it would run on one thread (a transposed
      // convolution's 8 MiB of weights, a 1024x1024 matmul's B). Of a
      // constant input, it is made once ahead of the calls instead.
      if (at_root) {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch.GetLoops(p.copy));
        if (copy_loops.empty()) continue;
        // A padded copy's leading loops (batch 1, channels) are fused so that
        // every core gets rows to pad; the innermost row stays one loop.
        if (p.padded && copy_loops.size() < 2) continue;
        if (p.padded && copy_loops.size() > 2) {
          TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({copy_loops.begin(), copy_loops.end() - 1}));
          copy_loops = {fused};
        }
        TF_ASSIGN_OR_RETURN(int64_t copy_outer_extent, sch.LoopExtent(copy_loops[0]));
        if (copy_outer_extent > 1) TF_RETURN_IF_ERROR(sch.Parallel(copy_loops[0]));
      }
    }
    return Status::OK();
  }

  // Rule 2a. The reduction loops are fused and split; one part becomes a
  // spatial loop of a new "<name>_rf" block holding partial results:
  //   vector mode: the inner `vector_lanes` part, vectorized (one partial per
  //     lane breaks the chain of dependent adds into whole-vector adds);
  //   task mode: the outer part, moved outermost and parallel (one partial
  //     per task).
  // Returns the rf block's name.
  Result<std::string> FactorReduction(Schedule& sch, const std::string& name, size_t n_spatial,
                                      int64_t reduced) const {
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
    if (loops.size() <= n_spatial) return Status::FailedPrecondition("no reduction loop to factor in '" + name + "'");
    std::vector<LoopRV> reduce(loops.begin() + long(n_spatial), loops.end());
    LoopRV r = reduce[0];
    if (reduce.size() > 1) {
      TF_ASSIGN_OR_RETURN(r, sch.Fuse(reduce));
    }
    const int64_t lanes = config_.vector_lanes;
    std::vector<int64_t> modes = {1};  // task mode always applies
    if (reduced % lanes == 0) modes.push_back(0);
    TF_ASSIGN_OR_RETURN(ValueRV mode_rv, sch.SampleCategorical(modes, std::vector<double>(modes.size(), 1.0)));
    if (sch.Get(mode_rv) == 0) {
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(r, {-1, lanes}));
      TF_ASSIGN_OR_RETURN(BlockRV rf, sch.RFactor(parts[1], 0));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> rf_loops, sch.GetLoops(rf));
      TF_RETURN_IF_ERROR(sch.Vectorize(rf_loops.back()));
      return sch.BlockName(rf);
    }
    // Task mode: enough tasks for every core, each summing a long stretch.
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch.SamplePerfectTile(r, 2, std::max<int64_t>(1, reduced / 2)));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(r, std::vector<Factor>(f.begin(), f.end())));
    TF_ASSIGN_OR_RETURN(BlockRV rf, sch.RFactor(parts[0], 0));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> rf_loops, sch.GetLoops(rf));
    // rf loops: the original spatial loops, the factored loop, the rest.
    std::vector<LoopRV> order = {rf_loops[n_spatial]};
    for (size_t i = 0; i < rf_loops.size(); ++i) {
      if (i != n_spatial) order.push_back(rf_loops[i]);
    }
    TF_RETURN_IF_ERROR(sch.Reorder(order));
    TF_RETURN_IF_ERROR(sch.Parallel(rf_loops[n_spatial]));
    return sch.BlockName(rf);
  }

  Status ParallelizeAndVectorize(Schedule& sch, const std::string& name) const {
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
    const Block* b = nullptr;
    PostOrderVisit(sch.func().body, [&](const IRNode* n) {
      if (n->kind == IRNodeKind::kBlock && static_cast<const Block*>(n)->name == name) b = static_cast<const Block*>(n);
    });
    size_t spatial = 0;
    for (const IterVar& iv : b->iter_vars) spatial += iv.kind == IterKind::kSpatial;
    if (spatial == 0 || loops.size() < spatial) return Status::OK();
    std::vector<LoopRV> s(loops.begin(), loops.begin() + long(spatial));
    LoopRV fused = s[0];
    if (s.size() > 1) {
      TF_ASSIGN_OR_RETURN(fused, sch.Fuse(s));
    }
    bool reduction = b->init.defined();
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch.SamplePerfectTile(fused, 2, reduction ? 1 : config_.max_vector_lanes));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, std::vector<Factor>(f.begin(), f.end())));
    TF_RETURN_IF_ERROR(sch.Parallel(parts[0]));
    TF_ASSIGN_OR_RETURN(int64_t lanes, sch.LoopExtent(parts[1]));
    if (!reduction && lanes > 1) TF_RETURN_IF_ERROR(sch.Vectorize(parts[1]));
    return Status::OK();
  }

  // Weights of unroll_steps: all alike, except that a kernel keeping its
  // padding guards leaves out the depths below guarded_unroll_min_step
  // (all alike again if that leaves none). Weights rather than a shorter
  // list, so that a decision keeps its index: an older record's deep unroll
  // is still a hint its replay follows, and only a guarded kernel's shallow
  // one is drawn anew.
  std::vector<double> UnrollWeights(bool keeps_guards) const {
    std::vector<double> weights(config_.unroll_steps.size(), 1.0);
    if (!keeps_guards) return weights;
    bool any = false;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (config_.unroll_steps[i] < config_.guarded_unroll_min_step) weights[i] = 0.0;
      any = any || weights[i] > 0;
    }
    if (!any) std::fill(weights.begin(), weights.end(), 1.0);
    return weights;
  }

  CpuSketchConfig config_;
};

}  // namespace

std::unique_ptr<SketchPolicy> MakeCpuSketchPolicy(CpuSketchConfig config) {
  return std::make_unique<CpuSketchPolicy>(std::move(config));
}

}  // namespace tunefarm::tuner
