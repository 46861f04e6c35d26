// Arithmetic simplifier for integer index expressions.
//
// Integer expressions are normalised to a linear form  sum(coef_i * atom_i) + c
// where atoms are variables or expressions the linear form cannot see into
// (loads, div/mod that did not simplify, ...). Rebuilding from that form folds
// constants, cancels terms and removes identities. Known variable ranges let
// floor div/mod, min/max and comparisons be decided. Float arithmetic is left
// alone except for select/logic folding: reassociating floats changes results.
#include "tunefarm/compiler/ir/floor_div.h"
#include "tunefarm/compiler/ir/simplify.h"

#include <algorithm>
#include <limits>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::ir {

namespace {

// sum(coef * atom) + constant, atoms kept in first-seen order.
struct LinearForm {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void AddTerm(const Expr& atom, int64_t coef) {
    for (auto& [a, c] : terms) {
      if (a.same_as(atom)) {
        c += coef;
        return;
      }
    }
    terms.push_back({atom, coef});
  }
  bool is_const() const {
    return std::all_of(terms.begin(), terms.end(), [](const auto& t) { return t.second == 0; });
  }
};

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(RangeMap ranges) : ranges_(std::move(ranges)) {}
  using IRMutator::Mutate;

  Expr Mutate(const Expr& e) override {
    if (!e.defined()) return e;
    Expr r = IRMutator::Mutate(e);
    if (r.dtype().is_integer() && r.dtype().is_scalar() && r.dtype().bits == 64 && IsLinearKind(r)) {
      return FromLinear(ToLinear(r), r.dtype());
    }
    return r;
  }

  const RangeMap& ranges() const { return ranges_; }

 protected:
  static bool IsLinearKind(const Expr& e) {
    return e.as<Add>() || e.as<Sub>() || (e.as<Mul>() && (AsConstInt(e.as<Mul>()->a) || AsConstInt(e.as<Mul>()->b)));
  }

  // Only i64 arithmetic is normalised: narrower types wrap, and wrapping breaks
  // the algebra.
  LinearForm ToLinear(const Expr& e) {
    LinearForm f;
    Linearize(e, 1, [&f](const Expr& term, int64_t scale) {
      if (const int64_t* c = AsConstInt(term)) {
        f.constant += scale * *c;
      } else {
        f.AddTerm(term, scale);
      }
      return true;
    });
    return f;
  }

  static Expr FromLinear(const LinearForm& f, DataType t) {
    Expr result;
    for (const auto& [atom, coef] : f.terms) {
      if (coef == 0) continue;
      Expr term = coef == 1 ? atom : Mul::Make(atom, IntImm::Make(t, coef));
      result = result.defined() ? Add::Make(result, term) : term;
    }
    if (!result.defined()) return IntImm::Make(t, f.constant);
    if (f.constant > 0) return Add::Make(result, IntImm::Make(t, f.constant));
    if (f.constant < 0) return Sub::Make(result, IntImm::Make(t, -f.constant));
    return result;
  }

  std::optional<Interval> Bound(const Expr& e) { return BoundOf(e, ranges_); }

  Expr DivMod(const Expr& a, const Expr& b, bool is_div, const Expr& self) {
    const int64_t* cb = AsConstInt(b);
    if (!cb || *cb <= 0 || a.dtype() != DataType::Index()) return self;
    int64_t c = *cb;
    if (const int64_t* ca = AsConstInt(a)) {
      int64_t q = FloorDiv(*ca, c);
      return IntImm::Make(a.dtype(), is_div ? q : *ca - q * c);
    }
    if (c == 1) return is_div ? a : IntImm::Make(a.dtype(), 0);
    // Split a into the part divisible by c and the rest; if the rest stays
    // within one multiple of c, the division is exact on the divisible part.
    LinearForm f = ToLinear(a), divisible, rest;
    for (const auto& [atom, coef] : f.terms) {
      if (coef % c == 0) {
        divisible.AddTerm(atom, coef / c);
      } else {
        rest.AddTerm(atom, coef);
      }
    }
    divisible.constant = FloorDiv(f.constant, c);
    rest.constant = f.constant - divisible.constant * c;
    Expr rest_expr = FromLinear(rest, a.dtype());
    auto rb = Bound(rest_expr);
    if (!rb || FloorDiv(rb->min, c) != FloorDiv(rb->max, c)) {
      // Floor division and modulo are exact on the multiple of c whatever
      // the rest is: (c*q + r) / c = q + r / c and (c*q + r) % c = r % c.
      // Why: a transposed convolution's tap (2*h_3 + h_1 + 1) % 2, with h_3
      // an unrolled tile loop and h_1 its stride class, is then (h_1 + 1) % 2,
      // loop-invariant in the tile, instead of a floor modulo per output.
      if (divisible.is_const() && divisible.constant == 0) return self;
      Expr c_expr = IntImm::Make(a.dtype(), c);
      if (!is_div) return Mod::Make(rest_expr, c_expr);
      return Mutate(Add::Make(FromLinear(divisible, a.dtype()), Div::Make(rest_expr, c_expr)));
    }
    int64_t qlo = FloorDiv(rb->min, c);
    if (is_div) {
      divisible.constant += qlo;
      return FromLinear(divisible, a.dtype());
    }
    LinearForm mod = rest;
    mod.constant -= qlo * c;
    return FromLinear(mod, a.dtype());
  }

