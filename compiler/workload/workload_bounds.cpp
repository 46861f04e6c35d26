// Interval analysis of index expressions; see workload_bounds.h.
//
// Facts are flattened into atoms `lhs OP rhs` once per query. Refinement uses
// the bound of the other side computed *without* facts, which keeps the
// analysis linear in the atoms and free of cycles between facts.
#include "workload_bounds.h"

#include <algorithm>
#include <limits>

#include "tunefarm/compiler/ir/floor_div.h"

namespace tunefarm::wl {
namespace {

using ir::Expr;
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

using ir::FloorDiv;

class Bounder {
 public:
  Bounder(const VarRanges& vars, const std::vector<Atom>& atoms) : vars_(vars), atoms_(atoms) {}

  std::optional<Range> Bound(const Expr& e, bool use_facts) {
    std::optional<Range> r = Natural(e, use_facts);
    if (!use_facts) return r;
    for (const Atom& atom : atoms_) {
      if (ir::ExprEqual(atom.lhs, e)) Refine(&r, atom.rel, atom.rhs);
      if (ir::ExprEqual(atom.rhs, e)) Refine(&r, Mirror(atom.rel), atom.lhs);
    }
    return r;
  }

 private:
  // Narrows r knowing that (value REL other).
  void Refine(std::optional<Range>* r, Rel rel, const Expr& other) {
    std::optional<Range> o = Bound(other, false);
    if (!o) return;
    Range cur = r->value_or(Range{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
    switch (rel) {
      case Rel::kLt:
        if (o->hi != std::numeric_limits<int64_t>::min()) cur.hi = std::min(cur.hi, o->hi - 1);
        break;
      case Rel::kLe: cur.hi = std::min(cur.hi, o->hi); break;
      case Rel::kGt:
        if (o->lo != std::numeric_limits<int64_t>::max()) cur.lo = std::max(cur.lo, o->lo + 1);
        break;
      case Rel::kGe: cur.lo = std::max(cur.lo, o->lo); break;
      case Rel::kEq:
        cur.lo = std::max(cur.lo, o->lo);
        cur.hi = std::min(cur.hi, o->hi);
        break;
    }
    *r = cur;
  }

  template <typename T>
  bool Children(const T* op, bool use_facts, Range* a, Range* b) {
    std::optional<Range> ra = Bound(op->a, use_facts);
    if (!ra) return false;
    std::optional<Range> rb = Bound(op->b, use_facts);
    if (!rb) return false;
    *a = *ra;
    *b = *rb;
    return a->lo <= a->hi && b->lo <= b->hi;
  }

  std::optional<Range> Natural(const Expr& e, bool use_facts) {
    if (!e.defined() || !e.dtype().is_integer()) return std::nullopt;
    Range a, b;
    switch (e.kind()) {
      case IRNodeKind::kIntImm: {
        int64_t v = e.as<ir::IntImm>()->value;
        return Range{v, v};
      }
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
      case IRNodeKind::kAdd: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kAdd>>(), use_facts, &a, &b)) return std::nullopt;
        Range r;
        if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) {
          return std::nullopt;
        }
        return r;
      }
      case IRNodeKind::kSub: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kSub>>(), use_facts, &a, &b)) return std::nullopt;
        Range r;
        if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi)) {
          return std::nullopt;
        }
        return r;
      }
      case IRNodeKind::kMul: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kMul>>(), use_facts, &a, &b)) return std::nullopt;
        int64_t c[4];
        if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
            __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3])) {
          return std::nullopt;
        }
        return Range{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case IRNodeKind::kDiv: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kDiv>>(), use_facts, &a, &b)) return std::nullopt;
        if (b.lo <= 0 && b.hi >= 0) return std::nullopt;  // divisor may be zero
        if (b.lo == -1 || b.hi == -1) return std::nullopt;  // INT64_MIN / -1
        int64_t c[4] = {FloorDiv(a.lo, b.lo), FloorDiv(a.lo, b.hi), FloorDiv(a.hi, b.lo),
                        FloorDiv(a.hi, b.hi)};
        return Range{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case IRNodeKind::kMod: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kMod>>(), use_facts, &a, &b)) return std::nullopt;
        if (b.lo <= 0) return std::nullopt;  // floor mod by a positive divisor only
        if (a.lo >= 0 && a.hi < b.lo) return a;
        return Range{0, b.hi - 1};
      }
      case IRNodeKind::kMin: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kMin>>(), use_facts, &a, &b)) return std::nullopt;
        return Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      }
      case IRNodeKind::kMax: {
        if (!Children(e.as<ir::BinaryNode<ir::IRNodeKind::kMax>>(), use_facts, &a, &b)) return std::nullopt;
        return Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      }
      case IRNodeKind::kSelect: {
        const auto* op = e.as<ir::Select>();
        std::optional<Range> t = Bound(op->true_value, use_facts);
        std::optional<Range> f = Bound(op->false_value, use_facts);
        if (!t || !f) return std::nullopt;
        return Range{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
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

std::optional<Range> BoundOf(const Expr& e, const VarRanges& vars, const std::vector<Fact>& facts) {
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
