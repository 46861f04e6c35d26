// The CPU sketch rules, in the order Ansor applies them, consumers first:
//   1. inline element-wise producers of intermediate tensors (padding, bias);
//   2. multi-level tiling (SSRSRS) of reductions with spatial loops: an outer
//      fused parallel loop, a local accumulator (or the fusible element-wise
//      consumer) placed at a sampled tile level, the innermost spatial tile
//      vectorized and an auto-unroll step sampled;
//   3. every other block: spatial loops fused, parallel outside, vectorized inside.
#include <algorithm>
#include <map>
#include <set>

#include "tunefarm/compiler/ir_visitor.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

using namespace ir;

namespace {

struct BlockInfo {
  const Block* block;
  const Store* store;
  bool reduction;
  std::vector<std::string> consumers;  // blocks reading its output
};

std::vector<BlockInfo> Analyze(const PrimFunc& f) {
  std::vector<BlockInfo> out;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kBlock) return;
    const auto* b = static_cast<const Block*>(n);
    out.push_back(BlockInfo{b, b->body.as<Store>(), b->init.defined(), {}});
  });
  for (BlockInfo& producer : out) {
    if (!producer.store) continue;
    for (const BlockInfo& consumer : out) {
      if (consumer.block == producer.block) continue;
      bool reads = false;
      PostOrderVisit(consumer.block->body, [&](const IRNode* n) {
        if (n->kind == IRNodeKind::kLoad && static_cast<const Load*>(n)->buffer.get() == producer.store->buffer.get()) {
          reads = true;
        }
      });
      if (reads) producer.consumers.push_back(consumer.block->name);
    }
  }
  return out;
}

bool IsParam(const PrimFunc& f, const BufferNode* b) {
  for (const Buffer& p : f.params) {
    if (p.get() == b) return true;
  }
  return false;
}

bool StoresAtIterVars(const Block* b, const Store* s) {
  if (!s || s->indices.size() != b->iter_vars.size()) return false;
  for (size_t d = 0; d < s->indices.size(); ++d) {
    if (s->indices[d].as<Variable>() != b->iter_vars[d].var.get()) return false;
  }
  return true;
}

// Every read of `buffer` in `b` is at exactly b's iteration variables, in order
// (a one-to-one element-wise consumer, fusible into its producer's tile).
bool ReadsAtIterVars(const Block* b, const BufferNode* buffer) {
  bool ok = true;
  PostOrderVisit(b->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const auto* l = static_cast<const Load*>(n);
    if (l->buffer.get() != buffer) return;
    if (l->indices.size() != b->iter_vars.size()) {
      ok = false;
      return;
    }
    for (size_t d = 0; d < l->indices.size(); ++d) ok &= l->indices[d].as<Variable>() == b->iter_vars[d].var.get();
  });
  return ok;
}

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
      for (const IterVar& iv : info.block->iter_vars) spatial += iv.kind == IterKind::kSpatial;
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
      std::string epilogue;
      TF_RETURN_IF_ERROR(TileReduction(sch, info, fused_consumer, &epilogue));
      handled.insert(name);
      if (!epilogue.empty()) handled.insert(epilogue);
    }
    // Rule 3: everything else.
    for (const std::string& name : sch.BlockNames()) {
      if (handled.count(name)) continue;
      TF_RETURN_IF_ERROR(ParallelizeAndVectorize(sch, name));
    }
    return Status::OK();
  }

 private:
  // Tiles one reduction; `epilogue_name` receives the block placed in its tile
  // (the fused consumer or the accumulator's write-back), if any.
  Status TileReduction(Schedule& sch, const BlockInfo& info, const std::string& fused_consumer,
                       std::string* epilogue_name) const {
    // Copy what is needed from `info` now: the rewrites below free its nodes.
    std::vector<IterKind> kinds;
    for (const IterVar& iv : info.block->iter_vars) kinds.push_back(iv.kind);
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(info.block->name));
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
    for (size_t i = 0; i < kinds.size() && i < loops.size(); ++i) {
      (kinds[i] == IterKind::kSpatial ? spatial : reduce).push_back(loops[i]);
    }
    std::vector<std::vector<LoopRV>> s_levels(size_t(config_.spatial_levels)), r_levels(size_t(config_.reduce_levels));
    for (size_t i = 0; i < spatial.size(); ++i) {
      bool innermost = i + 1 == spatial.size();
      int64_t max_inner = innermost ? config_.max_vector_lanes : config_.max_inner_tile;
      TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch.SamplePerfectTile(spatial[i], config_.spatial_levels, max_inner));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(spatial[i], std::vector<Factor>(f.begin(), f.end())));
      for (size_t l = 0; l < parts.size(); ++l) s_levels[l].push_back(parts[l]);
    }
    for (LoopRV r : reduce) {
      TF_ASSIGN_OR_RETURN(std::vector<ValueRV> f, sch.SamplePerfectTile(r, config_.reduce_levels, config_.max_reduce_inner_tile));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(r, std::vector<Factor>(f.begin(), f.end())));
      for (size_t l = 0; l < parts.size(); ++l) r_levels[l].push_back(parts[l]);
    }
    // SSRSRS: S0 S1 R0 S2 R1 S3 (with more levels, the extra ones interleave the same way).
    std::vector<LoopRV> order;
    size_t ri = 0;
    for (size_t l = 0; l < s_levels.size(); ++l) {
      order.insert(order.end(), s_levels[l].begin(), s_levels[l].end());
      if (l >= 1 && ri < r_levels.size()) {
        order.insert(order.end(), r_levels[ri].begin(), r_levels[ri].end());
        ++ri;
      }
    }
    TF_RETURN_IF_ERROR(sch.Reorder(order));
    LoopRV outer = s_levels[0][0];
    if (s_levels[0].size() > 1) {
      TF_ASSIGN_OR_RETURN(outer, sch.Fuse(s_levels[0]));
    }
    TF_RETURN_IF_ERROR(sch.Parallel(outer));
    LoopRV innermost = s_levels.back().back();
    TF_ASSIGN_OR_RETURN(int64_t lanes, sch.LoopExtent(innermost));
    if (lanes > 1) TF_RETURN_IF_ERROR(sch.Vectorize(innermost));
    TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical(config_.unroll_steps,
                                                              std::vector<double>(config_.unroll_steps.size(), 1.0)));
    if (sch.Get(unroll) > 0) TF_RETURN_IF_ERROR(sch.Annotate(outer, "pragma_auto_unroll_max_step", sch.Get(unroll)));
    if (have_epilogue) {
      TF_ASSIGN_OR_RETURN(*epilogue_name, sch.BlockName(epilogue));
      // The accumulator tile lives under the parallel loop or one level deeper.
      TF_ASSIGN_OR_RETURN(ValueRV level, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
      LoopRV at = sch.Get(level) == 0 ? outer : s_levels[1].back();
      TF_RETURN_IF_ERROR(sch.ReverseComputeAt(epilogue, at));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> e_loops, sch.GetLoops(epilogue));
      TF_ASSIGN_OR_RETURN(int64_t e_lanes, sch.LoopExtent(e_loops.back()));
      if (e_lanes > 1 && e_lanes <= config_.max_vector_lanes) TF_RETURN_IF_ERROR(sch.Vectorize(e_loops.back()));
    }
    return Status::OK();
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
