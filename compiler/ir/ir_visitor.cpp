// Default traversals of IRVisitor and IRMutator, and Substitute/UsesVar.
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::ir {

// ------------------------------------------------------------------ visitor

void IRVisitor::Visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define TF_DISPATCH(name) \
  case IRNodeKind::k##name: return Visit##name(static_cast<const name*>(e.get()));
    TF_EXPR_NODES(TF_DISPATCH)
#undef TF_DISPATCH
    TF_STMT_KIND_CASES return;  // not an expression
  }
}

void IRVisitor::Visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define TF_DISPATCH(name) \
  case IRNodeKind::k##name: return Visit##name(static_cast<const name*>(s.get()));
    TF_STMT_NODES(TF_DISPATCH)
#undef TF_DISPATCH
    TF_EXPR_KIND_CASES return;  // not a statement
  }
}

void IRVisitor::VisitIntImm(const IntImm*) {}
void IRVisitor::VisitFloatImm(const FloatImm*) {}
void IRVisitor::VisitVariable(const Variable*) {}
#define TF_VISIT_BINARY(name)                    \
  void IRVisitor::Visit##name(const name* op) { \
    Visit(op->a);                                \
    Visit(op->b);                                \
  }
TF_VISIT_BINARY(Add) TF_VISIT_BINARY(Sub) TF_VISIT_BINARY(Mul) TF_VISIT_BINARY(Div) TF_VISIT_BINARY(Mod)
TF_VISIT_BINARY(Min) TF_VISIT_BINARY(Max) TF_VISIT_BINARY(EQ) TF_VISIT_BINARY(NE) TF_VISIT_BINARY(LT)
TF_VISIT_BINARY(LE) TF_VISIT_BINARY(GT) TF_VISIT_BINARY(GE) TF_VISIT_BINARY(And) TF_VISIT_BINARY(Or)
#undef TF_VISIT_BINARY
void IRVisitor::VisitNot(const Not* op) { Visit(op->a); }
void IRVisitor::VisitSelect(const Select* op) {
  Visit(op->condition);
  Visit(op->true_value);
  Visit(op->false_value);
}
void IRVisitor::VisitCast(const Cast* op) { Visit(op->value); }
void IRVisitor::VisitLoad(const Load* op) {
  for (const Expr& i : op->indices) Visit(i);
}
void IRVisitor::VisitCall(const Call* op) {
  for (const Expr& a : op->args) Visit(a);
}
void IRVisitor::VisitFor(const For* op) {
  Visit(op->min);
  Visit(op->extent);
  Visit(op->body);
}
void IRVisitor::VisitStore(const Store* op) {
  Visit(op->value);
  for (const Expr& i : op->indices) Visit(i);
}
void IRVisitor::VisitAllocate(const Allocate* op) { Visit(op->body); }
void IRVisitor::VisitLetStmt(const LetStmt* op) {
  Visit(op->value);
  Visit(op->body);
}
void IRVisitor::VisitIfThenElse(const IfThenElse* op) {
  Visit(op->condition);
  Visit(op->then_case);
  Visit(op->else_case);
}
void IRVisitor::VisitSeqStmt(const SeqStmt* op) {
  for (const Stmt& s : op->seq) Visit(s);
}
void IRVisitor::VisitBlock(const Block* op) {
  Visit(op->predicate);
  for (const IterVar& iv : op->iter_vars) Visit(iv.binding);
  Visit(op->init);
  Visit(op->body);
}
void IRVisitor::VisitEvaluate(const Evaluate* op) { Visit(op->value); }
void IRVisitor::VisitBarrier(const Barrier*) {}

// ------------------------------------------------------------------ mutator

Expr IRMutator::Mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define TF_DISPATCH(name) \
  case IRNodeKind::k##name: return Mutate##name(static_cast<const name*>(e.get()), e);
    TF_EXPR_NODES(TF_DISPATCH)
#undef TF_DISPATCH
    TF_STMT_KIND_CASES break;  // not an expression
  }
  return e;
}

Stmt IRMutator::Mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define TF_DISPATCH(name) \
  case IRNodeKind::k##name: return Mutate##name(static_cast<const name*>(s.get()), s);
    TF_STMT_NODES(TF_DISPATCH)
#undef TF_DISPATCH
    TF_EXPR_KIND_CASES break;  // not a statement
  }
  return s;
}

