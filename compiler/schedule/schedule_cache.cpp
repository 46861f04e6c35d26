// Cache and layout primitives: cache_read, cache_write, pack_layout,
// split_phases.
#include <algorithm>

#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {

using namespace ir;

namespace {


// A full loop nest copying src into dst element by element, as one block.
Stmt CopyNest(const std::string& block_name, const Buffer& src, const Buffer& dst) {
  std::vector<IterVar> ivs;
  std::vector<Var> loops;
  std::vector<Expr> idx;
  for (size_t d = 0; d < src->shape.size(); ++d) {
    Var lv("ax" + std::to_string(d), DataType::Index());
    Var bv("v" + std::to_string(d), DataType::Index());
    ivs.push_back(IterVar{bv, src->shape[d], IterKind::kSpatial, lv});
    loops.push_back(lv);
    idx.push_back(bv);
  }
  Stmt nest = Block::Make(block_name, ivs, Stmt(), Store::Make(dst, Load::Make(src, idx), idx));
  for (size_t d = loops.size(); d-- > 0;) {
    nest = For::Make(loops[d], Expr(int64_t(0)), Expr(src->shape[d]), ForKind::kSerial, nest);
  }
  return nest;
}

// Rewrites the accesses of `from` inside one block only.
Stmt RewriteBlockBuffer(const Block* b, const BufferNode* from, const Buffer& to) {
  Stmt init = b->init.defined() ? sched::ReplaceBuffer(b->init, from, to) : Stmt();
  Stmt body = sched::ReplaceBuffer(b->body, from, to);
  return Block::Make(b->name, b->iter_vars, init, body, b->predicate);
}

}  // namespace

Result<BlockRV> Schedule::CacheRead(BlockRV block_rv, int read_index, MemoryScope scope) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  std::vector<Buffer> reads = sched::BlockReadBuffers(block);
  if (read_index < 0 || size_t(read_index) >= reads.size()) {
    return Status::InvalidArgument("cache_read(" + name + "): read index " + std::to_string(read_index) +
                                   " is out of range; the block reads " + std::to_string(reads.size()) + " buffers");
  }
  const Buffer& src = reads[size_t(read_index)];
  Buffer cache = MakeBuffer(sched::UniqueName(func_, src->name + "_" + MemoryScopeName(scope)), src->dtype, src->shape, scope);
  std::string copy_name = cache->name;
  const StmtNode* nest = sched::NestOf(func_.body, block);
  Stmt nest_stmt = sched::FindStmt(func_.body, nest);
  Stmt rewritten = sched::ReplaceNode(nest_stmt, block, RewriteBlockBuffer(block, src.get(), cache));
  Stmt replacement = Allocate::Make(cache, SeqStmt::Make({CopyNest(copy_name, src, cache), rewritten}));
  SetBody(sched::ReplaceNode(func_.body, nest, replacement));
  BlockRV out = NewBlockRV(copy_name);
  Record({InstructionKind::kCacheRead,
          {TraceArg::Ref(Name(block_rv)), TraceArg::Int(read_index), TraceArg::Str(MemoryScopeName(scope))},
          {Name(out)}});
  return out;
}

Result<BlockRV> Schedule::CacheWrite(BlockRV block_rv, MemoryScope scope) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  const Store* store = sched::BlockStore(block);
  if (!store) return Status::InvalidArgument("cache_write(" + name + "): the block's body is not a single store");
  const Buffer& dst = store->buffer;
  const StmtNode* nest = sched::NestOf(func_.body, block);
  // The write-back copies the whole buffer: under a loop shared with other
  // blocks it would run once per iteration and copy stale elements over
  // the ones other iterations wrote.
  if (auto outer = sched::LoopsAbove(func_.body, nest); !outer.empty()) {
    return Status::InvalidArgument("cache_write(" + name + "): the block is inside loop " + outer.back()->loop_var.name() +
                                   " with other statements; cache_write it before compute_at / reverse_compute_at");
  }
  Buffer cache = MakeBuffer(sched::UniqueName(func_, dst->name + "_" + MemoryScopeName(scope)), dst->dtype, dst->shape, scope);
  std::string copy_name = sched::UniqueName(func_, name + "_write_back");
  Stmt nest_stmt = sched::FindStmt(func_.body, nest);
  Stmt rewritten = sched::ReplaceNode(nest_stmt, block, RewriteBlockBuffer(block, dst.get(), cache));
  Stmt replacement = Allocate::Make(cache, SeqStmt::Make({rewritten, CopyNest(copy_name, cache, dst)}));
  SetBody(sched::ReplaceNode(func_.body, nest, replacement));
  BlockRV out = NewBlockRV(copy_name);
  Record({InstructionKind::kCacheWrite, {TraceArg::Ref(Name(block_rv)), TraceArg::Str(MemoryScopeName(scope))},
          {Name(out)}});
  return out;
}

