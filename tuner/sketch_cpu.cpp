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
// shape) is in sketch_cpu_analysis.h; rule 2's tiling in sketch_cpu_tiling.h.
#include <algorithm>
#include <map>
#include <set>

#include "sketch_cpu_analysis.h"
#include "sketch_cpu_tiling.h"
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
    std::set<std::string> handled;  // blocks a rule has scheduled or inlined
    if (config_.inline_elementwise) TF_RETURN_IF_ERROR(InlineElementwise(sch, &handled));
    TF_RETURN_IF_ERROR(TileReductions(sch, &handled));
    return ParallelizeTheRest(sch, handled);
  }

 private:
  // Rule 1: inline element-wise producers of intermediates.
  Status InlineElementwise(Schedule& sch, std::set<std::string>* handled) const {
    const std::vector<BlockInfo> blocks = Analyze(sch.func());
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
      if (sch.ComputeInline(b).ok()) handled->insert(name);
    }
    return Status::OK();
  }

  // Rule 2: tile reductions that have spatial loops (rule 2a: factor those
  // with few outputs and a long reduction). Every rewrite frees the old
  // tree, so blocks are looked up afresh by name each time.
  Status TileReductions(Schedule& sch, std::set<std::string>* handled) const {
    std::vector<BlockInfo> blocks = Analyze(sch.func());
    std::vector<std::string> reductions;
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      if (it->reduction) reductions.push_back(it->block->name);
    }
    for (const std::string& name : reductions) {
      if (handled->count(name)) continue;
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
        handled->insert(rf_name);
        continue;  // the original block, now reducing partials, is left to rule 3
      }
      if (spatial == 0) continue;
      std::vector<std::string> placed;
      TF_RETURN_IF_ERROR(TileReduction(sch, config_, info, FusibleConsumer(sch, blocks, info, *handled), &placed));
      handled->insert(name);
      handled->insert(placed.begin(), placed.end());
    }
    return Status::OK();
  }

  // A single element-wise consumer reading the reduction's result in place,
  // to fuse into its tile; empty when there is none.
  static std::string FusibleConsumer(const Schedule& sch, const std::vector<BlockInfo>& blocks, const BlockInfo& info,
                                     const std::set<std::string>& handled) {
    std::string fused_consumer;
    if (info.consumers.size() != 1 || IsParam(sch.func(), info.store->buffer.get())) return fused_consumer;
    for (const BlockInfo& c : blocks) {
      if (c.block->name == info.consumers[0] && !c.reduction && StoresAtIterVars(c.block, c.store) &&
          ReadsAtIterVars(c.block, info.store->buffer.get()) && !handled.count(c.block->name)) {
        fused_consumer = c.block->name;
      }
    }
    return fused_consumer;
  }

  // Rule 3: every block no rule has handled.
  Status ParallelizeTheRest(Schedule& sch, const std::set<std::string>& handled) const {
    for (const std::string& name : sch.BlockNames()) {
      if (handled.count(name)) continue;
      TF_RETURN_IF_ERROR(ParallelizeAndVectorize(sch, name));
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

  CpuSketchConfig config_;
};

}  // namespace

std::unique_ptr<SketchPolicy> MakeCpuSketchPolicy(CpuSketchConfig config) {
  return std::make_unique<CpuSketchPolicy>(std::move(config));
}

}  // namespace tunefarm::tuner