  Expr MutateDiv(const Div* op, const Expr& self) override {
    Expr e = IRMutator::MutateDiv(op, self);
    if (const auto* d = e.as<Div>(); d && d->dtype.is_integer()) return DivMod(d->a, d->b, true, e);
    return e;
  }
  Expr MutateMod(const Mod* op, const Expr& self) override {
    Expr e = IRMutator::MutateMod(op, self);
    if (const auto* m = e.as<Mod>(); m && m->dtype.is_integer()) return DivMod(m->a, m->b, false, e);
    return e;
  }

  // Min/max whose operands' ranges do not overlap pick one operand.
  template <typename T>
  Expr DecideMinMax(const Expr& e, bool is_min) {
    const auto* n = e.as<T>();
    if (!n || !n->dtype.is_integer()) return e;
    auto ba = Bound(n->a), bb = Bound(n->b);
    if (ba && bb) {
      if (ba->max <= bb->min) return is_min ? n->a : n->b;
      if (bb->max <= ba->min) return is_min ? n->b : n->a;
    }
    return e;
  }
  Expr MutateMin(const Min* op, const Expr& self) override {
    return DecideMinMax<Min>(IRMutator::MutateMin(op, self), true);
  }
  Expr MutateMax(const Max* op, const Expr& self) override {
    return DecideMinMax<Max>(IRMutator::MutateMax(op, self), false);
  }

  // Comparisons decided by bounds of (a - b).
  template <typename T>
  Expr Compare(const T* op, const Expr& self) {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    Expr e = (a.same_as(op->a) && b.same_as(op->b)) ? self : T::Make(a, b);
    if (!a.dtype().is_integer() || a.dtype() != DataType::Index()) return e;
    auto d = Bound(Mutate(Sub::Make(a, b)));
    if (!d) return e;
    int decided = -1;  // -1 unknown, 0 false, 1 true
    constexpr IRNodeKind k = T::kKind;
    if constexpr (k == IRNodeKind::kLT) decided = d->max < 0 ? 1 : (d->min >= 0 ? 0 : -1);
    if constexpr (k == IRNodeKind::kLE) decided = d->max <= 0 ? 1 : (d->min > 0 ? 0 : -1);
    if constexpr (k == IRNodeKind::kGT) decided = d->min > 0 ? 1 : (d->max <= 0 ? 0 : -1);
    if constexpr (k == IRNodeKind::kGE) decided = d->min >= 0 ? 1 : (d->max < 0 ? 0 : -1);
    if constexpr (k == IRNodeKind::kEQ) decided = (d->min == 0 && d->max == 0) ? 1 : (d->min > 0 || d->max < 0 ? 0 : -1);
    if constexpr (k == IRNodeKind::kNE) decided = (d->min == 0 && d->max == 0) ? 0 : (d->min > 0 || d->max < 0 ? 1 : -1);
    if (decided < 0) return e;
    return IntImm::Make(DataType::Bool(), decided);
  }
  Expr MutateLT(const LT* op, const Expr& self) override { return Compare(op, self); }
  Expr MutateLE(const LE* op, const Expr& self) override { return Compare(op, self); }
  Expr MutateGT(const GT* op, const Expr& self) override { return Compare(op, self); }
  Expr MutateGE(const GE* op, const Expr& self) override { return Compare(op, self); }
  Expr MutateEQ(const EQ* op, const Expr& self) override { return Compare(op, self); }
  Expr MutateNE(const NE* op, const Expr& self) override { return Compare(op, self); }

