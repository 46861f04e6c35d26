#include "tunefarm/compiler/lower/insert_gpu_barriers.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {

namespace {

using namespace ir;

using BufferSet = std::set<const BufferNode*>;

bool Intersects(const BufferSet& a, const BufferSet& b) {
  return std::any_of(a.begin(), a.end(), [&](const BufferNode* x) { return b.count(x) != 0; });
}

// The shared buffers a piece of code reads and writes.
struct Accesses {
  BufferSet reads, writes;
  void Add(const Accesses& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
};

// True when `after` running on one thread may race with `before` having run
// on another: a read of what was written, or a write of what was touched.
bool Conflicts(const Accesses& before, const Accesses& after) {
  return Intersects(before.writes, after.reads) || Intersects(before.writes, after.writes) ||
         Intersects(before.reads, after.writes);
}

Accesses CollectAccesses(const Stmt& s) {
  Accesses acc;
  if (!s.defined()) return acc;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kLoad) {
      const auto* load = static_cast<const Load*>(n);
      if (load->buffer->scope == MemoryScope::kShared) acc.reads.insert(load->buffer.get());
    } else if (n->kind == IRNodeKind::kStore) {
      const auto* store = static_cast<const Store*>(n);
      if (store->buffer->scope == MemoryScope::kShared) acc.writes.insert(store->buffer.get());
    }
  });
  return acc;
}

bool ContainsBarrier(const Stmt& s) {
  bool found = false;
  if (s.defined()) PostOrderVisit(s, [&](const IRNode* n) { found |= n->kind == IRNodeKind::kBarrier; });
  return found;
}

// What a statement does to shared memory before its first barrier (head) and
// after its last one (tail); without a barrier both are everything it does.
struct Summary {
  bool has_barrier = false;
  Accesses head, tail;
};

Summary Summarize(const Stmt& s) {
  Summary out;
  if (!s.defined()) return out;
  if (!ContainsBarrier(s)) {
    out.head = out.tail = CollectAccesses(s);
    return out;
  }
  if (s.as<Barrier>()) {
    out.has_barrier = true;
    return out;
  }
  if (const auto* seq = s.as<SeqStmt>()) {
    for (const Stmt& c : seq->seq) {
      Summary cs = Summarize(c);
      if (!out.has_barrier) out.head.Add(cs.head);
      if (cs.has_barrier) {
        out.has_barrier = true;
        out.tail = cs.tail;
      } else {
        out.tail.Add(cs.tail);
      }
    }
    return out;
  }
  if (const auto* f = s.as<For>()) return Summarize(f->body);
  if (const auto* a = s.as<Allocate>()) return Summarize(a->body);
  if (const auto* l = s.as<LetStmt>()) return Summarize(l->body);
  if (const auto* i = s.as<IfThenElse>()) {
    Summary t = Summarize(i->then_case), e = Summarize(i->else_case);
    out.has_barrier = t.has_barrier || e.has_barrier;
    out.head = t.head;
    out.head.Add(e.head);
    out.tail = t.tail;
    out.tail.Add(e.tail);
    return out;
  }
  if (const auto* b = s.as<Block>()) {
    return Summarize(b->init.defined() ? SeqStmt::Make({b->init, b->body}) : b->body);
  }
  // Any other statement holding a barrier: treat it as barrier-free, whole.
  out.head = out.tail = CollectAccesses(s);
  return out;
}

// Appends a barrier at the end of `body`, inside the Allocate / LetStmt
// wrappers around its sequence so that it sees the same scope.
Stmt AppendBarrier(const Stmt& body) {
  if (const auto* a = body.as<Allocate>()) return Allocate::Make(a->buffer, AppendBarrier(a->body));
  if (const auto* l = body.as<LetStmt>()) return LetStmt::Make(l->var, l->value, AppendBarrier(l->body));
  std::vector<Stmt> seq;
  if (const auto* s = body.as<SeqStmt>()) {
    seq = s->seq;
  } else {
    seq.push_back(body);
  }
  seq.push_back(Barrier::Make());
  return SeqStmt::Make(std::move(seq));
}

bool IsThreadIdx(const For* f) {
  return f->kind == ForKind::kThreadBinding && f->thread_tag.rfind("threadIdx.", 0) == 0;
}

// Largest constant extent per threadIdx tag under a kernel's root: the block's shape.
std::map<std::string, int64_t> BlockDims(const Stmt& kernel) {
  std::map<std::string, int64_t> dims;
  PostOrderVisit(kernel, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kFor) return;
    const auto* f = static_cast<const For*>(n);
    const int64_t* e = AsConstInt(f->extent);
    if (IsThreadIdx(f) && e) dims[f->thread_tag] = std::max(dims[f->thread_tag], *e);
  });
  return dims;
}