namespace {
// Mutates each element; returns true if any changed.
bool MutateAll(IRMutator* m, const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->reserve(in.size());
  for (const Expr& e : in) {
    out->push_back(m->Mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}
}  // namespace

Expr IRMutator::MutateIntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::MutateFloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::MutateVariable(const Variable*, const Expr& self) { return self; }
#define TF_MUTATE_BINARY(name)                                        \
  Expr IRMutator::Mutate##name(const name* op, const Expr& self) {    \
    Expr a = Mutate(op->a), b = Mutate(op->b);                        \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;           \
    return name::Make(std::move(a), std::move(b));                    \
  }
TF_MUTATE_BINARY(Add) TF_MUTATE_BINARY(Sub) TF_MUTATE_BINARY(Mul) TF_MUTATE_BINARY(Div)
TF_MUTATE_BINARY(Mod) TF_MUTATE_BINARY(Min) TF_MUTATE_BINARY(Max) TF_MUTATE_BINARY(EQ)
TF_MUTATE_BINARY(NE) TF_MUTATE_BINARY(LT) TF_MUTATE_BINARY(LE) TF_MUTATE_BINARY(GT)
TF_MUTATE_BINARY(GE) TF_MUTATE_BINARY(And) TF_MUTATE_BINARY(Or)
#undef TF_MUTATE_BINARY

Expr IRMutator::MutateNot(const Not* op, const Expr& self) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? self : Not::Make(a);
}
Expr IRMutator::MutateSelect(const Select* op, const Expr& self) {
  Expr c = Mutate(op->condition), t = Mutate(op->true_value), f = Mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return Select::Make(c, t, f);
}
Expr IRMutator::MutateCast(const Cast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Cast::Make(op->dtype, v);
}
Expr IRMutator::MutateLoad(const Load* op, const Expr& self) {
  std::vector<Expr> idx;
  if (!MutateAll(this, op->indices, &idx)) return self;
  return Load::Make(op->buffer, std::move(idx));
}
Expr IRMutator::MutateCall(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  if (!MutateAll(this, op->args, &args)) return self;
  return Call::Make(op->op, std::move(args));
}

Stmt IRMutator::MutateFor(const For* op, const Stmt& self) {
  Expr min = Mutate(op->min), extent = Mutate(op->extent);
  Stmt body = Mutate(op->body);
  if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
  return For::Make(op->loop_var, min, extent, op->kind, body, op->thread_tag, op->annotations);
}
Stmt IRMutator::MutateStore(const Store* op, const Stmt& self) {
  Expr value = Mutate(op->value);
  std::vector<Expr> idx;
  bool changed = MutateAll(this, op->indices, &idx);
  if (!changed && value.same_as(op->value)) return self;
  return Store::Make(op->buffer, value, std::move(idx));
}
Stmt IRMutator::MutateAllocate(const Allocate* op, const Stmt& self) {
  Stmt body = Mutate(op->body);
  return body.same_as(op->body) ? self : Allocate::Make(op->buffer, body);
}
Stmt IRMutator::MutateLetStmt(const LetStmt* op, const Stmt& self) {
  Expr value = Mutate(op->value);
  Stmt body = Mutate(op->body);
  if (value.same_as(op->value) && body.same_as(op->body)) return self;
  return LetStmt::Make(op->var, value, body);
}
Stmt IRMutator::MutateIfThenElse(const IfThenElse* op, const Stmt& self) {
  Expr c = Mutate(op->condition);
  Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return IfThenElse::Make(c, t, e);
}
Stmt IRMutator::MutateSeqStmt(const SeqStmt* op, const Stmt& self) {
  std::vector<Stmt> seq;
  bool changed = false;
  for (const Stmt& s : op->seq) {
    seq.push_back(Mutate(s));
    changed |= !seq.back().same_as(s);
  }
  return changed ? SeqStmt::Make(std::move(seq)) : self;
}
Stmt IRMutator::MutateBlock(const Block* op, const Stmt& self) {
  std::vector<IterVar> ivs = op->iter_vars;
  bool changed = false;
  for (IterVar& iv : ivs) {
    Expr b = Mutate(iv.binding);
    changed |= !b.same_as(iv.binding);
    iv.binding = b;
  }
  Expr predicate = Mutate(op->predicate);
  Stmt init = Mutate(op->init), body = Mutate(op->body);
  if (!changed && predicate.same_as(op->predicate) && init.same_as(op->init) && body.same_as(op->body)) {
    return self;
  }
  return Block::Make(op->name, std::move(ivs), init, body, predicate);
}
Stmt IRMutator::MutateEvaluate(const Evaluate* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Evaluate::Make(v);
}
Stmt IRMutator::MutateBarrier(const Barrier*, const Stmt& self) { return self; }

// ------------------------------------------------------------------ helpers

namespace {

class PostOrderVisitor : public IRVisitor {
 public:
  explicit PostOrderVisitor(const std::function<void(const IRNode*)>& f) : f_(f) {}
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (!e.defined()) return;
    IRVisitor::Visit(e);
    f_(e.get());
  }
  void Visit(const Stmt& s) override {
    if (!s.defined()) return;
    IRVisitor::Visit(s);
    f_(s.get());
  }

 private:
  const std::function<void(const IRNode*)>& f_;
};

class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::map<const Variable*, Expr>& vmap) : vmap_(vmap) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateVariable(const Variable* op, const Expr& self) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? self : it->second;
  }

 private:
  const std::map<const Variable*, Expr>& vmap_;
};

class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(const Variable* v) : v_(v) {}
  bool found = false;

 protected:
  void VisitVariable(const Variable* op) override { found |= (op == v_); }

 private:
  const Variable* v_;
};

}  // namespace

void PostOrderVisit(const Stmt& root, const std::function<void(const IRNode*)>& f) {
  PostOrderVisitor v(f);
  v.Visit(root);
}

Expr Substitute(const Expr& e, const std::map<const Variable*, Expr>& vmap) {
  if (vmap.empty()) return e;
  return Substituter(vmap).Mutate(e);
}

Stmt Substitute(const Stmt& s, const std::map<const Variable*, Expr>& vmap) {
  if (vmap.empty()) return s;
  return Substituter(vmap).Mutate(s);
}

bool UsesVar(const Expr& e, const Variable* v) {
  VarUseFinder finder(v);
  finder.Visit(e);
  return finder.found;
}

}  // namespace tunefarm::ir
