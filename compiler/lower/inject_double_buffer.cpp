// Double-buffered shared-memory stages (the header says what the output
// looks like). The pass runs after InsertGpuBarriers because that pass
// tracks whole buffers: it would see the store into one half and the reads
// of the other as a conflict and put back the second barrier per iteration
// this pass exists to remove. Here the halves are known apart, so the
// barriers are placed by hand and the rest of the kernel keeps those
// InsertGpuBarriers put.
#include "tunefarm/compiler/lower/inject_double_buffer.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm {

namespace {

using namespace ir;

using BufferMap = std::map<const BufferNode*, Buffer>;  // a fetched buffer -> its doubled one

std::string LoopName(const For* f) { return "double buffer: loop '" + f->loop_var.name() + "'"; }

bool Annotated(const For* f) {
  auto it = f->annotations.find(kDoubleBufferAnnotation);
  return it != f->annotations.end() && it->second != 0;
}

void Flatten(const Stmt& s, std::vector<Stmt>* out) {
  if (const auto* seq = s.as<SeqStmt>()) {
    for (const Stmt& c : seq->seq) Flatten(c, out);
    return;
  }
  out->push_back(s);
}

// The shared buffers a statement loads and stores, and whether it holds a barrier.
struct SharedUse {
  std::vector<const Store*> stores;  // stores into shared buffers
  bool loads_shared = false;
  bool barrier = false;
};

SharedUse Uses(const Stmt& s) {
  SharedUse use;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBarrier) use.barrier = true;
    if (n->kind == IRNodeKind::kLoad) {
      use.loads_shared |= static_cast<const Load*>(n)->buffer->scope == MemoryScope::kShared;
    }
    if (n->kind == IRNodeKind::kStore) {
      const auto* st = static_cast<const Store*>(n);
      if (st->buffer->scope == MemoryScope::kShared) use.stores.push_back(st);
    }
  });
  return use;
}

// Rewrites one fetch nest: its store into S goes to S2[slot] (the prologue),
// to the thread's registers R, or from R to S2[slot]. Loops not bound to
// threads index R and are unrolled where R is involved; every loop gets a
// fresh variable, the nest being copied three times.
class FetchRewriter : public IRMutator {
 public:
  enum class Mode { kPrologue, kToRegisters, kFromRegisters };
  FetchRewriter(Mode mode, Buffer doubled, Buffer regs, Expr slot)
      : mode_(mode), doubled_(std::move(doubled)), regs_(std::move(regs)), slot_(std::move(slot)) {}
  using IRMutator::Mutate;

  // Elements R needs: the product of the extents of the loops around the store.
  int64_t register_count() const { return register_count_; }
  const Status& status() const { return status_; }

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Var fresh(op->loop_var.name(), op->loop_var.dtype());
    Stmt body = Substitute(op->body, {{op->loop_var.get(), Expr(fresh)}});
    const bool counted = op->kind != ForKind::kThreadBinding;
    if (counted) {
      const int64_t* extent = AsConstInt(op->extent);
      if (!extent && status_.ok()) {
        status_ = Status::InvalidArgument("fetch loop '" + op->loop_var.name() + "' has no constant extent");
      }
      loops_.push_back({fresh, op->min, extent ? *extent : 1});
    }
    body = Mutate(body);
    if (counted) loops_.pop_back();
    ForKind kind = op->kind;
    if (mode_ != Mode::kPrologue && kind == ForKind::kSerial) kind = ForKind::kUnrolled;
    return For::Make(fresh, op->min, op->extent, kind, body, op->thread_tag, op->annotations);
  }

  Stmt MutateStore(const Store* op, const Stmt& self) override {
    if (op->buffer->scope != MemoryScope::kShared) return IRMutator::MutateStore(op, self);
    Expr reg_index;
    int64_t count = 1;
    for (const LoopPos& l : loops_) {
      Expr term = IsZeroConst(l.min) ? Expr(l.var) : Expr(l.var) - l.min;
      reg_index = reg_index.defined() ? reg_index * l.extent + term : term;
      count *= l.extent;
    }
    if (!reg_index.defined()) reg_index = 0;
    register_count_ = count;
    std::vector<Expr> indices{slot_};
    indices.insert(indices.end(), op->indices.begin(), op->indices.end());
    switch (mode_) {
      case Mode::kPrologue:
        return Store::Make(doubled_, op->value, std::move(indices));
      case Mode::kToRegisters:
        return Store::Make(regs_, op->value, {reg_index});
      case Mode::kFromRegisters:
        return Store::Make(doubled_, Load::Make(regs_, {reg_index}), std::move(indices));
    }
    return self;
  }

 private:
  struct LoopPos {
    Var var;
    Expr min;
    int64_t extent;
  };
  Mode mode_;
  Buffer doubled_, regs_;
  Expr slot_;
  std::vector<LoopPos> loops_;
  int64_t register_count_ = 1;
  Status status_;
};

