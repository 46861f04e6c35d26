// Interval analysis of index expressions; see workload_bounds.h.
//
// Facts are flattened into atoms `lhs OP rhs` once per query. Refinement uses
// the bound of the other side computed *without* facts, which keeps the
// analysis linear in the atoms and free of cycles between facts.
#include "workload_bounds.h"

#include <algorithm>
#include <limits>

namespace tunefarm::wl {
namespace {

using ir::Expr;
using ir::Interval;
using ir::IRNodeKind;

enum class Rel : uint8_t { kLt, kLe, kGt, kGe, kEq };

struct Atom {
  Expr lhs;
  Rel rel;
  Expr rhs;
};

// Caps the work per query against adversarial inputs (many nested selects).
constexpr size_t kMaxAtoms = 64;

Rel Mirror(Rel r) {
  switch (r) {
    case Rel::kLt: return Rel::kGt;
    case Rel::kLe: return Rel::kGe;
    case Rel::kGt: return Rel::kLt;
    case Rel::kGe: return Rel::kLe;
    case Rel::kEq: return Rel::kEq;
  }
  return r;
}

template <typename T>
bool AddAtom(const T* op, Rel rel, bool holds, std::vector<Atom>* atoms) {
  if (!holds) {
    // !(a < b) == a >= b, etc.; a negated == says nothing usable.
    switch (rel) {
      case Rel::kLt: rel = Rel::kGe; break;
      case Rel::kLe: rel = Rel::kGt; break;
      case Rel::kGt: rel = Rel::kLe; break;
      case Rel::kGe: rel = Rel::kLt; break;
      case Rel::kEq: return false;
    }
  }
  if (!op->a.dtype().is_integer()) return false;
  atoms->push_back({op->a, rel, op->b});
  return true;
}

void Flatten(const Expr& cond, bool holds, int depth, std::vector<Atom>* atoms) {
  if (atoms->size() >= kMaxAtoms || depth > 64) return;
  if (const auto* op = cond.as<ir::Not>()) return Flatten(op->a, !holds, depth + 1, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kAnd>>()) {
    if (holds) {
      Flatten(op->a, true, depth + 1, atoms);
      Flatten(op->b, true, depth + 1, atoms);
    }
    return;
  }
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kOr>>()) {
    if (!holds) {
      Flatten(op->a, false, depth + 1, atoms);
      Flatten(op->b, false, depth + 1, atoms);
    }
    return;
  }
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kLT>>()) AddAtom(op, Rel::kLt, holds, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kLE>>()) AddAtom(op, Rel::kLe, holds, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kGT>>()) AddAtom(op, Rel::kGt, holds, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kGE>>()) AddAtom(op, Rel::kGe, holds, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kEQ>>()) AddAtom(op, Rel::kEq, holds, atoms);
  if (const auto* op = cond.as<ir::BinaryNode<ir::IRNodeKind::kNE>>()) {
    if (!holds) atoms->push_back({op->a, Rel::kEq, op->b});
  }
}

class Bounder {
 public:
  Bounder(const VarRanges& vars, const std::vector<Atom>& atoms) : vars_(vars), atoms_(atoms) {}

  std::optional<Interval> Bound(const Expr& e, bool use_facts) {
    std::optional<Interval> r = Natural(e, use_facts);
    if (!use_facts) return r;
    for (const Atom& atom : atoms_) {
      if (ir::ExprEqual(atom.lhs, e)) Refine(&r, atom.rel, atom.rhs);
      if (ir::ExprEqual(atom.rhs, e)) Refine(&r, Mirror(atom.rel), atom.lhs);
    }
    return r;
  }

