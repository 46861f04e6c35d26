// Linear forms and interval bounds of index expressions (features_index.h).
#include "features_index.h"

#include <algorithm>
#include <cstdlib>

#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::costmodel::detail {

using namespace ir;

namespace {

std::optional<Interval> VarRange(const Variable* v, const LoopStack& loops, VaryingLoops varying) {
  int d = loops.DepthOf(v);
  if (d < 0) return std::nullopt;
  const LoopInfo& l = loops.at(d);
  if (varying.only_depth >= 0) {
    return d == varying.only_depth ? Interval{l.min, l.min + std::min<int64_t>(l.extent - 1, 1)}
                                   : Interval::Point(l.min);
  }
  return d >= varying.vary_from ? Interval{l.min, l.min + l.extent - 1} : Interval::Point(l.min);
}

// Accumulates each term of an index (ir::Linearize) into form; false when
// the index is not affine in loop variables apart from its atoms.
struct IndexTerms {
  const LoopStack& loops;
  IndexForm* form;

  bool operator()(const Expr& e, int64_t scale) {
    switch (e.kind()) {
      case IRNodeKind::kIntImm: form->constant += scale * e.as<IntImm>()->value; return true;
      case IRNodeKind::kVariable: {
        int d = loops.DepthOf(e.as<Variable>());
        if (d < 0) return false;
        form->coef[static_cast<size_t>(d)] += scale;
        return true;
      }
      case IRNodeKind::kCast: return e.dtype().is_integer() && Linearize(e.as<Cast>()->value, scale, *this);
      case IRNodeKind::kDiv:
      case IRNodeKind::kMod:
      case IRNodeKind::kMin:
      case IRNodeKind::kMax:
      case IRNodeKind::kSelect: {
        // A non-affine term: kept whole as an atom (its loops must all be known,
        // as for the affine part, or the index's bounds are unknown anyway).
        if (form->num_atoms == kMaxAtoms) return false;
        uint64_t m = LoopVarMask(e, loops);
        form->atoms[static_cast<size_t>(form->num_atoms++)] = {&e, scale, m};
        return true;
      }
      // Sums and products reach here only when not affine: a product of two
      // non-constants, or a scale past int64_t.
      case IRNodeKind::kAdd: case IRNodeKind::kSub: case IRNodeKind::kMul:
      // Not affine in the loop variables: a float, a comparison or logic value,
      // a load's or a call's.
      case IRNodeKind::kFloatImm: case IRNodeKind::kEQ: case IRNodeKind::kNE: case IRNodeKind::kLT:
      case IRNodeKind::kLE: case IRNodeKind::kGT: case IRNodeKind::kGE: case IRNodeKind::kAnd:
      case IRNodeKind::kOr: case IRNodeKind::kNot: case IRNodeKind::kLoad: case IRNodeKind::kCall:
      TF_STMT_KIND_CASES  // not expressions
        break;
    }
    return false;
  }
};

// Division and modulo are bounded only by a positive constant (what split
// and fuse produce).
std::optional<Interval> DivByConst(Interval a, Interval b) {
  if (!b.is_const() || b.min <= 0) return std::nullopt;
  return Interval::FloorDiv(a, b.min);
}
std::optional<Interval> ModByConst(Interval a, Interval b) {
  if (!b.is_const() || b.min <= 0) return std::nullopt;
  return Interval::FloorMod(a, b.min);
}

}  // namespace

