// IRVisitor walks an IR tree read-only; IRMutator rebuilds it.
//
// Both dispatch on the node kind through the X-macro lists of ir.h, so adding
// a node kind adds a Visit/Mutate hook here automatically. Override the hooks
// for the nodes a pass cares about; the defaults recurse into children.
// IRMutator returns the very same handle when nothing below a node changed,
// so `result.same_as(input)` tells a pass whether it did anything.
#pragma once

#include <functional>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);

 protected:
#define TF_VISIT_HOOK(name) virtual void Visit##name(const name* op);
  TF_EXPR_NODES(TF_VISIT_HOOK)
  TF_STMT_NODES(TF_VISIT_HOOK)
#undef TF_VISIT_HOOK
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

 protected:
  // `self` is the handle of `op`, returned as is when nothing changed.
#define TF_MUTATE_EXPR_HOOK(name) virtual Expr Mutate##name(const name* op, const Expr& self);
  TF_EXPR_NODES(TF_MUTATE_EXPR_HOOK)
#undef TF_MUTATE_EXPR_HOOK
#define TF_MUTATE_STMT_HOOK(name) virtual Stmt Mutate##name(const name* op, const Stmt& self);
  TF_STMT_NODES(TF_MUTATE_STMT_HOOK)
#undef TF_MUTATE_STMT_HOOK
};

// Calls f on every expression and statement node under the root, children first.
void PostOrderVisit(const Stmt& root, const std::function<void(const IRNode*)>& f);

// Replaces variables by expressions (by pointer identity).
Expr Substitute(const Expr& e, const std::map<const Variable*, Expr>& vmap);
Stmt Substitute(const Stmt& s, const std::map<const Variable*, Expr>& vmap);

// True if `e` mentions variable v.
bool UsesVar(const Expr& e, const Variable* v);

}  // namespace tunefarm::ir
