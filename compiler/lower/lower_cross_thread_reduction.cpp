// The cross-thread all-reduce as plain GPU IR: a shared-memory tree whose
// steps are sibling threadIdx.x loops, so that the interpreter runs it and
// the code generator prints it as any barrier-separated code, with no new
// IR node (the header says what the output looks like).
#include "tunefarm/compiler/lower/lower_cross_thread_reduction.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {

namespace {

using namespace ir;

bool HasPrefix(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool IsThreadIdx(const For* f) { return f->kind == ForKind::kThreadBinding && HasPrefix(f->thread_tag, "threadIdx."); }
bool IsBlockIdx(const For* f) { return f->kind == ForKind::kThreadBinding && HasPrefix(f->thread_tag, "blockIdx."); }

std::string LoopName(const For* f) { return "loop '" + f->loop_var.name() + "' (" + f->thread_tag + ")"; }

bool ContainsBlockIdx(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kFor) found |= IsBlockIdx(static_cast<const For*>(n));
  });
  return found;
}

// True when a reduction block under `loop` reduces over its variable: the
// loop splits one reduction across threads.
bool ReducesAcrossThreads(const For* loop) {
  bool found = false;
  PostOrderVisit(loop->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kBlock) return;
    const auto* b = static_cast<const Block*>(n);
    if (!b->init.defined()) return;
    for (const IterVar& iv : b->iter_vars) {
      found |= iv.kind == IterKind::kReduce && UsesVar(iv.binding, loop->loop_var.get());
    }
  });
  return found;
}

// D[v] = combine(D[v], term) (or combine(term, D[v])): the term and the
// combiner, or false.
bool MatchUpdate(const Store* store, Expr* term, std::function<Expr(Expr, Expr)>* combine) {
  auto is_acc = [&](const Expr& e) {
    const Load* l = e.as<Load>();
    if (!l || l->buffer.get() != store->buffer.get() || l->indices.size() != store->indices.size()) return false;
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (!ExprEqual(l->indices[d], store->indices[d])) return false;
    }
    return true;
  };
#define TF_MATCH(Node, Make)                                              \
  if (const auto* op = store->value.as<Node>()) {                         \
    if (is_acc(op->a) || is_acc(op->b)) {                                 \
      *term = is_acc(op->a) ? op->b : op->a;                              \
      *combine = [](Expr a, Expr b) { return Make(std::move(a), std::move(b)); }; \
      return true;                                                        \
    }                                                                     \
  }
  TF_MATCH(Add, Add::Make)
  TF_MATCH(Mul, Mul::Make)
  TF_MATCH(Max, Max::Make)
  TF_MATCH(Min, Min::Make)
#undef TF_MATCH
  return false;
}

Expr Index(int64_t v) { return IntImm::Make(DataType::Index(), v); }

