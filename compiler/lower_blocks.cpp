#include "tunefarm/compiler/lower_blocks.h"

#include "tunefarm/compiler/ir_visitor.h"

namespace tunefarm::ir {

namespace {

std::map<const Variable*, Expr> BindingMap(const Block* b) {
  std::map<const Variable*, Expr> m;
  for (const IterVar& iv : b->iter_vars) m[iv.var.get()] = iv.binding;
  return m;
}

class BlockLowerer : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  // A perfect nest of loops ending in a block whose reduce iter vars are bound
  // to exactly these loops (each from 0 over the full extent) can run the
  // init once before the nest instead of testing a condition per iteration.
  Stmt MutateFor(const For* op, const Stmt& self) override {
    std::vector<const For*> chain;
    Stmt cur = self;
    while (const For* f = cur.as<For>()) {
      chain.push_back(f);
      cur = f->body;
    }
    const Block* block = cur.as<Block>();
    if (block && block->init.defined() && !block->predicate.defined() && HoistableInit(chain, block)) {
      auto bindings = BindingMap(block);
      Stmt init = Substitute(block->init, bindings);
      Stmt nest = Substitute(block->body, bindings);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const For* f = *it;
        nest = For::Make(f->loop_var, f->min, f->extent, f->kind, nest, f->thread_tag, f->annotations);
      }
      return SeqStmt::Make({init, Mutate(nest)});
    }
    return IRMutator::MutateFor(op, self);
  }

  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    Stmt lowered = LowerBlock(op);
    if (op->predicate.defined()) return IfThenElse::Make(op->predicate, lowered);
    return lowered;
  }

 private:
  Stmt LowerBlock(const Block* op) {
    auto bindings = BindingMap(op);
    Stmt body = Mutate(Substitute(op->body, bindings));
    if (!op->init.defined()) return body;
    Expr at_start;
    for (const IterVar& iv : op->iter_vars) {
      if (iv.kind != IterKind::kReduce) continue;
      Expr is_zero = EQ::Make(iv.binding, IntImm::Make(iv.binding.dtype(), 0));
      at_start = at_start.defined() ? And::Make(at_start, is_zero) : is_zero;
    }
    Stmt init = Mutate(Substitute(op->init, bindings));
    if (!at_start.defined()) return SeqStmt::Make({init, body});
    return SeqStmt::Make({IfThenElse::Make(at_start, init), body});
  }

  static bool HoistableInit(const std::vector<const For*>& chain, const Block* block) {
    std::vector<const IterVar*> reduce;
    for (const IterVar& iv : block->iter_vars) {
      if (iv.kind == IterKind::kReduce) reduce.push_back(&iv);
    }
    if (reduce.empty() || reduce.size() != chain.size()) return false;
    for (const For* f : chain) {
      const int64_t* min = AsConstInt(f->min);
      const int64_t* extent = AsConstInt(f->extent);
      if (!min || *min != 0 || !extent || f->kind == ForKind::kThreadBinding) return false;
      bool bound = false;
      for (const IterVar* iv : reduce) {
        const auto* v = iv->binding.as<Variable>();
        if (v == f->loop_var.get() && iv->extent == *extent) bound = true;
      }
      if (!bound) return false;
    }
    // Spatial bindings and the init must not depend on the reduction loops.
    for (const IterVar& iv : block->iter_vars) {
      if (iv.kind != IterKind::kSpatial) continue;
      for (const For* f : chain) {
        if (UsesVar(iv.binding, f->loop_var.get())) return false;
      }
    }
    return true;
  }
};

}  // namespace

Stmt LowerBlocks(const Stmt& s) { return BlockLowerer().Mutate(s); }

}  // namespace tunefarm::ir