// The computation's loads of fetched buffers read the half `slot`.
class ComputeRewriter : public IRMutator {
 public:
  ComputeRewriter(const BufferMap& doubled, Expr slot) : doubled_(doubled), slot_(std::move(slot)) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    auto it = doubled_.find(op->buffer.get());
    if (it == doubled_.end()) return IRMutator::MutateLoad(op, self);
    std::vector<Expr> indices{slot_};
    for (const Expr& i : op->indices) indices.push_back(Mutate(i));
    return Load::Make(it->second, std::move(indices));
  }

 private:
  const BufferMap& doubled_;
  Expr slot_;
};

Expr Slot(const For* loop, Expr k) {
  return IsZeroConst(loop->min) ? std::move(k) % 2 : (std::move(k) - loop->min) % 2;
}

class DoubleBufferInjector : public IRMutator {
 public:
  using IRMutator::Mutate;
  const Status& status() const { return status_; }
  const BufferMap& doubled() const { return doubled_; }

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (!Annotated(op) || !status_.ok()) return IRMutator::MutateFor(op, self);
    Result<Stmt> rewritten = Rewrite(op);
    if (!rewritten.ok()) {
      status_ = rewritten.status();
      return self;
    }
    return *rewritten;
  }

 private:
  Result<Stmt> Rewrite(const For* op) {
    if (op->kind != ForKind::kSerial && op->kind != ForKind::kUnrolled) {
      return Status::InvalidArgument(LoopName(op) + " is " + ForKindName(op->kind) +
                                     "; only a serial loop around a shared-memory stage can be double-buffered");
    }
    std::vector<Stmt> items, fetches, compute;
    Flatten(op->body, &items);
    bool had_barrier = false;
    for (const Stmt& s : items) {
      if (s.as<Barrier>()) {
        had_barrier = true;
        continue;
      }
      SharedUse use = Uses(s);
      if (compute.empty() && !use.stores.empty() && !use.loads_shared && !use.barrier) {
        if (use.stores.size() != 1) {
          return Status::InvalidArgument(LoopName(op) + ": a fetch into shared memory stores more than once");
        }
        fetches.push_back(s);
        continue;
      }
      compute.push_back(s);
    }
    if (fetches.empty()) {
      return Status::InvalidArgument(LoopName(op) + " has no shared-memory stage (a fetch into a shared buffer) "
                                                    "at the start of its body");
    }
    if (compute.empty()) return Status::InvalidArgument(LoopName(op) + " computes nothing on its shared stage");
    if (!had_barrier) {
      return Status::InvalidArgument(LoopName(op) + ": its shared stage is not shared by the block's threads "
                                                    "(no barrier in the loop)");
    }
    BufferMap local_map;
    for (const Stmt& f : fetches) {
      const Buffer& s = Uses(f).stores[0]->buffer;
      if (local_map.count(s.get()) || doubled_.count(s.get())) {
        return Status::InvalidArgument(LoopName(op) + ": shared buffer '" + s->name + "' is fetched twice");
      }
      std::vector<int64_t> shape{2};
      shape.insert(shape.end(), s->shape.begin(), s->shape.end());
      Buffer d = MakeBuffer(s->name, s->dtype, shape, MemoryScope::kShared);
      local_map[s.get()] = d;
    }
    // The next tile is read before this iteration computes: nothing the
    // computation writes may be what a fetch reads.
    std::set<const BufferNode*> fetched_from;
    for (const Stmt& f : fetches) {
      PostOrderVisit(f, [&](const IRNode* n) {
        if (n->kind == IRNodeKind::kLoad) fetched_from.insert(static_cast<const Load*>(n)->buffer.get());
      });
    }
    for (const Stmt& c : compute) {
      if (Uses(c).barrier) return Status::InvalidArgument(LoopName(op) + ": its computation holds a barrier");
      std::string written;
      PostOrderVisit(c, [&](const IRNode* n) {
        if (n->kind != IRNodeKind::kStore) return;
        const BufferNode* b = static_cast<const Store*>(n)->buffer.get();
        if (local_map.count(b) || fetched_from.count(b)) written = b->name;
      });
      if (!written.empty()) {
        return Status::InvalidArgument(LoopName(op) + ": its computation writes '" + written +
                                       "', which its shared stage fetches");
      }
    }

    const Expr k = op->loop_var;
    const Expr next = k + 1;
    const Expr guard = LT::Make(next, IsZeroConst(op->min) ? op->extent : op->min + op->extent);
    std::vector<Stmt> prologue, to_regs, from_regs;
    std::vector<Buffer> regs;
    for (const Stmt& f : fetches) {
      const Buffer& s = Uses(f).stores[0]->buffer;
      const Buffer& d = local_map[s.get()];
      FetchRewriter pro(FetchRewriter::Mode::kPrologue, d, nullptr, 0);
      prologue.push_back(Substitute(pro.Mutate(f), {{op->loop_var.get(), op->min}}));
      TF_RETURN_IF_ERROR(pro.status());
      Buffer r = MakeBuffer(s->name + "_reg", s->dtype, {pro.register_count()}, MemoryScope::kLocal);
      regs.push_back(r);
      FetchRewriter load(FetchRewriter::Mode::kToRegisters, d, r, 0);
      to_regs.push_back(Substitute(load.Mutate(f), {{op->loop_var.get(), next}}));
      // Slot(k) becomes Slot(k + 1) with the substitution below.
      FetchRewriter store(FetchRewriter::Mode::kFromRegisters, d, r, Slot(op, k));
      from_regs.push_back(Substitute(store.Mutate(f), {{op->loop_var.get(), next}}));
    }
    ComputeRewriter compute_rewriter(local_map, Slot(op, k));
    std::vector<Stmt> body{IfThenElse::Make(guard, SeqStmt::Make(to_regs))};
    for (const Stmt& c : compute) body.push_back(compute_rewriter.Mutate(c));
    body.push_back(IfThenElse::Make(guard, SeqStmt::Make(from_regs)));
    body.push_back(Barrier::Make());
    Stmt loop_body = SeqStmt::Make(std::move(body));
    for (auto it = regs.rbegin(); it != regs.rend(); ++it) loop_body = Allocate::Make(*it, loop_body);
    std::map<std::string, int64_t> annotations = op->annotations;
    annotations.erase(kDoubleBufferAnnotation);
    prologue.push_back(Barrier::Make());
    prologue.push_back(For::Make(op->loop_var, op->min, op->extent, op->kind, loop_body, op->thread_tag, annotations));
    doubled_.insert(local_map.begin(), local_map.end());
    return SeqStmt::Make(std::move(prologue));
  }

  Status status_;
  BufferMap doubled_;
};

