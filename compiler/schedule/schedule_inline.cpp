// Inlining primitives: compute_inline folds an element-wise producer into its
// consumers' reads; reverse_compute_inline folds an element-wise consumer into
// its producer's store. Either removes a block and, when nothing else uses
// it, the intermediate buffer between them.
#include <map>

#include "schedule_compute_common.h"
#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm {

using namespace ir;
using sched::DropUnusedAllocate;
using sched::LateWriter;
using sched::ProgramIndex;
using sched::Readers;
using sched::StoresAtIterVars;
using sched::Writers;

Status Schedule::ComputeInline(BlockRV block_rv) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Stmt& root = func_.body;
  const Block* producer = sched::FindBlock(root, name);
  const Store* store = sched::BlockStore(producer);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("compute_inline(" + name + "): " + why); };
  if (!store) return fail("the block's body is not a single store");
  if (producer->init.defined()) return fail("the block is a reduction; only element-wise blocks inline");
  if (!StoresAtIterVars(producer, store)) return fail("the block does not store at exactly its iteration variables");
  const BufferNode* buffer = store->buffer.get();
  if (sched::IsParam(func_, buffer)) return fail(buffer->name + " is an output of the function");
  if (!sched::BlockLoadsOf(producer, buffer).empty()) return fail("the block reads its own output");
  std::vector<const Variable*> vars;
  for (const IterVar& iv : producer->iter_vars) vars.push_back(iv.var.get());
  Expr value = store->value;
  class Inliner : public IRMutator {
   public:
    Inliner(const BufferNode* b, Expr v, std::vector<const Variable*> vars) : b_(b), v_(std::move(v)), vars_(std::move(vars)) {}
    using IRMutator::Mutate;
   protected:
    Expr MutateLoad(const Load* op, const Expr& self) override {
      Expr e = IRMutator::MutateLoad(op, self);
      const Load* l = e.as<Load>();
      if (l->buffer.get() != b_) return e;
      std::map<const Variable*, Expr> m;
      for (size_t d = 0; d < vars_.size(); ++d) m[vars_[d]] = l->indices[d];
      return Substitute(v_, m);
    }
   private:
    const BufferNode* b_;
    Expr v_;
    std::vector<const Variable*> vars_;
  } inliner(buffer, value, vars);
  Stmt body = sched::ReplaceNode(root, sched::NestOf(root, producer), Stmt());
  body = inliner.Mutate(body);
  body = DropUnusedAllocate(body, buffer);
  if (Status scoped = sched::CheckAllocationScopes(func_, body); !scoped.ok()) return fail(scoped.message());
  SetBody(body);
  Record({InstructionKind::kComputeInline, {TraceArg::Ref(Name(block_rv))}});
  return Status::OK();
}

Status Schedule::ReverseComputeInline(BlockRV block_rv) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  Stmt root = func_.body;
  const Block* consumer = sched::FindBlock(root, name);
  const Store* cstore = sched::BlockStore(consumer);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("reverse_compute_inline(" + name + "): " + why); };
  if (!cstore) return fail("the block's body is not a single store");
  if (consumer->init.defined()) return fail("the block is a reduction");
  std::vector<Buffer> reads = sched::BlockReadBuffers(consumer);
  const Block* producer = nullptr;
  const BufferNode* buffer = nullptr;
  for (const Buffer& b : reads) {
    if (sched::IsParam(func_, b.get())) continue;
    auto writers = Writers(root, b.get());
    if (writers.size() != 1) continue;
    if (producer) return fail("it reads more than one intermediate buffer");
    producer = writers[0];
    buffer = b.get();
  }
  if (!producer) return fail("it reads no intermediate buffer with a single producer");
  if (producer->init.defined()) {
    return fail("its producer " + producer->name + " is a reduction; use reverse_compute_at to fuse it into the tile");
  }
  if (Readers(root, buffer, producer).size() != 1) return fail(buffer->name + " has other readers");
  // A unit zero index (acc[0, k] for a consumer whose n has extent 1) reads
  // what its iteration variable does: rewritten to it, the consumer is
  // checked and inlined as if written with the variable.
  if (Stmt canonical = sched::ReadUnitZerosAtIterVars(root, consumer, buffer); !canonical.same_as(root)) {
    const std::string producer_name = producer->name;
    root = canonical;
    consumer = sched::FindBlock(root, name);
    cstore = sched::BlockStore(consumer);
    producer = sched::FindBlock(root, producer_name);
  }
  auto loads = sched::BlockLoadsOf(consumer, buffer);
  std::map<const Variable*, size_t> dim_of;
  for (size_t d = 0; d < loads[0]->indices.size(); ++d) {
    const Variable* v = loads[0]->indices[d].as<Variable>();
    if (!v || dim_of.count(v)) return fail("it must read " + buffer->name + " at distinct iteration variables");
    dim_of[v] = d;
  }
  for (const Load* l : loads) {
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (l->indices[d].as<Variable>() != loads[0]->indices[d].as<Variable>()) return fail("it reads " + buffer->name + " at different places");
    }
  }
  if (dim_of.size() != consumer->iter_vars.size()) return fail("its iteration space differs from " + buffer->name + "'s shape");
  for (const IterVar& iv : consumer->iter_vars) {
    if (iv.extent != buffer->shape[dim_of.at(iv.var.get())]) {
      return fail("it covers only part of " + buffer->name + " (iteration variable " + iv.var.name() + " has extent " +
                  std::to_string(iv.extent) + ", the buffer " + std::to_string(buffer->shape[dim_of.at(iv.var.get())]) + ")");
    }
  }
  {
    // Its other inputs must be complete where the producer runs.
    std::vector<const Block*> order = sched::BlocksUnder(root);
    const BufferNode* late = nullptr;
    if (const Block* w = LateWriter(root, consumer, buffer, ProgramIndex(order, producer), &late)) {
      return fail("it also reads " + late->name + ", which block " + w->name + " writes after " + producer->name);
    }
  }
  const Store* pstore = sched::BlockStore(producer);
  std::map<const Variable*, Expr> to_producer;
  for (const auto& [v, d] : dim_of) to_producer[v] = pstore->indices[d];
  class LoadReplacer : public IRMutator {
   public:
    LoadReplacer(const BufferNode* b, Expr v) : b_(b), v_(std::move(v)) {}
    using IRMutator::Mutate;
   protected:
    Expr MutateLoad(const Load* op, const Expr& self) override {
      if (op->buffer.get() == b_) return v_;
      return IRMutator::MutateLoad(op, self);
    }
   private:
    const BufferNode* b_;
    Expr v_;
  } replacer(buffer, pstore->value);
  Expr value = replacer.Mutate(Substitute(cstore->value, to_producer));
  std::vector<Expr> indices;
  for (const Expr& i : cstore->indices) indices.push_back(Substitute(i, to_producer));
  Stmt new_producer = Block::Make(producer->name, producer->iter_vars, Stmt(), Store::Make(cstore->buffer, value, indices),
                                  producer->predicate);
  Stmt body = sched::ReplaceNode(root, sched::NestOf(root, consumer), Stmt());
  body = sched::ReplaceNode(body, sched::FindBlock(body, producer->name), new_producer);
  body = DropUnusedAllocate(body, buffer);
  if (Status scoped = sched::CheckAllocationScopes(func_, body); !scoped.ok()) return fail(scoped.message());
  SetBody(body);
  Record({InstructionKind::kReverseComputeInline, {TraceArg::Ref(Name(block_rv))}});
  return Status::OK();
}

}  // namespace tunefarm