  Expr MutateAnd(const And* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (const int64_t* c = AsConstInt(a)) return *c ? b : a;
    if (const int64_t* c = AsConstInt(b)) return *c ? a : b;
    return (a.same_as(op->a) && b.same_as(op->b)) ? self : And::Make(a, b);
  }
  Expr MutateOr(const Or* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (const int64_t* c = AsConstInt(a)) return *c ? a : b;
    if (const int64_t* c = AsConstInt(b)) return *c ? b : a;
    return (a.same_as(op->a) && b.same_as(op->b)) ? self : Or::Make(a, b);
  }
  Expr MutateNot(const Not* op, const Expr& self) override {
    Expr a = Mutate(op->a);
    if (const int64_t* c = AsConstInt(a)) return IntImm::Make(DataType::Bool(), !*c);
    return a.same_as(op->a) ? self : Not::Make(a);
  }
  Expr MutateSelect(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->condition);
    if (const int64_t* v = AsConstInt(c)) return Mutate(*v ? op->true_value : op->false_value);
    Expr t = Mutate(op->true_value), f = Mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return Select::Make(c, t, f);
  }
  Expr MutateCast(const Cast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    if (const int64_t* c = AsConstInt(v); c && op->dtype.is_integer() && op->dtype.bits == 64) {
      return IntImm::Make(op->dtype, *c);
    }
    return v.same_as(op->value) ? self : Cast::Make(op->dtype, v);
  }

  // ---- statements: learn loop ranges, drop unit loops and decided ifs.
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Expr min = Mutate(op->min), extent = Mutate(op->extent);
    const int64_t* cmin = AsConstInt(min);
    const int64_t* cext = AsConstInt(extent);
    if (cext && *cext <= 0) return Evaluate::Make(IntImm::Make(DataType::Int(32), 0));
    if (cext && *cext == 1 && op->kind != ForKind::kThreadBinding) {
      return Mutate(Substitute(op->body, {{op->loop_var.get(), min}}));
    }
    if (cmin && cext) ranges_[op->loop_var.get()] = Interval{*cmin, *cmin + *cext - 1};
    Stmt body = Mutate(op->body);
    ranges_.erase(op->loop_var.get());
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
    return For::Make(op->loop_var, min, extent, op->kind, body, op->thread_tag, op->annotations);
  }
  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    for (const IterVar& iv : op->iter_vars) ranges_[iv.var.get()] = Interval{0, iv.extent - 1};
    Stmt r = IRMutator::MutateBlock(op, self);
    for (const IterVar& iv : op->iter_vars) ranges_.erase(iv.var.get());
    return r;
  }
  Stmt MutateLetStmt(const LetStmt* op, const Stmt& self) override {
    Expr value = Mutate(op->value);
    if (auto b = Bound(value)) ranges_[op->var.get()] = *b;
    Stmt body = Mutate(op->body);
    ranges_.erase(op->var.get());
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return LetStmt::Make(op->var, value, body);
  }
  Stmt MutateIfThenElse(const IfThenElse* op, const Stmt& self) override {
    Expr c = Mutate(op->condition);
    if (const int64_t* v = AsConstInt(c)) {
      if (*v) return Mutate(op->then_case);
      if (op->else_case.defined()) return Mutate(op->else_case);
      return Evaluate::Make(IntImm::Make(DataType::Int(32), 0));
    }
    Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::Make(c, t, e);
  }

 private:
  RangeMap ranges_;
};

}  // namespace

std::optional<Interval> BoundOf(const Expr& e, const RangeMap& ranges) {
  if (!e.defined() || !(e.dtype().is_integer() || e.dtype().is_bool())) return std::nullopt;
  if (const int64_t* c = AsConstInt(e)) return Interval::Point(*c);
  if (const auto* v = e.as<Variable>()) {
    auto it = ranges.find(v);
    if (it == ranges.end()) return std::nullopt;
    return it->second;
  }
  // Both operands bounded, or no bound.
  auto both = [&](const Expr& x, const Expr& y, Interval (*op)(Interval, Interval)) -> std::optional<Interval> {
    auto a = BoundOf(x, ranges), b = BoundOf(y, ranges);
    if (!a || !b) return std::nullopt;
    return op(*a, *b);
  };
  // Saturate rather than overflow: bounds this large are useless anyway.
  if (const auto* op = e.as<Add>()) return both(op->a, op->b, &Interval::SaturatingAdd);
  if (const auto* op = e.as<Sub>()) return both(op->a, op->b, &Interval::SaturatingSub);
  if (const auto* op = e.as<Mul>()) return both(op->a, op->b, &Interval::SaturatingMul);
  if (const auto* op = e.as<Min>()) return both(op->a, op->b, &Interval::Min);
  if (const auto* op = e.as<Max>()) return both(op->a, op->b, &Interval::Max);
  if (const auto* op = e.as<Div>()) {
    auto a = BoundOf(op->a, ranges);
    const int64_t* c = AsConstInt(op->b);
    if (!a || !c || *c <= 0) return std::nullopt;
    return Interval::FloorDiv(*a, *c);
  }
  if (const auto* op = e.as<Mod>()) {
    const int64_t* c = AsConstInt(op->b);
    if (!c || *c <= 0) return std::nullopt;
    // An unbounded dividend still leaves a remainder in [0, c - 1].
    auto a = BoundOf(op->a, ranges);
    return a ? Interval::FloorMod(*a, *c) : Interval{0, *c - 1};
  }
  if (const auto* op = e.as<Select>()) return both(op->true_value, op->false_value, &Interval::Union);
  if (e.dtype().is_bool()) return Interval{0, 1};
  return std::nullopt;
}

Expr Simplify(const Expr& e, const RangeMap& ranges) { return Simplifier(ranges).Mutate(e); }

Stmt Simplify(const Stmt& s) { return Simplifier({}).Mutate(s); }

}  // namespace tunefarm::ir
