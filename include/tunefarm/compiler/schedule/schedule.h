// Schedule: primitives that rewrite a PrimFunc, and the trace that records them.
//
// A Schedule owns a copy of a PrimFunc in block form (as LowerToPrimFunc makes
// it) and rewrites it one primitive at a time. Blocks and loops are addressed
// by handles (BlockRV, LoopRV) that stay valid across primitives for as long
// as the block or loop exists; a primitive that removes a loop (split, fuse)
// returns handles to the loops that replace it. Every primitive and every
// random decision is appended to the schedule's Trace, which replays it.
//
// Legality: each primitive checks what it needs and returns InvalidArgument
// naming the block, loop and problem when the request is illegal; on error
// the schedule is unchanged and nothing is recorded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm {

struct BlockRV {
  int id = -1;
};
struct LoopRV {
  int id = -1;
};
// A sampled integer (a tile size, a categorical choice); Schedule::Get reads it.
struct ValueRV {
  int id = -1;
};
// A split factor: a literal or a sampled value, so traces keep the link.
struct Factor {
  Factor(int64_t v) : literal(v) {}  // NOLINT(implicit)
  Factor(int v) : literal(v) {}      // NOLINT(implicit)
  Factor(ValueRV v) : rv(v.id) {}    // NOLINT(implicit)
  int64_t literal = 0;
  int rv = -1;
};

class Schedule {
 public:
  // `seed` drives the sampling instructions.
  explicit Schedule(ir::PrimFunc func, uint64_t seed = 0);

  const ir::PrimFunc& func() const { return func_; }
  const Trace& trace() const { return trace_; }

  // ---- handles
  Result<BlockRV> GetBlock(const std::string& name);
  // Loops enclosing the block, outermost first.
  Result<std::vector<LoopRV>> GetLoops(BlockRV block);
  // Names of all blocks, in program order.
  std::vector<std::string> BlockNames() const;
  // The loop variable and extent a handle refers to (for tests and sketch rules).
  Result<ir::Var> LoopVar(LoopRV loop) const;
  Result<int64_t> LoopExtent(LoopRV loop) const;
  Result<std::string> BlockName(BlockRV block) const;

  // ---- loop transformations
  // Splits `loop` into factors.size() nested loops, outermost first. At most one
  // factor may be -1 (inferred). A product larger than the extent adds a guard.
  Result<std::vector<LoopRV>> Split(LoopRV loop, const std::vector<Factor>& factors);
  // Reorders loops of one perfect nest into the given order (others keep their place).
  Status Reorder(const std::vector<LoopRV>& order);
  // Fuses consecutive loops of a perfect nest, outermost first, into one.
  Result<LoopRV> Fuse(const std::vector<LoopRV>& loops);
  Status Parallel(LoopRV loop);
  Status Vectorize(LoopRV loop);
  Status Unroll(LoopRV loop);
  // GPU binding: tag is blockIdx.{x,y,z}, threadIdx.{x,y,z} or vthread.
  Status Bind(LoopRV loop, const std::string& thread_tag);
  // Loop annotation (ir/loop_annotations.h): "pragma_auto_unroll_max_step"
  // (unrolls inner loops whose total trip count is at most the value),
  // "pragma_unroll_explicit", or "pragma_dot_product" = 4 on a loop of extent
  // 4 (an int8 dot product, once the loop around it is vectorized by 4; any
  // other value or extent is InvalidArgument).
  Status Annotate(LoopRV loop, const std::string& key, int64_t value);

