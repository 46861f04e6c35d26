// Compute-location primitives: compute_at and reverse_compute_at (the
// inlining ones are in schedule_inline.cpp).
//
// compute_at / reverse_compute_at move a block's loop nest under another
// loop and shrink its iteration space to the region needed (or produced) in
// one iteration of that loop, found by affine region analysis. When every
// access of an intermediate buffer then lies under that loop, the buffer is
// compacted: allocated inside the loop with the region's shape, so a tile's
// worth of data stays in cache or registers. A kShared producer under GPU
// thread loops covers what every thread of the block reads, and its buffer is
// allocated around the outermost of those loops (schedule_thread_relax.h).
#include <algorithm>
#include <set>

#include "schedule_compute_common.h"
#include "schedule_thread_relax.h"
#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {

using namespace ir;
using sched::LateWriter;
using sched::Readers;
using sched::Region;
using sched::RegionDim;
using sched::StoresAtIterVars;
using sched::Writers;

namespace {

bool IsUnder(const Stmt& root, const StmtNode* node, const For* loop) {
  for (const For* f : sched::LoopsAbove(root, node)) {
    if (f == loop) return true;
  }
  return false;
}

// Loops strictly inside `loop` that enclose `node`, with their extents.
Result<std::map<const Variable*, int64_t>> InnerLoops(const Stmt& root, const StmtNode* node, const For* loop) {
  std::map<const Variable*, int64_t> out;
  bool inside = false;
  for (const For* f : sched::LoopsAbove(root, node)) {
    if (inside) {
      const int64_t* e = AsConstInt(f->extent);
      if (!e) return Status::InvalidArgument("loop " + f->loop_var.name() + " has no constant extent");
      out[f->loop_var.get()] = *e;
    }
    if (f == loop) inside = true;
  }
  return out;
}

// Ranges of all loops enclosing `node` plus extra ones, for bound proofs.
RangeMap RangesAbove(const Stmt& root, const StmtNode* node) {
  RangeMap r;
  for (const For* f : sched::LoopsAbove(root, node)) {
    const int64_t* m = AsConstInt(f->min);
    const int64_t* e = AsConstInt(f->extent);
    if (m && e) r[f->loop_var.get()] = Interval{*m, *m + *e - 1};
  }
  return r;
}

// Builds the loop nest of `block` over `region` (one loop per spatial iter var
// with the region's extent) and fresh loops for its reduce iter vars. Adds a
// guard where the region can leave the buffer.
Stmt NestOverRegion(const Block* block, const Region& region, const BufferNode* buffer, const RangeMap& outer_ranges,
                    const std::string& prefix) {
  std::vector<IterVar> ivs;
  std::vector<std::pair<Var, int64_t>> loops;
  Expr guard;
  RangeMap ranges = outer_ranges;
  size_t d = 0;
  for (const IterVar& iv : block->iter_vars) {
    Var lv(prefix + iv.var.name(), DataType::Index());
    IterVar n = iv;
    if (iv.kind == IterKind::kSpatial) {
      loops.push_back({lv, region[d].extent});
      ranges[lv.get()] = Interval{0, region[d].extent - 1};
      n.binding = Simplify(region[d].min + Expr(lv), ranges);
      auto b = BoundOf(n.binding, ranges);
      if (!b || b->min < 0 || b->max >= buffer->shape[d]) {
        Expr in = And::Make(GE::Make(n.binding, Expr(int64_t(0))), LT::Make(n.binding, Expr(buffer->shape[d])));
        guard = guard.defined() ? And::Make(guard, in) : in;
      }
      ++d;
    } else {
      loops.push_back({lv, iv.extent});
      n.binding = lv;
    }
    ivs.push_back(n);
  }
  // Spatial loops first, reduction loops inside (as the default nest).
  std::stable_partition(loops.begin(), loops.end(), [&](const auto& l) {
    for (const IterVar& iv : ivs) {
      if (iv.kind == IterKind::kSpatial && UsesVar(iv.binding, l.first.get())) return true;
    }
    return false;
  });
  Stmt nest = Block::Make(block->name, std::move(ivs), block->init, block->body, guard);
  for (size_t i = loops.size(); i-- > 0;) {
    nest = For::Make(loops[i].first, Expr(int64_t(0)), Expr(loops[i].second), ForKind::kSerial, nest);
  }
  return nest;
}

// If every access of intermediate `buffer` lies under `loop`, allocates it
// inside the loop with the region's shape and rebases every access. With
// `around` (a loop enclosing or equal to `loop`), the allocation wraps that
// loop instead: one buffer shared by all of its iterations (a block's threads).
Stmt CompactBuffer(const PrimFunc& f, const Stmt& root, const BufferNode* buffer, const Region& region,
                   const Var& loop_var, const Variable* around = nullptr) {
  if (sched::IsParam(f, buffer)) return root;
  const Allocate* alloc = sched::FindAllocate(root, buffer);
  if (!alloc) return root;
  const For* loop = sched::FindLoop(root, loop_var.get());
  // Every block touching the buffer must be under the loop.
  for (const Block* b : sched::BlocksUnder(root)) {
    const Store* s = sched::BlockStore(b);
    bool touches = (s && s->buffer.get() == buffer) || !sched::BlockLoadsOf(b, buffer).empty();
    if (touches && !IsUnder(root, b, loop)) return root;
  }
  std::vector<int64_t> shape;
  for (const RegionDim& r : region) shape.push_back(r.extent);
  Buffer compact = MakeBuffer(buffer->name, buffer->dtype, shape, buffer->scope);
  // Drop the old allocation, then allocate inside the loop.
  Stmt without = sched::ReplaceNode(root, alloc, alloc->body);
  loop = sched::FindLoop(without, loop_var.get());
  std::vector<Expr> mins;
  for (const RegionDim& r : region) mins.push_back(r.min);
  auto remap = [&mins](const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(Simplify(idx[d] - mins[d]));
    return out;
  };
  Stmt body = sched::ReplaceBuffer(loop->body, buffer, compact, remap);
  if (!around) body = Allocate::Make(compact, body);
  Stmt new_loop = For::Make(loop->loop_var, loop->min, loop->extent, loop->kind, body, loop->thread_tag,
                            loop->annotations);
  Stmt out = sched::ReplaceNode(without, loop, new_loop);
  if (!around) return out;
  const For* outer = sched::FindLoop(out, around);
  return sched::ReplaceNode(out, outer, Allocate::Make(compact, sched::FindStmt(out, outer)));
}

}  // namespace

