#include "tunefarm/compiler/lower/lower_blocks.h"

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/decompose_reduction.h"

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
  // At the outermost loop of a block's reduction the init may run as its own
  // nest in front of the loop instead of testing "first reduction iteration?"
  // in the innermost body (decompose_reduction.h says when).
  Stmt MutateFor(const For* op, const Stmt& self) override {
    if (auto split = DecomposeReduction(self)) return SeqStmt::Make({Mutate(split->init), Mutate(split->rest)});
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
};

}  // namespace

Stmt LowerBlocks(const Stmt& s) { return BlockLowerer().Mutate(s); }

}  // namespace tunefarm::ir