  // ---- compute location
  // Moves producer `block` under `loop`, computing only the region its
  // consumers under that loop read in one iteration.
  Status ComputeAt(BlockRV block, LoopRV loop);
  // Moves consumer `block` under `loop`, consuming the region its producer
  // writes in one iteration; the producer's reduction must complete inside loop.
  // The block must read the producer's buffer at its own iteration variables,
  // one per dimension; a constant 0 in a dimension of extent 1, at the
  // position of an iteration variable of extent 1 that no other index of the
  // read uses, counts as that variable (iter_var_reads.h: `acc[0, k, h, w]`
  // in a batch-1 workload). Any other constant is InvalidArgument.
  Status ReverseComputeAt(BlockRV block, LoopRV loop);
  // Inlines an element-wise producer into its consumers and removes it.
  Status ComputeInline(BlockRV block);
  // Inlines an element-wise consumer into its (non-reduction) producer. The
  // block must read the producer's buffer at distinct iteration variables
  // covering all of it; a constant 0 counts as a variable exactly as for
  // ReverseComputeAt.
  Status ReverseComputeInline(BlockRV block);

  // ---- caches and layout
  // Adds a block that copies the block's `read_index`-th input buffer into a
  // new buffer of `scope` before it; the block reads the copy.
  Result<BlockRV> CacheRead(BlockRV block, int read_index, ir::MemoryScope scope);
  // Adds a block that copies the block's `read_index`-th input X into a new
  // global buffer "X_pad" with a border of zeros wide enough for every index
  // the block reads, before it; the block reads the copy, and its padding
  // guards (select(0 <= i < extent in some dimensions, X[i], 0)) become plain
  // reads. Fails when no read of X is guarded by bounds checks alone.
  // Returns the copy (place it with ComputeAt, like a cache_read copy).
  Result<BlockRV> PadInput(BlockRV block, int read_index);
  // True if PadInput(block, read_index) would succeed (the sketch rules ask).
  bool CanPadInput(BlockRV block, int read_index) const;
  // Pads spatial axis `axis` (an index into the block's iteration variables)
  // up to a multiple of `multiple`: the block then computes a bigger tile of
  // the intermediate buffer it writes, with no guard. Every input the axis
  // indexes past its end must be read under a guard that bounds it (a
  // convolution's padding select) or be an intermediate filled by one
  // element-wise copy at the root (cache_read, pad_input), which grows and
  // is filled with zeros past the old end. Consumers still read only the
  // valid part, so results are unchanged. Call it before the axis's loop is
  // split or fused and before the copies are placed (compute_at).
  Status PadAxis(BlockRV block, int axis, int64_t multiple);
  // The block writes a new buffer of `scope`; a new block copies it to the
  // original buffer after it (place that block with ReverseComputeAt).
  Result<BlockRV> CacheWrite(BlockRV block, ir::MemoryScope scope);
  // Re-lays out the intermediate buffer written by `block`: dimension `dim` of
  // extent E splits into E/factor, placed at `outer_position` among the other
  // dimensions, and a new innermost dimension of `factor`. NCHW -> NCHWc is
  // (dim 1, factor c, outer_position 1); a [K, N] weight packed into panels
  // [N/16, K, 16] is (dim 1, 16, outer_position 0). E must divide by factor.
  Status PackLayout(BlockRV block, int dim, int64_t factor, int outer_position);
  // Splits dimension `dim` of the intermediate buffer `block` writes into its
  // `stride` phases: [.., E, ..] becomes [.., stride, ceil(E / stride), ..]
  // and element i goes to (i % stride, i / stride). A stride-2 convolution
  // that reads X[.., 2 * w + s] then reads X[.., s % 2, w + s / 2]:
  // contiguous along w, a vector load instead of a gather.
  Status SplitPhases(BlockRV block, int dim, int64_t stride);
  // Pads the innermost dimension of the intermediate buffer `block` writes so
  // that the stride of dimension `axis` is congruent to `offset` modulo
  // `factor` (avoids cache-set or shared-memory bank conflicts).
  Status StorageAlign(BlockRV block, int axis, int64_t factor, int64_t offset);
  // Factors the reduction of `block` over `loop` (one of its reduction loops)
  // into a new block "<name>_rf" that keeps one partial result per iteration
  // of `loop` in a buffer with an extra dimension at `factor_axis`; `block`
  // then reduces those partials. The loop becomes a spatial loop of the rf
  // block, so it can be vectorized or parallelized. Returns the rf block.
  Result<BlockRV> RFactor(LoopRV loop, int factor_axis);