Status Schedule::PackLayout(BlockRV block_rv, int dim, int64_t factor, int outer_position) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  const Store* store = sched::BlockStore(block);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("pack_layout(" + name + "): " + why); };
  if (!store) return fail("the block's body is not a single store");
  const Buffer& buffer = store->buffer;
  int rank = int(buffer->shape.size());
  if (sched::IsParam(func_, buffer.get())) return fail(buffer->name + " is a function parameter; pack a cache_read copy of it");
  if (dim < 0 || dim >= rank) return fail("dimension " + std::to_string(dim) + " is out of range for " + buffer->name);
  if (outer_position < 0 || outer_position >= rank) return fail("outer position " + std::to_string(outer_position) + " is out of range");
  if (factor <= 0 || buffer->shape[size_t(dim)] % factor != 0) {
    return fail("factor " + std::to_string(factor) + " does not divide dimension " + std::to_string(dim) + " (extent " +
                std::to_string(buffer->shape[size_t(dim)]) + ")");
  }
  // New order: the other dims in place, the outer part at outer_position, the inner part last.
  std::vector<int64_t> shape;
  std::vector<int> order;  // source dim per new position (-1: outer part)
  for (int d = 0; d < rank; ++d) {
    if (d != dim) order.push_back(d);
  }
  order.insert(order.begin() + outer_position, -1);
  for (int d : order) shape.push_back(d < 0 ? buffer->shape[size_t(dim)] / factor : buffer->shape[size_t(d)]);
  shape.push_back(factor);
  Buffer packed = MakeBuffer(buffer->name, buffer->dtype, shape, buffer->scope);
  auto remap = [order, dim, factor](const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (int d : order) out.push_back(d < 0 ? Div::Make(idx[size_t(dim)], Expr(factor)) : idx[size_t(d)]);
    out.push_back(Mod::Make(idx[size_t(dim)], Expr(factor)));
    return out;
  };
  SetBody(sched::ReplaceBuffer(func_.body, buffer.get(), packed, remap));
  Record({InstructionKind::kPackLayout,
          {TraceArg::Ref(Name(block_rv)), TraceArg::Int(dim), TraceArg::Int(factor), TraceArg::Int(outer_position)}});
  return Status::OK();
}

Status Schedule::SplitPhases(BlockRV block_rv, int dim, int64_t stride) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  const Store* store = sched::BlockStore(block);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("split_phases(" + name + "): " + why); };
  if (!store) return fail("the block's body is not a single store");
  const Buffer& buffer = store->buffer;
  const int rank = int(buffer->shape.size());
  if (sched::IsParam(func_, buffer.get())) return fail(buffer->name + " is a function parameter; split a cache_read copy of it");
  if (dim < 0 || dim >= rank) return fail("dimension " + std::to_string(dim) + " is out of range for " + buffer->name);
  const int64_t extent = buffer->shape[size_t(dim)];
  if (stride < 2) return fail("stride " + std::to_string(stride) + " must be at least 2");
  // [.., E, ..] -> [.., stride, ceil(E / stride), ..]: phase q holds elements
  // q, q + stride, q + 2 * stride, ...; a phase may be one or more short
  // (its last slots are never written nor read): a copy per task may hold
  // fewer elements than the stride.
  std::vector<int64_t> shape = buffer->shape;
  shape[size_t(dim)] = stride;
  shape.insert(shape.begin() + dim + 1, (extent + stride - 1) / stride);
  Buffer phased = MakeBuffer(buffer->name, buffer->dtype, shape, buffer->scope);
  auto remap = [dim, stride](const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (int(d) != dim) {
        out.push_back(idx[d]);
        continue;
      }
      out.push_back(Simplify(Mod::Make(idx[d], Expr(stride))));
      out.push_back(Simplify(Div::Make(idx[d], Expr(stride))));
    }
    return out;
  };
  SetBody(sched::ReplaceBuffer(func_.body, buffer.get(), phased, remap));
  Record({InstructionKind::kSplitPhases, {TraceArg::Ref(Name(block_rv)), TraceArg::Int(dim), TraceArg::Int(stride)}});
  return Status::OK();
}

}  // namespace tunefarm