class BarrierInserter : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    bool saved_in_kernel = in_kernel_, saved_divergent = divergent_;
    std::map<std::string, int64_t> saved_dims;
    if (op->kind == ForKind::kThreadBinding && !in_kernel_) {
      in_kernel_ = true;
      saved_dims.swap(block_dims_);
      block_dims_ = BlockDims(self);
    }
    if (IsThreadIdx(op)) {
      thread_vars_.insert(op->loop_var.get());
      // Threads past a smaller extent skip this loop's body: a barrier in it
      // would be reached by only some of them.
      const int64_t* e = AsConstInt(op->extent);
      if (!e || *e < block_dims_[op->thread_tag]) divergent_ = true;
    } else if (DependsOnThread(op->min) || DependsOnThread(op->extent)) {
      thread_vars_.insert(op->loop_var.get());
      divergent_ = true;
    }
    Stmt body = Mutate(op->body);
    // Loops that repeat within one thread: a loop-carried hazard on shared
    // memory needs a barrier at the end of the body.
    bool repeats = op->kind != ForKind::kThreadBinding || op->thread_tag == "vthread";
    if (in_kernel_ && !divergent_ && repeats) {
      Summary s = Summarize(body);
      if (s.has_barrier && Conflicts(s.tail, s.head)) body = AppendBarrier(body);
    }
    if (saved_in_kernel != in_kernel_) block_dims_.swap(saved_dims);
    in_kernel_ = saved_in_kernel;
    divergent_ = saved_divergent;
    if (body.same_as(op->body)) return self;
    return For::Make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, op->annotations);
  }

  Stmt MutateLetStmt(const LetStmt* op, const Stmt& self) override {
    if (DependsOnThread(op->value)) thread_vars_.insert(op->var.get());
    return IRMutator::MutateLetStmt(op, self);
  }

  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    bool saved = divergent_;
    if (DependsOnThread(op->condition)) divergent_ = true;
    Stmt result = IRMutator::MutateIfThenElse(op, self);
    divergent_ = saved;
    return result;
  }

  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    bool saved = divergent_;
    if (op->predicate.defined() && DependsOnThread(op->predicate)) divergent_ = true;
    bool init_divergent = divergent_;
    for (const IterVar& iv : op->iter_vars) {
      if (!DependsOnThread(iv.binding)) continue;
      thread_vars_.insert(iv.var.get());
      if (iv.kind == IterKind::kReduce) init_divergent = true;  // init runs where these are 0
    }
    Stmt body = Mutate(op->body);
    std::swap(divergent_, init_divergent);
    Stmt init = op->init.defined() ? Mutate(op->init) : op->init;
    divergent_ = saved;
    if (body.same_as(op->body) && init.same_as(op->init)) return self;
    return Block::Make(op->name, op->iter_vars, init, body, op->predicate);
  }

  Stmt MutateSeqStmt(const SeqStmt* op, const Stmt& self) override {
    Stmt mutated = IRMutator::MutateSeqStmt(op, self);
    const auto* seq = mutated.as<SeqStmt>();
    if (!in_kernel_ || divergent_ || seq == nullptr) return mutated;
    std::vector<Stmt> out;
    Accesses pending;  // shared accesses since the last barrier
    bool added = false;
    for (const Stmt& c : seq->seq) {
      if (c.as<Barrier>()) {
        pending = Accesses();
        out.push_back(c);
        continue;
      }
      Summary cs = Summarize(c);
      if (Conflicts(pending, cs.head)) {
        out.push_back(Barrier::Make());
        pending = Accesses();
        added = true;
      }
      if (cs.has_barrier) {
        pending = cs.tail;
      } else {
        pending.Add(cs.tail);
      }
      out.push_back(c);
    }
    return added ? SeqStmt::Make(std::move(out)) : mutated;
  }

 private:
  bool DependsOnThread(const Expr& e) const {
    if (!e.defined()) return false;
    return std::any_of(thread_vars_.begin(), thread_vars_.end(), [&](const Variable* v) { return UsesVar(e, v); });
  }

  bool in_kernel_ = false;
  bool divergent_ = false;                 // some threads of the block may not run the code here
  std::set<const Variable*> thread_vars_;  // variables whose value differs between threads
  std::map<std::string, int64_t> block_dims_;
};

}  // namespace

Stmt InsertGpuBarriers(const Stmt& body) {
  if (!body.defined()) return body;
  return BarrierInserter().Mutate(body);
}

}  // namespace tunefarm