 private:
  // Narrows r knowing that (value REL other).
  void Refine(std::optional<Interval>* r, Rel rel, const Expr& other) {
    std::optional<Interval> o = Bound(other, false);
    if (!o) return;
    Interval cur = r->value_or(Interval{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
    switch (rel) {
      case Rel::kLt:
        if (o->max != std::numeric_limits<int64_t>::min()) cur.max = std::min(cur.max, o->max - 1);
        break;
      case Rel::kLe: cur.max = std::min(cur.max, o->max); break;
      case Rel::kGt:
        if (o->min != std::numeric_limits<int64_t>::max()) cur.min = std::max(cur.min, o->min + 1);
        break;
      case Rel::kGe: cur.min = std::max(cur.min, o->min); break;
      case Rel::kEq: cur = Interval::Intersect(cur, *o); break;
    }
    *r = cur;
  }

  // The bounds of both operands, each holding a value, or none.
  template <typename T>
  bool Children(const T* op, bool use_facts, Interval* a, Interval* b) {
    std::optional<Interval> ra = Bound(op->a, use_facts);
    if (!ra) return false;
    std::optional<Interval> rb = Bound(op->b, use_facts);
    if (!rb) return false;
    *a = *ra;
    *b = *rb;
    return !a->empty() && !b->empty();
  }

  // A binary node's bound from its operands' by `op` (one of Interval's), or none.
  template <IRNodeKind K, typename R>
  std::optional<Interval> Binary(const Expr& e, bool use_facts, R (*op)(Interval, Interval)) {
    Interval a, b;
    if (!Children(e.as<ir::BinaryNode<K>>(), use_facts, &a, &b)) return std::nullopt;
    return op(a, b);
  }

  std::optional<Interval> Natural(const Expr& e, bool use_facts) {
    if (!e.defined() || !e.dtype().is_integer()) return std::nullopt;
    switch (e.kind()) {
      case IRNodeKind::kIntImm: return Interval::Point(e.as<ir::IntImm>()->value);
      case IRNodeKind::kVariable: {
        auto it = vars_.find(e.as<ir::Variable>());
        if (it == vars_.end()) return std::nullopt;
        return it->second;
      }
      case IRNodeKind::kCast: {
        const auto* op = e.as<ir::Cast>();
        if (!op->value.dtype().is_integer()) return std::nullopt;
        return Bound(op->value, use_facts);
      }
      case IRNodeKind::kAdd: return Binary<IRNodeKind::kAdd>(e, use_facts, &Interval::Add);
      case IRNodeKind::kSub: return Binary<IRNodeKind::kSub>(e, use_facts, &Interval::Sub);
      case IRNodeKind::kMul: return Binary<IRNodeKind::kMul>(e, use_facts, &Interval::Mul);
      // Divisors of either sign that exclude 0 and -1; remainders by positive ones.
      case IRNodeKind::kDiv: return Binary<IRNodeKind::kDiv>(e, use_facts, &Interval::FloorDiv);
      case IRNodeKind::kMod: return Binary<IRNodeKind::kMod>(e, use_facts, &Interval::FloorMod);
      case IRNodeKind::kMin: return Binary<IRNodeKind::kMin>(e, use_facts, &Interval::Min);
      case IRNodeKind::kMax: return Binary<IRNodeKind::kMax>(e, use_facts, &Interval::Max);
      case IRNodeKind::kSelect: {
        const auto* op = e.as<ir::Select>();
        std::optional<Interval> t = Bound(op->true_value, use_facts);
        std::optional<Interval> f = Bound(op->false_value, use_facts);
        if (!t || !f) return std::nullopt;
        return Interval::Union(*t, *f);
      }
      // Unknown: a float, a comparison or logic value, a load's or a call's.
      case IRNodeKind::kFloatImm: case IRNodeKind::kEQ: case IRNodeKind::kNE: case IRNodeKind::kLT:
      case IRNodeKind::kLE: case IRNodeKind::kGT: case IRNodeKind::kGE: case IRNodeKind::kAnd:
      case IRNodeKind::kOr: case IRNodeKind::kNot: case IRNodeKind::kLoad: case IRNodeKind::kCall:
      TF_STMT_KIND_CASES  // not expressions
        return std::nullopt;
    }
    return std::nullopt;
  }

  const VarRanges& vars_;
  const std::vector<Atom>& atoms_;
};

}  // namespace

std::optional<Interval> BoundOf(const Expr& e, const VarRanges& vars, const std::vector<Fact>& facts) {
  std::vector<Atom> atoms;
  for (const Fact& f : facts) Flatten(f.cond, f.holds, 0, &atoms);
  Bounder bounder(vars, atoms);
  return bounder.Bound(e, !atoms.empty());
}

void CollectVars(const Expr& e, std::vector<const ir::Variable*>* out) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case IRNodeKind::kVariable: out->push_back(e.as<ir::Variable>()); return;
#define TF_COLLECT_BINARY(name)                       \
  case IRNodeKind::k##name:                           \
    CollectVars(e.as<ir::BinaryNode<IRNodeKind::k##name>>()->a, out);            \
    CollectVars(e.as<ir::BinaryNode<IRNodeKind::k##name>>()->b, out);            \
    return;
      TF_COLLECT_BINARY(Add) TF_COLLECT_BINARY(Sub) TF_COLLECT_BINARY(Mul) TF_COLLECT_BINARY(Div)
      TF_COLLECT_BINARY(Mod) TF_COLLECT_BINARY(Min) TF_COLLECT_BINARY(Max) TF_COLLECT_BINARY(EQ)
      TF_COLLECT_BINARY(NE) TF_COLLECT_BINARY(LT) TF_COLLECT_BINARY(LE) TF_COLLECT_BINARY(GT)
      TF_COLLECT_BINARY(GE) TF_COLLECT_BINARY(And) TF_COLLECT_BINARY(Or)
#undef TF_COLLECT_BINARY
    case IRNodeKind::kNot: CollectVars(e.as<ir::Not>()->a, out); return;
    case IRNodeKind::kSelect: {
      const auto* op = e.as<ir::Select>();
      CollectVars(op->condition, out);
      CollectVars(op->true_value, out);
      CollectVars(op->false_value, out);
      return;
    }
    case IRNodeKind::kCast: CollectVars(e.as<ir::Cast>()->value, out); return;
    case IRNodeKind::kLoad:
      for (const Expr& i : e.as<ir::Load>()->indices) CollectVars(i, out);
      return;
    case IRNodeKind::kCall:
      for (const Expr& a : e.as<ir::Call>()->args) CollectVars(a, out);
      return;
    case IRNodeKind::kIntImm: case IRNodeKind::kFloatImm:
    TF_STMT_KIND_CASES  // constants and statements mention no variable
      return;
  }
}

bool MentionsAny(const Expr& e, const std::vector<const ir::Variable*>& vars) {
  std::vector<const ir::Variable*> used;
  CollectVars(e, &used);
  for (const ir::Variable* v : used) {
    if (std::find(vars.begin(), vars.end(), v) != vars.end()) return true;
  }
  return false;
}

}  // namespace tunefarm::wl