class CrossThreadLowerer : public IRMutator {
 public:
  using IRMutator::Mutate;
  explicit CrossThreadLowerer(const Stmt& body) {
    PostOrderVisit(body, [&](const IRNode* n) {
      if (n->kind == IRNodeKind::kLoad) names_.insert(static_cast<const Load*>(n)->buffer->name);
      if (n->kind == IRNodeKind::kStore) names_.insert(static_cast<const Store*>(n)->buffer->name);
      if (n->kind == IRNodeKind::kAllocate) names_.insert(static_cast<const Allocate*>(n)->buffer->name);
    });
  }
  const Status& status() const { return status_; }

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (!status_.ok()) return self;
    if (IsBlockIdx(op)) {
      const bool saved = under_block_idx_;
      under_block_idx_ = true;
      Stmt body = Mutate(op->body);
      under_block_idx_ = saved;
      // The partial-result buffers live one per block: under the last blockIdx loop.
      if (!ContainsBlockIdx(op->body)) {
        for (const Buffer& b : pending_) body = Allocate::Make(b, body);
        pending_.clear();
      }
      if (body.same_as(op->body)) return self;
      return For::Make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, op->annotations);
    }
    if (IsThreadIdx(op) && ReducesAcrossThreads(op)) return Rewrite(op, self);
    const bool row = op->thread_tag == "threadIdx.y" || op->thread_tag == "threadIdx.z";
    const bool lane = op->thread_tag == "threadIdx.x" || op->thread_tag == "vthread";
    if (row) rows_.push_back(op);
    const bool saved_lane = under_lane_;
    under_lane_ |= lane;
    Stmt out = IRMutator::MutateFor(op, self);
    under_lane_ = saved_lane;
    if (row) rows_.pop_back();
    return out;
  }

 private:
  std::string UniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = base + std::to_string(i);
    names_.insert(name);
    return name;
  }

  Stmt Fail(const Stmt& self, const std::string& why) {
    status_ = Status::InvalidArgument("cross-thread reduction: " + why);
    return self;
  }

  Stmt Rewrite(const For* op, const Stmt& self) {
    const std::string loop = LoopName(op);
    if (op->thread_tag != "threadIdx.x") return Fail(self, loop + " reduces across threads; only threadIdx.x may");
    if (under_lane_) return Fail(self, loop + " lies under another threadIdx.x or vthread loop");
    if (!under_block_idx_) return Fail(self, loop + " is not under a blockIdx loop");
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr || *extent < 1 || !IsZeroConst(op->min)) {
      return Fail(self, loop + " needs a constant extent and a zero minimum");
    }
    const int64_t threads = *extent;
    // The loops from here down to the block: all reduction loops of it.
    std::vector<const For*> inner;
    Stmt cur = op->body;
    while (const For* f = cur.as<For>()) {
      inner.push_back(f);
      cur = f->body;
    }
    const Block* block = cur.as<Block>();
    if (block == nullptr || !block->init.defined()) {
      return Fail(self, loop + " must enclose a single reduction block through loops only");
    }
    const Store* init = block->init.as<Store>();
    const Store* update = block->body.as<Store>();
    Expr term;
    std::function<Expr(Expr, Expr)> combine;
    if (!init || !update || init->buffer.get() != update->buffer.get() || !MatchUpdate(update, &term, &combine)) {
      return Fail(self, "block " + block->name + " under " + loop + " is not D[v] = D[v] op term (op: + * max min)");
    }
    std::vector<const Variable*> reduce_vars = {op->loop_var.get()};
    for (const For* f : inner) {
      if (f->kind == ForKind::kThreadBinding) return Fail(self, LoopName(f) + " is bound inside " + loop);
      reduce_vars.push_back(f->loop_var.get());
    }
    auto uses_reduce = [&](const Expr& e) {
      for (const Variable* v : reduce_vars) {
        if (UsesVar(e, v)) return true;
      }
      return false;
    };
    std::map<const Variable*, Expr> bindings;
    for (const IterVar& iv : block->iter_vars) {
      bindings[iv.var.get()] = iv.binding;
      if (iv.kind == IterKind::kSpatial && uses_reduce(iv.binding)) {
        return Fail(self, "block " + block->name + ": output index " + iv.var.name() + " depends on " + loop +
                              " or a loop inside it");
      }
    }
    std::vector<Expr> row_vars;
    std::vector<int64_t> shape;
    for (const For* r : rows_) {
      const int64_t* e = AsConstInt(r->extent);
      if (e == nullptr) return Fail(self, LoopName(r) + " around " + loop + " has no constant extent");
      row_vars.push_back(r->loop_var);
      shape.push_back(*e);
    }
    shape.push_back(threads);
    Buffer red = MakeBuffer(UniqueName(block->name + "_red"), update->buffer->dtype, shape, MemoryScope::kShared);
    auto at = [&](const Expr& lane) {
      std::vector<Expr> idx = row_vars;
      idx.push_back(lane);
      return idx;
    };
    // The guard splits: what bounds the reduction stays with each thread's
    // partial sums; what bounds the output guards the final write.
    std::vector<Expr> reduce_guard, output_guard;
    if (block->predicate.defined()) {
      for (const Expr& c : Conjuncts(Substitute(block->predicate, bindings))) {
        (uses_reduce(c) ? reduce_guard : output_guard).push_back(c);
      }
    }
    auto all = [](std::vector<Expr> terms) {
      Expr e;
      for (Expr& t : terms) e = e.defined() ? And::Make(e, t) : t;
      return e;
    };

    // Each thread accumulates in a register and stores its partial once: no
    // shared-memory traffic (and no barrier) inside the reduction loops.
    const Var& tx = op->loop_var;
    Buffer part = MakeBuffer(UniqueName(block->name + "_part"), update->buffer->dtype, {1}, MemoryScope::kLocal);
    const std::vector<Expr> zero = {Index(0)};
    Stmt accumulate = Store::Make(part, combine(Load::Make(part, zero), Substitute(term, bindings)), zero);
    if (!reduce_guard.empty() || !output_guard.empty()) {
      std::vector<Expr> guard = reduce_guard;
      guard.insert(guard.end(), output_guard.begin(), output_guard.end());
      accumulate = IfThenElse::Make(all(guard), accumulate);
    }
    for (size_t i = inner.size(); i-- > 0;) {
      const For* f = inner[i];
      accumulate = For::Make(f->loop_var, f->min, f->extent, f->kind, accumulate, f->thread_tag, f->annotations);
    }
    Stmt partials = Allocate::Make(
        part, SeqStmt::Make({Store::Make(part, Substitute(init->value, bindings), zero), accumulate,
                             Store::Make(red, Load::Make(part, zero), at(tx))}));
    std::vector<Stmt> steps = {For::Make(tx, op->min, op->extent, op->kind, partials, op->thread_tag, op->annotations)};
    auto step = [&](int64_t active, int64_t offset) {
      Var x(tx.name() + "_s" + std::to_string(offset), tx.dtype());
      Stmt add = Store::Make(red, combine(Load::Make(red, at(x)), Load::Make(red, at(Expr(x) + Index(offset)))), at(x));
      steps.push_back(For::Make(x, Index(0), Index(threads), ForKind::kThreadBinding,
                                IfThenElse::Make(LT::Make(x, Index(active)), add), "threadIdx.x"));
    };
    int64_t pow2 = 1;
    while (pow2 * 2 <= threads) pow2 *= 2;
    if (pow2 < threads) step(threads - pow2, pow2);  // fold the tail past the power of two
    for (int64_t s = pow2 / 2; s >= 1; s /= 2) step(s, s);
    Var w(tx.name() + "_w", tx.dtype());
    std::vector<Expr> write_guard = {EQ::Make(w, Index(0))};
    write_guard.insert(write_guard.end(), output_guard.begin(), output_guard.end());
    std::vector<Expr> out_idx;
    for (const Expr& e : update->indices) out_idx.push_back(Substitute(e, bindings));
    Stmt write =
        IfThenElse::Make(all(write_guard), Store::Make(update->buffer, Load::Make(red, at(Index(0))), out_idx));
    steps.push_back(For::Make(w, Index(0), Index(threads), ForKind::kThreadBinding, write, "threadIdx.x"));
    pending_.push_back(red);
    return SeqStmt::Make(std::move(steps));
  }

  Status status_;
  std::set<std::string> names_;
  std::vector<const For*> rows_;  // threadIdx.y / .z loops around the current node
  std::vector<Buffer> pending_;   // partial-result buffers to allocate under the blockIdx loop
  bool under_block_idx_ = false;
  bool under_lane_ = false;  // under a threadIdx.x or vthread loop
};

}  // namespace

Result<Stmt> LowerCrossThreadReductions(const Stmt& body) {
  if (!body.defined()) return body;
  CrossThreadLowerer lowerer(body);
  Stmt out = lowerer.Mutate(body);
  TF_RETURN_IF_ERROR(lowerer.status());
  return out;
}

}  // namespace tunefarm
