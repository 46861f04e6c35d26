// The GPU sketch rules (sketch_cuda.h says what each rule does). What they
// read off the IR first -- blocks, consumers, element-wise tests -- is the
// CPU rules' analysis (sketch_cpu_analysis.h): it knows nothing of CPUs.
#include "tunefarm/tuner/sketch_cuda.h"

#include <algorithm>
#include <set>
#include <utility>

#include "sketch_cpu_analysis.h"
#include "sketch_cuda_cross_thread.h"
#include "sketch_cuda_operand_layout.h"
#include "sketch_cuda_shared_padding.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::tuner {

using namespace ir;
using namespace sketch_analysis;

namespace {

// Tile levels of multi-level tiling: SSSRRSRS.
constexpr int kSpatialTiles = 5;  // block, vthread, thread, inner, innermost
constexpr int kReduceTiles = 3;   // outer (shared-memory stage), middle, innermost

const Block* FindBlockNamed(const PrimFunc& f, const std::string& name) {
  const Block* found = nullptr;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBlock && static_cast<const Block*>(n)->name == name) found = static_cast<const Block*>(n);
  });
  return found;
}

// Distinct buffers `block` loads, its own accumulator aside: the read
// indices CacheRead takes.
int CountReads(const Block* block, const Store* store) {
  std::vector<const BufferNode*> seen;
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const BufferNode* b = static_cast<const Load*>(n)->buffer.get();
    if (store && b == store->buffer.get()) return;
    if (std::find(seen.begin(), seen.end(), b) == seen.end()) seen.push_back(b);
  });
  return int(seen.size());
}

// Bytes of the kShared buffers among `names` that `f` allocates.
int64_t SharedBytes(const PrimFunc& f, const std::set<std::string>& names) {
  int64_t bytes = 0;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kAllocate) return;
    const BufferNode* b = static_cast<const Allocate*>(n)->buffer.get();
    if (b->scope != MemoryScope::kShared || !names.count(b->name)) return;
    int64_t elements = 1;
    for (int64_t e : b->shape) elements *= e;
    bytes += elements * ((b->dtype.bits * b->dtype.lanes + 7) / 8);
  });
  return bytes;
}

