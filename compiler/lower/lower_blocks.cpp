#include "tunefarm/compiler/lower/lower_blocks.h"

#include "tunefarm/compiler/ir/ir_visitor.h"

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
  // At the outermost loop of a block's reduction: if the nest from here down
  // to the block is perfect, holds every reduction loop, and the spatial
  // bindings do not use the reduction loops, the init runs as its own nest
  // (over the spatial loops found inside) in front of this loop, instead of
  // testing "first reduction iteration?" in the innermost body.
  Stmt MutateFor(const For* op, const Stmt& self) override {
    std::vector<const For*> chain;
    Stmt cur = self;
    while (const For* f = cur.as<For>()) {
      chain.push_back(f);
      cur = f->body;
    }
    const Block* block = cur.as<Block>();
    if (block && block->init.defined() && IsReduceLoop(block, op)) {
      if (Stmt split = DecomposeReduction(chain, block); split.defined()) return split;
    }
    return IRMutator::MutateFor(op, self);
  }

  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    Stmt lowered = LowerBlock(op);
    if (op->predicate.defined()) return IfThenElse::Make(op->predicate, lowered);
    return lowered;
  }

 private:
  static bool IsReduceLoop(const Block* block, const For* loop) {
    for (const IterVar& iv : block->iter_vars) {
      if (iv.kind == IterKind::kReduce && UsesVar(iv.binding, loop->loop_var.get())) return true;
    }
    return false;
  }

  Stmt DecomposeReduction(const std::vector<const For*>& chain, const Block* block) {
    if (block->predicate.defined()) return Stmt();
    std::vector<const For*> reduce_loops, spatial_loops;
    for (const For* f : chain) {
      (IsReduceLoop(block, f) ? reduce_loops : spatial_loops).push_back(f);
      if (f->kind == ForKind::kThreadBinding || !AsConstInt(f->extent)) return Stmt();
    }
    for (const IterVar& iv : block->iter_vars) {
      if (iv.kind == IterKind::kSpatial) {
        for (const For* f : reduce_loops) {
          if (UsesVar(iv.binding, f->loop_var.get())) return Stmt();
        }
      } else {
        // Every variable of a reduction binding must be one of the chain's loops.
        bool covered = true;
        PostOrderVisit(Evaluate::Make(iv.binding), [&](const IRNode* n) {
          if (n->kind != IRNodeKind::kVariable) return;
          const auto* v = static_cast<const Variable*>(n);
          bool in_chain = false;
          for (const For* f : reduce_loops) in_chain |= f->loop_var.get() == v;
          covered &= in_chain;
        });
        if (!covered) return Stmt();
      }
    }
    auto bindings = BindingMap(block);
    // The init nest gets fresh loop variables: one variable, one loop.
    std::map<const Variable*, Expr> fresh;
    std::vector<Var> init_vars;
    for (const For* f : spatial_loops) {
      init_vars.emplace_back(f->loop_var.name() + "_init", f->loop_var.dtype());
      fresh[f->loop_var.get()] = init_vars.back();
    }
    Stmt init = Substitute(Substitute(block->init, bindings), fresh);
    for (size_t i = spatial_loops.size(); i-- > 0;) {
      const For* f = spatial_loops[i];
      ForKind kind = f->kind == ForKind::kParallel ? ForKind::kParallel : f->kind;
      init = For::Make(init_vars[i], f->min, f->extent, kind, init, f->thread_tag);
    }
    Stmt nest = Substitute(block->body, bindings);
    for (size_t i = chain.size(); i-- > 0;) {
      const For* f = chain[i];
      nest = For::Make(f->loop_var, f->min, f->extent, f->kind, nest, f->thread_tag, f->annotations);
    }
    return SeqStmt::Make({Mutate(init), Mutate(nest)});
  }

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