Status Schedule::ComputeAt(BlockRV block_rv, LoopRV loop_rv) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  if (IsRootLoop(loop_rv)) {  // a sampled "stay where it is"
    Record({InstructionKind::kComputeAt, {TraceArg::Ref(Name(block_rv)), TraceArg::Ref(Name(loop_rv))}});
    return Status::OK();
  }
  TF_ASSIGN_OR_RETURN(Var loop_var, ResolveLoop(loop_rv));
  const Stmt& root = func_.body;
  const Block* producer = sched::FindBlock(root, name);
  const For* loop = sched::FindLoop(root, loop_var.get());
  const Store* store = sched::BlockStore(producer);
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument("compute_at(" + name + ", " + loop_var.name() + "): " + why);
  };
  if (!store) return fail("the block's body is not a single store");
  if (IsUnder(root, producer, loop)) return fail("the block is already inside that loop");
  if (producer->predicate.defined()) return fail("the block has a guard from a non-divisible split");
  if (!StoresAtIterVars(producer, store)) return fail("the block does not store at exactly its spatial iteration variables");
  const BufferNode* buffer = store->buffer.get();
  std::vector<const Block*> consumers = Readers(root, buffer, producer);
  if (consumers.empty()) return fail("nothing reads " + buffer->name);
  Region region;
  RangeMap outer_ranges = RangesAbove(root, loop);
  if (const int64_t* e = AsConstInt(loop->extent)) outer_ranges[loop->loop_var.get()] = Interval{0, *e - 1};
  auto relaxed = sched::RelaxedThreadLoops(root, loop, buffer->scope);
  if (!relaxed.ok()) return fail(relaxed.status().message());
  for (const Block* c : consumers) {
    if (!IsUnder(root, c, loop)) {
      return fail("block " + c->name + " also reads " + buffer->name + " but is not inside the loop");
    }
    TF_ASSIGN_OR_RETURN(auto varying, InnerLoops(root, c, loop));
    for (const Load* load : sched::BlockLoadsOf(c, buffer)) {
      auto r = sched::AccessRegion(sched::BoundIndices(c, load->indices), varying, outer_ranges);
      if (!r.ok()) return fail("cannot bound the region of " + buffer->name + " that " + c->name + " reads: " + r.status().message());
      *r = sched::RelaxRegion(*r, *relaxed, buffer->shape);
      if (region.empty()) {
        region = *r;
      } else {
        auto u = sched::UnionRegion(region, *r);
        if (!u.ok()) return fail(u.status().message());
        region = *u;
      }
    }
  }
  // The producer's nest must come before the loop (it is moved into it).
  const StmtNode* nest = sched::NestOf(root, producer);
  for (const For* f : sched::LoopsAbove(root, loop)) {
    if (f == nest) return fail("the loop is inside the block's own loop nest");
  }
  Stmt body = sched::ReplaceNode(root, nest, Stmt());
  loop = sched::FindLoop(body, loop_var.get());
  // The guard proof may use the ranges of the loop and every loop around it.
  RangeMap ranges = RangesAbove(body, loop);
  ranges[loop->loop_var.get()] = Interval{0, *AsConstInt(loop->extent) - 1};
  Stmt new_nest = NestOverRegion(producer, region, buffer, ranges, name + "_");
  Stmt new_loop = For::Make(loop->loop_var, loop->min, loop->extent, loop->kind, SeqStmt::Make({new_nest, loop->body}),
                            loop->thread_tag, loop->annotations);
  body = sched::ReplaceNode(body, loop, new_loop);
  loop = sched::FindLoop(body, loop_var.get());
  const For* around = sched::OutermostRelaxedLoop(body, loop, *relaxed);
  body = CompactBuffer(func_, body, buffer, region, loop_var, around ? around->loop_var.get() : nullptr);
  if (Status scoped = sched::CheckAllocationScopes(func_, body); !scoped.ok()) return fail(scoped.message());
  SetBody(body);
  Record({InstructionKind::kComputeAt, {TraceArg::Ref(Name(block_rv)), TraceArg::Ref(Name(loop_rv))}});
  return Status::OK();
}