std::optional<Interval> EvalInterval(const Expr& e, const LoopStack& loops, VaryingLoops varying) {
  switch (e.kind()) {
    case IRNodeKind::kIntImm: return Interval::Point(e.as<IntImm>()->value);
    case IRNodeKind::kVariable: return VarRange(e.as<Variable>(), loops, varying);
    case IRNodeKind::kCast: return EvalInterval(e.as<Cast>()->value, loops, varying);
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      std::optional<Interval> t = EvalInterval(op->true_value, loops, varying);
      std::optional<Interval> f = EvalInterval(op->false_value, loops, varying);
      if (!t || !f) return std::nullopt;
      return Interval::Union(*t, *f);
    }
#define TF_INTERVAL_BINARY(K, result)                                  \
  case IRNodeKind::k##K: {                                             \
    const auto* op = e.as<K>();                                        \
    std::optional<Interval> a = EvalInterval(op->a, loops, varying);   \
    std::optional<Interval> b = EvalInterval(op->b, loops, varying);   \
    if (!a || !b) return std::nullopt;                                 \
    return result;                                                     \
  }
      TF_INTERVAL_BINARY(Add, Interval::Add(*a, *b))
      TF_INTERVAL_BINARY(Sub, Interval::Sub(*a, *b))
      TF_INTERVAL_BINARY(Mul, Interval::Mul(*a, *b))
      TF_INTERVAL_BINARY(Div, DivByConst(*a, *b))
      TF_INTERVAL_BINARY(Mod, ModByConst(*a, *b))
      TF_INTERVAL_BINARY(Min, Interval::Min(*a, *b))
      TF_INTERVAL_BINARY(Max, Interval::Max(*a, *b))
#undef TF_INTERVAL_BINARY
    // Not affine in the loop variables: a float, a comparison or logic value,
    // a load's or a call's.
    case IRNodeKind::kFloatImm: case IRNodeKind::kEQ: case IRNodeKind::kNE: case IRNodeKind::kLT:
    case IRNodeKind::kLE: case IRNodeKind::kGT: case IRNodeKind::kGE: case IRNodeKind::kAnd:
    case IRNodeKind::kOr: case IRNodeKind::kNot: case IRNodeKind::kLoad: case IRNodeKind::kCall:
    TF_STMT_KIND_CASES  // not expressions
      break;
  }
  return std::nullopt;  // loads in indices, floats: unknown
}

uint64_t LoopVarMask(const Expr& e, const LoopStack& loops) {
  if (!e.defined()) return 0;
  switch (e.kind()) {
    case IRNodeKind::kIntImm:
    case IRNodeKind::kFloatImm: return 0;
    case IRNodeKind::kVariable: {
      int d = loops.DepthOf(e.as<Variable>());
      return d < 0 ? 0 : uint64_t{1} << d;
    }
    case IRNodeKind::kCast: return LoopVarMask(e.as<Cast>()->value, loops);
    case IRNodeKind::kNot: return LoopVarMask(e.as<Not>()->a, loops);
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      return LoopVarMask(op->condition, loops) | LoopVarMask(op->true_value, loops) |
             LoopVarMask(op->false_value, loops);
    }
    case IRNodeKind::kLoad: {
      uint64_t m = 0;
      for (const Expr& i : e.as<Load>()->indices) m |= LoopVarMask(i, loops);
      return m;
    }
    case IRNodeKind::kCall: {
      uint64_t m = 0;
      for (const Expr& a : e.as<Call>()->args) m |= LoopVarMask(a, loops);
      return m;
    }
#define TF_MASK_BINARY(K)                                   \
  case IRNodeKind::k##K: {                                  \
    const auto* op = e.as<K>();                             \
    return LoopVarMask(op->a, loops) | LoopVarMask(op->b, loops); \
  }
      TF_MASK_BINARY(Add) TF_MASK_BINARY(Sub) TF_MASK_BINARY(Mul) TF_MASK_BINARY(Div) TF_MASK_BINARY(Mod)
      TF_MASK_BINARY(Min) TF_MASK_BINARY(Max) TF_MASK_BINARY(EQ) TF_MASK_BINARY(NE) TF_MASK_BINARY(LT)
      TF_MASK_BINARY(LE) TF_MASK_BINARY(GT) TF_MASK_BINARY(GE) TF_MASK_BINARY(And) TF_MASK_BINARY(Or)
#undef TF_MASK_BINARY
    TF_STMT_KIND_CASES  // not expressions
      break;
  }
  return 0;
}