// Allocates each doubled buffer where its original was.
class AllocationRewriter : public IRMutator {
 public:
  explicit AllocationRewriter(const BufferMap& doubled) : doubled_(doubled) {}
  using IRMutator::Mutate;
  int replaced() const { return replaced_; }

 protected:
  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    auto it = doubled_.find(op->buffer.get());
    if (it == doubled_.end()) return IRMutator::MutateAllocate(op, self);
    ++replaced_;
    return Allocate::Make(it->second, Mutate(op->body));
  }

 private:
  const BufferMap& doubled_;
  int replaced_ = 0;
};

}  // namespace

Result<Stmt> InjectDoubleBuffers(const Stmt& body) {
  if (!body.defined()) return body;
  DoubleBufferInjector injector;
  Stmt out = injector.Mutate(body);
  TF_RETURN_IF_ERROR(injector.status());
  if (injector.doubled().empty()) return out;
  AllocationRewriter allocations(injector.doubled());
  out = allocations.Mutate(out);
  // Each fetched buffer is allocated once, outside its loop, and used only there.
  std::string stray;
  PostOrderVisit(out, [&](const IRNode* n) {
    const BufferNode* b = nullptr;
    if (n->kind == IRNodeKind::kLoad) b = static_cast<const Load*>(n)->buffer.get();
    if (n->kind == IRNodeKind::kStore) b = static_cast<const Store*>(n)->buffer.get();
    if (b && injector.doubled().count(b)) stray = b->name;
  });
  if (!stray.empty()) {
    return Status::InvalidArgument("double buffer: shared buffer '" + stray +
                                   "' is used outside the double-buffered loop");
  }
  if (allocations.replaced() != int(injector.doubled().size())) {
    return Status::InvalidArgument("double buffer: a fetched shared buffer is not allocated outside its loop");
  }
  return out;
}

}  // namespace tunefarm