Status Schedule::ReverseComputeAt(BlockRV block_rv, LoopRV loop_rv) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  TF_ASSIGN_OR_RETURN(Var loop_var, ResolveLoop(loop_rv));
  Stmt root = func_.body;
  const Block* consumer = sched::FindBlock(root, name);
  const For* loop = sched::FindLoop(root, loop_var.get());
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument("reverse_compute_at(" + name + ", " + loop_var.name() + "): " + why);
  };
  if (!sched::BlockStore(consumer)) return fail("the block's body is not a single store");
  if (consumer->init.defined()) return fail("the block is a reduction; only element-wise consumers can move");
  if (consumer->predicate.defined()) return fail("the block has a guard from a non-divisible split");
  if (IsUnder(root, consumer, loop)) return fail("the block is already inside that loop");
  // The producer: the one block under the loop that writes a buffer the consumer reads.
  const Block* producer = nullptr;
  const BufferNode* buffer = nullptr;
  for (const Buffer& b : sched::BlockReadBuffers(consumer)) {
    for (const Block* w : Writers(root, b.get())) {
      if (!IsUnder(root, w, loop)) continue;
      if (producer) return fail("it reads more than one buffer produced inside the loop");
      producer = w;
      buffer = b.get();
    }
  }
  if (!producer) return fail("it reads nothing that is produced inside the loop");
  {
    // Its other inputs must be complete before the loop starts.
    std::vector<const Block*> order = sched::BlocksUnder(root);
    int first_in_loop = int(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      if (IsUnder(root, order[i], loop)) {
        first_in_loop = int(i);
        break;
      }
    }
    const BufferNode* late = nullptr;
    if (const Block* w = LateWriter(root, consumer, buffer, first_in_loop, &late)) {
      return fail("it also reads " + late->name + ", which block " + w->name + " writes after the loop starts");
    }
  }
  TF_ASSIGN_OR_RETURN(auto varying, InnerLoops(root, producer, loop));
  for (const IterVar& iv : producer->iter_vars) {
    if (iv.kind != IterKind::kReduce) continue;
    for (const For* f : sched::LoopsAbove(root, producer)) {
      if (UsesVar(iv.binding, f->loop_var.get()) && !varying.count(f->loop_var.get())) {
        return fail("loop " + f->loop_var.name() + " of the reduction in " + producer->name +
                    " is outside the loop; the block would read partial results");
      }
    }
  }
  const Store* pstore = sched::BlockStore(producer);
  RangeMap outer_ranges = RangesAbove(root, loop);
  if (const int64_t* e = AsConstInt(loop->extent)) outer_ranges[loop->loop_var.get()] = Interval{0, *e - 1};
  auto written = sched::AccessRegion(sched::BoundIndices(producer, pstore->indices), varying, outer_ranges);
  if (!written.ok()) return fail("cannot bound the region " + producer->name + " writes: " + written.status().message());
  // A unit zero index (acc[0, k] for a consumer whose n has extent 1) reads
  // what its iteration variable does: rewritten to it, the consumer is
  // checked and moved as if written with the variable.
  if (Stmt canonical = sched::ReadUnitZerosAtIterVars(root, consumer, buffer); !canonical.same_as(root)) {
    const std::string producer_name = producer->name;
    root = canonical;
    consumer = sched::FindBlock(root, name);
    producer = sched::FindBlock(root, producer_name);
    loop = sched::FindLoop(root, loop_var.get());
  }
  // Each dimension of the buffer must be read at exactly one spatial iter var of the consumer.
  auto loads = sched::BlockLoadsOf(consumer, buffer);
  std::vector<const Variable*> dim_var;
  for (const Expr& idx : loads[0]->indices) dim_var.push_back(idx.as<Variable>());
  for (const Load* l : loads) {
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (!dim_var[d] || l->indices[d].as<Variable>() != dim_var[d]) {
        return fail("it must read " + buffer->name + " at its own iteration variables, one per dimension");
      }
    }
  }
  // Order the region by the consumer's iter vars so NestOverRegion lines up.
  Region region;
  for (const IterVar& iv : consumer->iter_vars) {
    auto it = std::find(dim_var.begin(), dim_var.end(), iv.var.get());
    if (it == dim_var.end()) return fail("iteration variable " + iv.var.name() + " does not index " + buffer->name);
    region.push_back((*written)[size_t(it - dim_var.begin())]);
  }
  Stmt body = sched::ReplaceNode(root, sched::NestOf(root, consumer), Stmt());
  loop = sched::FindLoop(body, loop_var.get());
  RangeMap ranges = RangesAbove(body, loop);
  ranges[loop->loop_var.get()] = Interval{0, *AsConstInt(loop->extent) - 1};
  // The guard is against the consumer's own output bounds (its store is at its iter vars).
  const Store* cstore = sched::BlockStore(consumer);
  Stmt new_nest = StoresAtIterVars(consumer, cstore)
                      ? NestOverRegion(consumer, region, cstore->buffer.get(), ranges, name + "_")
                      : Stmt();
  if (!new_nest.defined()) return fail("the block does not store at exactly its iteration variables");
  Stmt new_loop = For::Make(loop->loop_var, loop->min, loop->extent, loop->kind, SeqStmt::Make({loop->body, new_nest}),
                            loop->thread_tag, loop->annotations);
  body = sched::ReplaceNode(body, loop, new_loop);
  body = CompactBuffer(func_, body, buffer, *written, loop_var);
  if (Status scoped = sched::CheckAllocationScopes(func_, body); !scoped.ok()) return fail(scoped.message());
  SetBody(body);
  Record({InstructionKind::kReverseComputeAt, {TraceArg::Ref(Name(block_rv)), TraceArg::Ref(Name(loop_rv))}});
  return Status::OK();
}

}  // namespace tunefarm