void AnalyzeIndex(const Expr& e, const LoopStack& loops, IndexForm* out) {
  IndexForm& form = *out;
  const int depth = std::min(loops.depth(), kMaxDepth);
  form.expr = &e;
  form.constant = 0;
  form.mask = 0;
  form.num_atoms = 0;
  std::fill_n(form.coef.begin(), depth, 0);
  form.linear = Linearize(e, 1, IndexTerms{loops, &form});
  if (form.linear) {
    for (int d = 0; d < depth; ++d) {
      if (form.coef[static_cast<size_t>(d)] != 0) form.mask |= uint64_t{1} << d;
    }
    for (int k = 0; k < form.num_atoms; ++k) form.mask |= form.atoms[static_cast<size_t>(k)].mask;
  } else {
    form.num_atoms = 0;
    form.mask = LoopVarMask(e, loops);
  }
}

int64_t IndexForm::Width(const LoopStack& loops, int level, int64_t dim_extent) const {
  if ((mask >> std::min(level, 63)) == 0 || level >= loops.depth()) return 1;
  int64_t w = 1;
  if (linear) {
    for (int d = level; d < std::min(loops.depth(), kMaxDepth); ++d) {
      w += std::abs(coef[static_cast<size_t>(d)]) * (loops.at(d).extent - 1);
      if (w >= dim_extent) return dim_extent;
    }
    for (int k = 0; k < num_atoms; ++k) {
      const IndexAtom& a = atoms[static_cast<size_t>(k)];
      if ((a.mask >> std::min(level, 63)) == 0) continue;  // its loops sit at their first value
      std::optional<Interval> iv = EvalInterval(*a.expr, loops, VaryingLoops{level, -1});
      if (!iv) return dim_extent;
      w += std::abs(a.scale) * (iv->extent() - 1);
      if (w >= dim_extent) return dim_extent;
    }
  } else {
    std::optional<Interval> iv = EvalInterval(*expr, loops, VaryingLoops{level, -1});
    w = iv ? iv->extent() : dim_extent;
  }
  return std::clamp<int64_t>(w, 1, dim_extent);
}

void IndexForm::AllWidths(const LoopStack& loops, int64_t dim_extent, int64_t* out) const {
  const int depth = loops.depth();
  out[depth] = 1;
  if (!linear) {
    for (int level = 0; level < depth; ++level) out[level] = Width(loops, level, dim_extent);
    return;
  }
  int64_t affine = 1;  // saturates at dim_extent: every term is non-negative
  for (int level = depth - 1; level >= 0; --level) {
    if (level < kMaxDepth) {
      affine = std::min(dim_extent, affine + std::abs(coef[static_cast<size_t>(level)]) * (loops.at(level).extent - 1));
    }
    if ((mask >> std::min(level, 63)) == 0) {
      out[level] = 1;
      continue;
    }
    int64_t w = affine;
    for (int k = 0; k < num_atoms && w < dim_extent; ++k) {
      const IndexAtom& a = atoms[static_cast<size_t>(k)];
      if ((a.mask >> std::min(level, 63)) == 0) continue;
      std::optional<Interval> iv = EvalInterval(*a.expr, loops, VaryingLoops{level, -1});
      w = iv ? w + std::abs(a.scale) * (iv->extent() - 1) : dim_extent;
    }
    out[level] = std::clamp<int64_t>(w, 1, dim_extent);
  }
}

int64_t IndexForm::Step(const LoopStack& loops, int d) const {
  if (d >= kMaxDepth || !((mask >> d) & 1)) return 0;
  if (linear) {
    int64_t step = std::abs(coef[static_cast<size_t>(d)]);
    for (int k = 0; k < num_atoms; ++k) {
      const IndexAtom& a = atoms[static_cast<size_t>(k)];
      if (!((a.mask >> d) & 1)) continue;
      std::optional<Interval> iv = EvalInterval(*a.expr, loops, VaryingLoops{0, d});
      if (!iv) return 1;
      step += std::abs(a.scale) * (iv->max - iv->min);
    }
    return step;
  }
  std::optional<Interval> iv = EvalInterval(*expr, loops, VaryingLoops{0, d});
  return iv ? iv->max - iv->min : 1;
}

}  // namespace tunefarm::costmodel::detail