  // ---- sampling (decisions are recorded; `decision` forces one when replaying)
  // n factors whose product is the loop's extent, innermost in
  // [min_innermost, max_innermost]; InvalidArgument when no divisor of the
  // extent lies there.
  Result<std::vector<ValueRV>> SamplePerfectTile(LoopRV loop, int n, int64_t max_innermost,
                                                 std::optional<std::vector<int64_t>> decision = std::nullopt,
                                                 int64_t min_innermost = 1);
  // One of `candidates`, drawn with weights `probs`; the decision is the index.
  Result<ValueRV> SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                                    std::optional<int64_t> decision = std::nullopt);
  int64_t Get(ValueRV v) const { return values_.at(size_t(v.id)); }
  // Decisions to prefer for the sampling calls made without one, in call
  // order: the k-th such call takes hints[k] where it is valid there (a tile
  // of the right length and product, innermost within the limit; an index in
  // range, of a candidate with weight), else draws anew; an empty hint draws
  // anew. A sketch re-run with its own decisions as hints gives its program
  // again; with one decision changed, the neighbouring program with the rest
  // of the sketch made for it (what the search's mutation uses).
  void SetDecisionHints(std::vector<std::vector<int64_t>> hints) {
    hints_ = std::move(hints);
    next_hint_ = 0;
  }
  // A loop at which `block` may be computed (compute_at), drawn uniformly from
  // the loops enclosing all of its consumers, or the root handle meaning
  // "where it is now" (compute_at to it changes nothing). The decision is the
  // index into that candidate list (outermost first), -1 for root.
  Result<LoopRV> SampleComputeLocation(BlockRV block, std::optional<int64_t> decision = std::nullopt);
  bool IsRootLoop(LoopRV loop) const {
    return loop.id >= 0 && size_t(loop.id) < loops_.size() && !loops_[size_t(loop.id)].defined();
  }

 private:
  friend class TraceReplayer;
  friend class ScheduleTestPeer;
  Result<ir::Var> ResolveLoop(LoopRV loop) const;
  Result<std::string> ResolveBlock(BlockRV block) const;
  LoopRV NewLoopRV(const ir::Var& v);
  BlockRV NewBlockRV(const std::string& name);
  ValueRV NewValueRV(int64_t v);
  // Trace names of handles: "l3", "b0", "v5".
  static std::string Name(LoopRV r) { return "l" + std::to_string(r.id); }
  static std::string Name(BlockRV r) { return "b" + std::to_string(r.id); }
  static std::string Name(ValueRV r) { return "v" + std::to_string(r.id); }
  // Replaces the function body; every primitive ends here.
  void SetBody(ir::Stmt body) { func_.body = std::move(body); }
  void Record(Instruction inst) { trace_.Append(std::move(inst)); }
  // The next sampling call's hint (SetDecisionHints), consumed whether or not
  // it is used, so the k-th call always meets the k-th hint; null when none.
  const std::vector<int64_t>* NextHint() {
    if (next_hint_ >= hints_.size()) return nullptr;
    const std::vector<int64_t>* hint = &hints_[next_hint_++];
    return hint->empty() ? nullptr : hint;
  }

  ir::PrimFunc func_;
  Trace trace_;
  std::mt19937_64 rng_;
  std::vector<ir::Var> loops_;          // LoopRV id -> loop variable
  std::vector<std::string> blocks_;     // BlockRV id -> block name
  std::vector<int64_t> values_;         // ValueRV id -> value
  std::vector<std::vector<int64_t>> hints_;  // SetDecisionHints
  size_t next_hint_ = 0;
};

}  // namespace tunefarm
