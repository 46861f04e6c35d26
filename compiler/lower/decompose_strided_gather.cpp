// DecomposeStridedGathers: finds a modular tap test on the zero path of a sum's
// term and re-parameterises its reduction axis so the test always holds.
#include "tunefarm/compiler/lower/decompose_strided_gather.h"

#include <optional>
#include <set>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {
namespace {

using namespace ir;

// Coefficient of v in e, when v occurs only under + and - (so e = c*v + rest).
std::optional<int64_t> CoefficientOf(const Expr& e, const Variable* v) {
  if (e.as<Variable>() == v) return 1;
  if (!UsesVar(e, v)) return 0;
  if (const auto* add = e.as<Add>()) {
    auto a = CoefficientOf(add->a, v), b = CoefficientOf(add->b, v);
    if (a && b) return *a + *b;
  } else if (const auto* sub = e.as<Sub>()) {
    auto a = CoefficientOf(sub->a, v), b = CoefficientOf(sub->b, v);
    if (a && b) return *a - *b;
  }
  return std::nullopt;
}

// One decomposable test: `(a + coef * axis) % stride == 0`.
struct TapTest {
  size_t axis = 0;  // index into the stage's reduce axes
  int64_t stride = 0;
  int64_t coef = 0;
  Expr rest;  // a: the test's expression with the axis set to 0
};

class Decomposer {
 public:
  explicit Decomposer(const ComputeStage& stage) : stage_(stage) {}

  // Rewrites one test on the zero path of the stage's term; false when none is left.
  bool DecomposeOne() {
    std::optional<Expr> term = Rewrite(stage_.body);
    if (!term) return false;
    // Taps past the axis's end when the stride does not divide its extent:
    // the whole term is guarded, since its other factors (the weights) read
    // at the tap too.
    if (stage_.reduce_extents[found_.axis] % found_.stride != 0) {
      term = Select::Make(BoundPlaceholder(), *term, MakeConst(term->dtype(), 0));
    }
    const Var old_axis = stage_.reduce_axes[found_.axis];
    const int64_t extent = stage_.reduce_extents[found_.axis];
    const int64_t s = found_.stride;
    Var axis(old_axis.name(), old_axis.dtype());
    // coef*r + a == 0 (mod s) with coef = +-1  <=>  r == -coef*a (mod s).
    Expr residue = Simplify(Mod::Make(found_.coef == 1 ? Sub::Make(IntImm::Make(found_.rest.dtype(), 0), found_.rest)
                                                       : found_.rest,
                                      IntImm::Make(found_.rest.dtype(), s)));
    Expr tap = Add::Make(Mul::Make(IntImm::Make(axis.dtype(), s), Expr(axis)), residue);
    stage_.body = Substitute(*term, {{old_axis.get(), tap}});
    stage_.reduce_axes[found_.axis] = axis;
    stage_.reduce_extents[found_.axis] = (extent + s - 1) / s;
    return true;
  }

  const ComputeStage& stage() const { return stage_; }

 private:
  // The term with one test removed from a select on its zero path, if any.
  std::optional<Expr> Rewrite(const Expr& e) {
    if (const auto* mul = e.as<Mul>()) {
      if (auto a = Rewrite(mul->a)) return Mul::Make(*a, mul->b);
      if (auto b = Rewrite(mul->b)) return Mul::Make(mul->a, *b);
      return std::nullopt;
    }
    const auto* sel = e.as<Select>();
    if (!sel || !IsZeroConst(sel->false_value)) return std::nullopt;
    std::vector<Expr> tests = Conjuncts(sel->condition);
    for (size_t i = 0; i < tests.size(); ++i) {
      if (!MatchTest(tests[i], &found_)) continue;
      std::vector<Expr> kept;
      for (size_t j = 0; j < tests.size(); ++j) {
        if (j != i) kept.push_back(tests[j]);
      }
      if (kept.empty()) return sel->true_value;
      Expr cond = kept[0];
      for (size_t j = 1; j < kept.size(); ++j) cond = And::Make(cond, kept[j]);
      return Select::Make(cond, sel->true_value, sel->false_value);
    }
    // select(c1, select(c2, x, 0) * w, 0) is zero whenever c2 is false too.
    if (auto t = Rewrite(sel->true_value)) return Select::Make(sel->condition, *t, sel->false_value);
    return std::nullopt;
  }

  // `old_axis < extent`; the substitution of the old axis by the new tap
  // expression turns it into the bound on the new axis.
  Expr BoundPlaceholder() const {
    const Var& axis = stage_.reduce_axes[found_.axis];
    return LT::Make(Expr(axis), IntImm::Make(axis.dtype(), stage_.reduce_extents[found_.axis]));
  }

  bool MatchTest(const Expr& test, TapTest* out) const {
    const auto* eq = test.as<EQ>();
    if (!eq) return false;
    const Mod* mod = eq->a.as<Mod>();
    Expr other = eq->b;
    if (!mod) {
      mod = eq->b.as<Mod>();
      other = eq->a;
    }
    if (!mod || !IsZeroConst(other)) return false;
    const auto* stride = mod->b.as<IntImm>();
    if (!stride || stride->value < 2) return false;
    for (size_t r = 0; r < stage_.reduce_axes.size(); ++r) {
      const Variable* axis = stage_.reduce_axes[r].get();
      std::optional<int64_t> coef = CoefficientOf(mod->a, axis);
      if (!coef || (*coef != 1 && *coef != -1)) continue;
      Expr rest = Simplify(Substitute(mod->a, {{axis, IntImm::Make(axis->dtype, 0)}}));
      bool free_of_reductions = true;
      for (const Var& other_axis : stage_.reduce_axes) free_of_reductions &= !UsesVar(rest, other_axis.get());
      if (!free_of_reductions) continue;
      *out = TapTest{r, stride->value, *coef, rest};
      return true;
    }
    return false;
  }

  ComputeStage stage_;
  TapTest found_;
};

}  // namespace

ComputeStage DecomposeStridedGathers(const ComputeStage& stage) {
  if (stage.reduce != ReduceKind::kSum) return stage;
  Decomposer d(stage);
  // Each step removes one test from the term, so this ends.
  while (d.DecomposeOne()) {
  }
  return d.stage();
}

}  // namespace tunefarm
