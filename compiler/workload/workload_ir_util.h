// Small helpers over IR expressions shared by the workload-language files
// (private to compiler/): the children of an expression node, in a fixed
// order (operands left to right; select: condition, true, false; load: the
// indices; call: the arguments).
//
// Binary nodes are reached as ir::BinaryNode<K>, never as ir::Add etc.: Make
// allocates BinaryNode<K> objects, so a downcast to the derived name would be
// undefined behaviour (UBSan's vptr check flags it), while BinaryNode<K> is
// right whether or not Make ever allocates the derived types.
#pragma once

#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::wl {

inline std::vector<ir::Expr> ExprChildren(const ir::Expr& e) {
  using ir::IRNodeKind;
  if (!e.defined()) return {};
  switch (e.kind()) {
#define TF_CHILDREN_BINARY(name) \
  case IRNodeKind::k##name: return {e.as<ir::BinaryNode<IRNodeKind::k##name>>()->a, e.as<ir::BinaryNode<IRNodeKind::k##name>>()->b};
    TF_CHILDREN_BINARY(Add) TF_CHILDREN_BINARY(Sub) TF_CHILDREN_BINARY(Mul) TF_CHILDREN_BINARY(Div)
    TF_CHILDREN_BINARY(Mod) TF_CHILDREN_BINARY(Min) TF_CHILDREN_BINARY(Max) TF_CHILDREN_BINARY(EQ)
    TF_CHILDREN_BINARY(NE) TF_CHILDREN_BINARY(LT) TF_CHILDREN_BINARY(LE) TF_CHILDREN_BINARY(GT)
    TF_CHILDREN_BINARY(GE) TF_CHILDREN_BINARY(And) TF_CHILDREN_BINARY(Or)
#undef TF_CHILDREN_BINARY
    case IRNodeKind::kNot: return {e.as<ir::Not>()->a};
    case IRNodeKind::kSelect: {
      const auto* op = e.as<ir::Select>();
      return {op->condition, op->true_value, op->false_value};
    }
    case IRNodeKind::kCast: return {e.as<ir::Cast>()->value};
    case IRNodeKind::kLoad: return e.as<ir::Load>()->indices;
    case IRNodeKind::kCall: return e.as<ir::Call>()->args;
    default: return {};
  }
}

inline bool IsComparison(ir::IRNodeKind k) {
  using ir::IRNodeKind;
  return k == IRNodeKind::kEQ || k == IRNodeKind::kNE || k == IRNodeKind::kLT ||
         k == IRNodeKind::kLE || k == IRNodeKind::kGT || k == IRNodeKind::kGE;
}

inline bool IsArithmetic(ir::IRNodeKind k) {
  using ir::IRNodeKind;
  return k == IRNodeKind::kAdd || k == IRNodeKind::kSub || k == IRNodeKind::kMul ||
         k == IRNodeKind::kDiv || k == IRNodeKind::kMod || k == IRNodeKind::kMin ||
         k == IRNodeKind::kMax;
}

}  // namespace tunefarm::wl