Result<LoopRV> FuseAll(Schedule& sch, const std::vector<LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

class CudaSketchPolicy : public SketchPolicy {
 public:
  explicit CudaSketchPolicy(CudaSketchConfig config) : config_(std::move(config)) {}

  Status Apply(Schedule& sch) const override {
    std::set<std::string> handled;
    if (config_.inline_elementwise) TF_RETURN_IF_ERROR(InlineElementwise(sch, &handled));
    TF_RETURN_IF_ERROR(TileReductions(sch, &handled));
    return BindTheRest(sch, handled);
  }

 private:
  // Rule 1, as for CPUs: element-wise producers of intermediates disappear.
  Status InlineElementwise(Schedule& sch, std::set<std::string>* handled) const {
    const std::vector<BlockInfo> blocks = Analyze(sch.func());
    std::vector<std::string> names;
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      if (it->reduction || !it->store || IsParam(sch.func(), it->store->buffer.get())) continue;
      if (StoresAtIterVars(it->block, it->store)) names.push_back(it->block->name);
    }
    for (const std::string& name : names) {
      TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(name));
      if (sch.ComputeInline(b).ok()) handled->insert(name);
    }
    return Status::OK();
  }

  // Rule 2 (or 2b, sampled) for every reduction with spatial loops, consumers first.
  Status TileReductions(Schedule& sch, std::set<std::string>* handled) const {
    std::vector<std::string> reductions;
    for (const BlockInfo& info : Analyze(sch.func())) {
      if (info.reduction) reductions.insert(reductions.begin(), info.block->name);
    }
    for (const std::string& name : reductions) {
      if (handled->count(name)) continue;
      const std::vector<BlockInfo> blocks = Analyze(sch.func());
      auto it = std::find_if(blocks.begin(), blocks.end(), [&](const BlockInfo& b) { return b.block->name == name; });
      if (it == blocks.end()) continue;
      size_t spatial = 0;
      for (const IterVar& iv : it->block->iter_vars) spatial += iv.kind == IterKind::kSpatial;
      if (spatial == 0) continue;  // rule 3: one thread does the whole reduction
      if (OffersCrossThread(config_, *it->block)) {
        // Which form wins is the cost model's to learn: both are drawn.
        std::vector<IterKind> kinds;
        for (const IterVar& iv : it->block->iter_vars) kinds.push_back(iv.kind);
        TF_ASSIGN_OR_RETURN(ValueRV form, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
        if (sch.Get(form) == 1) {
          TF_RETURN_IF_ERROR(CrossThreadReduction(sch, name, kinds, config_));
          handled->insert(name);
          continue;
        }
      }
      // An input whose shared tile compute_at cannot bound (a transposed
      // convolution's strided window) is read from global memory instead:
      // the rules run again on a copy of the schedule without staging it.
      std::set<int> unstaged;
      const std::string epilogue = Epilogue(sch, blocks, *it, *handled);
      for (;;) {
        Schedule trial = sch;
        std::set<std::string> trial_handled = *handled;
        int failed_input = -1;
        Status st = TileReduction(trial, *it, epilogue, unstaged, &failed_input, &trial_handled);
        if (st.ok()) {
          sch = std::move(trial);
          *handled = std::move(trial_handled);
          break;
        }
        if (failed_input < 0 || !unstaged.insert(failed_input).second) return st;
      }
    }
    return Status::OK();
  }

  // The single element-wise consumer reading the reduction's result in
  // place (bias + relu): inlined into the accumulator's write-back.
  std::string Epilogue(const Schedule& sch, const std::vector<BlockInfo>& blocks, const BlockInfo& info,
                       const std::set<std::string>& handled) const {
    if (!config_.fuse_epilogue || info.consumers.size() != 1 || IsParam(sch.func(), info.store->buffer.get())) return "";
    for (const BlockInfo& c : blocks) {
      if (c.block->name == info.consumers[0] && !c.reduction && StoresAtIterVars(c.block, c.store) &&
          ReadsAtIterVars(c.block, info.store->buffer.get()) && !handled.count(c.block->name)) {
        return c.block->name;
      }
    }
    return "";
  }

  // Multi-level tiling of one reduction; the inputs in `unstaged` are not
  // staged in shared memory. When staging input r fails, *failed_input = r.
  Status TileReduction(Schedule& sch, const BlockInfo& info, const std::string& epilogue, const std::set<int>& unstaged,
                       int* failed_input, std::set<std::string>* handled) const {
    const std::string name = info.block->name;
    // Read before the first rewrite frees the block's nodes.
    std::vector<IterKind> kinds;
    int64_t outputs = 1;
    for (const IterVar& iv : info.block->iter_vars) {
      kinds.push_back(iv.kind);
      if (iv.kind == IterKind::kSpatial) outputs *= iv.extent;
    }
    const int reads = CountReads(info.block, info.store);

    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(block, MemoryScope::kLocal));
    // The shared copies are made while the block's nest is its own: each
    // copy goes before that nest, and compute_at then moves it inside.
    std::vector<std::pair<int, BlockRV>> copies;  // (read index, copy)
    for (int r = 0; config_.shared_inputs && r < reads; ++r) {
      if (unstaged.count(r)) continue;
      TF_ASSIGN_OR_RETURN(BlockRV copy, sch.CacheRead(block, r, MemoryScope::kShared));
      copies.emplace_back(r, copy);
    }
    if (!epilogue.empty()) {
      TF_ASSIGN_OR_RETURN(BlockRV consumer, sch.GetBlock(epilogue));
      if (sch.ReverseComputeInline(consumer).ok()) handled->insert(epilogue);
    }
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
    if (loops.size() != kinds.size()) {
      return Status::FailedPrecondition("tile " + name + ": loops do not match its iteration variables");
    }
    std::vector<std::vector<LoopRV>> s_tiles(kSpatialTiles), r_tiles(kReduceTiles);
    for (size_t i = 0; i < loops.size(); ++i) {
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, kinds[i] == IterKind::kSpatial ? TileSpatial(sch, loops[i])
                                                                                     : TileReduce(sch, loops[i]));
      auto& tiles = kinds[i] == IterKind::kSpatial ? s_tiles : r_tiles;
      for (size_t level = 0; level < parts.size(); ++level) tiles[level].push_back(parts[level]);
    }
    TF_ASSIGN_OR_RETURN(const std::vector<int64_t> runs, ThreadRuns(sch, s_tiles));  // before the tiles fuse
    // SSSRRSRS: block, vthread, thread, reduce-outer, reduce-middle, inner, reduce-inner, innermost.
    std::vector<LoopRV> order;
    for (const auto* level : {&s_tiles[0], &s_tiles[1], &s_tiles[2], &r_tiles[0], &r_tiles[1], &s_tiles[3],
                              &r_tiles[2], &s_tiles[4]}) {
      order.insert(order.end(), level->begin(), level->end());
    }
    TF_RETURN_IF_ERROR(sch.Reorder(order));
    TF_ASSIGN_OR_RETURN(LoopRV bx, FuseAll(sch, s_tiles[0]));
    TF_ASSIGN_OR_RETURN(LoopRV vt, FuseAll(sch, s_tiles[1]));
    TF_ASSIGN_OR_RETURN(LoopRV tx, FuseAll(sch, s_tiles[2]));
    TF_ASSIGN_OR_RETURN(int64_t threads, sch.LoopExtent(tx));
    TF_ASSIGN_OR_RETURN(int64_t vthreads, sch.LoopExtent(vt));
    TF_RETURN_IF_ERROR(CheckThreads(name, threads, vthreads, outputs));
    TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
    if (vthreads > 1) TF_RETURN_IF_ERROR(sch.Bind(vt, "vthread"));
    TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, tx));
    TF_ASSIGN_OR_RETURN(std::string write_back_name, sch.BlockName(write_back));
    handled->insert(name);
    handled->insert(write_back_name);
    if (!copies.empty()) {
      // Without a reduction loop the copies are made once per thread tile.
      LoopRV stage_loop = r_tiles[0].empty() ? tx : r_tiles[0].back();
      TF_ASSIGN_OR_RETURN(bool doubled, SampleDoubleBuffer(sch, r_tiles[0], &stage_loop));
      std::vector<StagedCopy> staged;
      TF_RETURN_IF_ERROR(StageInputs(sch, copies, stage_loop, threads, failed_input, handled, &staged));
      std::vector<BlockRV> staged_blocks;
      for (const StagedCopy& copy : staged) staged_blocks.push_back(copy.copy);
      std::vector<std::string> packed;
      TF_RETURN_IF_ERROR(PackSharedOperands(sch, name, staged_blocks, runs, &packed));
      // Padded as laid out: after packing, which it leaves alone.
      if (config_.storage_align) {
        TF_RETURN_IF_ERROR(PadSharedRows(sch, name, staged, packed, runs, config_.storage_align_factor,
                                         config_.storage_align_offsets));
      }
      // Checked here, not when built: a draw over the limit costs a draw,
      // not a trial. A double-buffered stage takes its tiles twice; padded
      // rows count with their padding.
      const int64_t shared = SharedBytes(sch.func(), *handled) * (doubled ? 2 : 1);
      if (shared > config_.max_shared_bytes) {
        return Status::FailedPrecondition("tile " + name + ": " + std::to_string(shared) + " bytes of shared memory");
      }
      if (doubled) TF_RETURN_IF_ERROR(sch.Annotate(stage_loop, ir::kDoubleBufferAnnotation, 1));
    }
    TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical(config_.unroll_steps,
                                                              std::vector<double>(config_.unroll_steps.size(), 1.0)));
    if (sch.Get(unroll) > 0) TF_RETURN_IF_ERROR(sch.Annotate(bx, "pragma_auto_unroll_max_step", sch.Get(unroll)));
    return Status::OK();
  }

  // A spatial loop's five tiles (block, vthread, thread, inner, innermost),
  // drawn in three steps so that each bounded part is drawn uniformly among
  // the divisors within its bound: first a thread's work -- its virtual
  // threads times its register tile, at most max_thread_work, contiguous so
  // that the region a thread writes back is exactly its own --, then the
  // thread tile (at most max_thread_tile) from what is left, the rest being
  // blocks, then the work split three ways. Drawn as one tile of five, a
  // block would take most of the loop and a thread almost none.
  Result<std::vector<LoopRV>> TileSpatial(Schedule& sch, LoopRV loop) const {
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> w, sch.SamplePerfectTile(loop, 2, config_.max_thread_work));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> threads_work, sch.Split(loop, {w[0], w[1]}));
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> t, sch.SamplePerfectTile(threads_work[0], 2, config_.max_thread_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> block_thread, sch.Split(threads_work[0], {t[0], t[1]}));
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> v, sch.SamplePerfectTile(threads_work[1], 3, config_.max_innermost_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> work, sch.Split(threads_work[1], {v[0], v[1], v[2]}));
    return std::vector<LoopRV>{block_thread[0], work[0], block_thread[1], work[1], work[2]};
  }

  // A reduction loop's three tiles: the part each shared-memory stage
  // covers (at most max_reduce_tile) drawn first, then split in two.
  Result<std::vector<LoopRV>> TileReduce(Schedule& sch, LoopRV loop) const {
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> k, sch.SamplePerfectTile(loop, 2, config_.max_reduce_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> outer_stage, sch.Split(loop, {k[0], k[1]}));
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> r, sch.SamplePerfectTile(outer_stage[1], 2, config_.max_innermost_tile));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> stage, sch.Split(outer_stage[1], {r[0], r[1]}));
    return std::vector<LoopRV>{outer_stage[0], stage[0], stage[1]};
  }

  // Whether the shared-memory stage is double-buffered (LowerForCuda's
  // InjectDoubleBuffers: the next tile's fetch overlaps this tile's math), a
  // sampled decision where the outer reduction tiles make two stages or more.
  // Several outer reduction loops (a convolution's channels and window) are
  // fused into one stage loop first, so that the pipeline runs across all of
  // them rather than only along the innermost, often of extent 1.
  Result<bool> SampleDoubleBuffer(Schedule& sch, const std::vector<LoopRV>& outer_reduce, LoopRV* stage_loop) const {
    if (!config_.double_buffer || outer_reduce.empty()) return false;
    int64_t stages = 1;
    for (LoopRV l : outer_reduce) {
      TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(l));
      stages *= extent;
    }
    if (stages < 2) return false;
    TF_ASSIGN_OR_RETURN(ValueRV choice, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
    if (sch.Get(choice) == 0) return false;
    TF_ASSIGN_OR_RETURN(*stage_loop, FuseAll(sch, outer_reduce));
    return true;
  }

  // Threads per block within the knobs' limits; fewer than a warp only
  // where the block's tile cannot hold more.
  Status CheckThreads(const std::string& name, int64_t threads, int64_t vthreads, int64_t outputs) const {
    if (threads > config_.max_threads_per_block) {
      return Status::FailedPrecondition("tile " + name + ": " + std::to_string(threads) + " threads per block");
    }
    if (threads < std::min(config_.min_threads_per_block, outputs)) {
      return Status::FailedPrecondition("tile " + name + ": only " + std::to_string(threads) + " threads per block");
    }
    if (vthreads > config_.max_vthreads) {
      return Status::FailedPrecondition("tile " + name + ": " + std::to_string(vthreads) + " virtual threads");
    }
    return Status::OK();
  }

  // Each input copied into shared memory once per outer reduction tile, by
  // all the block's threads together: the copy's loops fused and split into
  // (rounds, threads, vector), the thread part bound to the block's threads.
  // Each copy with the width its fetch was vectorized to goes to *staged.
  Status StageInputs(Schedule& sch, const std::vector<std::pair<int, BlockRV>>& copies, LoopRV stage_loop,
                     int64_t threads, int* failed_input, std::set<std::string>* handled,
                     std::vector<StagedCopy>* staged) const {
    for (const auto& [read_index, copy] : copies) {
      if (Status placed = sch.ComputeAt(copy, stage_loop); !placed.ok()) {
        *failed_input = read_index;
        return placed;
      }
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> all, sch.GetLoops(copy));
      // The copy's own loops are those under the stage loop.
      size_t depth = 0;
      TF_ASSIGN_OR_RETURN(ir::Var stage_var, sch.LoopVar(stage_loop));
      for (size_t i = 0; i < all.size(); ++i) {
        TF_ASSIGN_OR_RETURN(ir::Var v, sch.LoopVar(all[i]));
        if (v.get() == stage_var.get()) depth = i + 1;
      }
      std::vector<LoopRV> own(all.begin() + std::ptrdiff_t(depth), all.end());
      TF_ASSIGN_OR_RETURN(std::string copy_name, sch.BlockName(copy));
      handled->insert(copy_name);
      staged->push_back({copy, 1});
      if (own.empty()) continue;
      TF_ASSIGN_OR_RETURN(LoopRV fused, FuseAll(sch, own));
      TF_ASSIGN_OR_RETURN(ValueRV lanes_rv, sch.SampleCategorical(config_.fetch_vector_lanes,
                                                                  std::vector<double>(config_.fetch_vector_lanes.size(), 1.0)));
      const int64_t lanes = sch.Get(lanes_rv);
      TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(fused));
      if (lanes > 1 && extent % lanes == 0) {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, {-1, threads, lanes}));
        TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
        TF_RETURN_IF_ERROR(sch.Vectorize(parts[2]));
        staged->back().fetch_lanes = lanes;
        staged->back().fetch_guarded = extent % (threads * lanes) != 0;
      } else {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, {-1, threads}));
        TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
      }
    }
    return Status::OK();
  }

  // Rule 3: every block at the root that no rule placed: its spatial loops
  // fused and split over blocks of a sampled size.
  Status BindTheRest(Schedule& sch, const std::set<std::string>& handled) const {
    for (const std::string& name : sch.BlockNames()) {
      if (handled.count(name)) continue;
      const Block* b = FindBlockNamed(sch.func(), name);
      if (b == nullptr) continue;
      size_t spatial = 0;
      int64_t outputs = 1;
      for (const IterVar& iv : b->iter_vars) {
        if (iv.kind != IterKind::kSpatial) break;
        ++spatial;
        outputs *= iv.extent;
      }
      TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
      if (spatial == 0 || loops.size() < spatial) {
        return Status::FailedPrecondition("bind " + name + ": no spatial loop to spread over threads");
      }
      TF_ASSIGN_OR_RETURN(LoopRV fused, FuseAll(sch, std::vector<LoopRV>(loops.begin(), loops.begin() + long(spatial))));
      std::vector<int64_t> sizes;
      for (int64_t t : config_.elementwise_threads) {
        if (t <= std::max<int64_t>(outputs, 32)) sizes.push_back(t);
      }
      if (sizes.empty()) sizes.push_back(config_.elementwise_threads.front());
      TF_ASSIGN_OR_RETURN(ValueRV t_rv, sch.SampleCategorical(sizes, std::vector<double>(sizes.size(), 1.0)));
      const int64_t threads = std::min(sch.Get(t_rv), outputs);
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(fused, {-1, threads}));
      TF_RETURN_IF_ERROR(sch.Bind(parts[0], "blockIdx.x"));
      TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
    }
    return Status::OK();
  }

  CudaSketchConfig config_;
};

}  // namespace

std::unique_ptr<SketchPolicy> MakeCudaSketchPolicy(CudaSketchConfig config) {
  return std::make_unique<CudaSketchPolicy>(std::move(config));
}

}  // namespace tunefarm::tuner
