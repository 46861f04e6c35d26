#include "schedule_thread_relax.h"

#include <string>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::sched {

using namespace ir;

namespace {

bool IsThreadLoop(const For* f) {
  return f->kind == ForKind::kThreadBinding &&
         (f->thread_tag.rfind("threadIdx.", 0) == 0 || f->thread_tag == "vthread");
}

// `loop` and every loop enclosing it, outermost first.
std::vector<const For*> LoopsAboveAndAt(const Stmt& root, const For* loop) {
  std::vector<const For*> loops = LoopsAbove(root, loop);
  loops.push_back(loop);
  return loops;
}

// The additive terms of e with their constant coefficients: a - 2 * (b + c)
// is {a: 1, b: -2, c: -2}. Anything other than +, - and * by a constant is a term.
void AdditiveTerms(const Expr& e, int64_t coef, std::vector<std::pair<Expr, int64_t>>* out) {
  if (const auto* add = e.as<Add>()) {
    AdditiveTerms(add->a, coef, out);
    AdditiveTerms(add->b, coef, out);
    return;
  }
  if (const auto* sub = e.as<Sub>()) {
    AdditiveTerms(sub->a, coef, out);
    AdditiveTerms(sub->b, -coef, out);
    return;
  }
  if (const auto* mul = e.as<Mul>()) {
    if (const int64_t* c = AsConstInt(mul->b)) return AdditiveTerms(mul->a, coef * *c, out);
    if (const int64_t* c = AsConstInt(mul->a)) return AdditiveTerms(mul->b, coef * *c, out);
  }
  out->push_back({e, coef});
}

// Whether e uses some variable of `relaxed`, and whether it uses any other variable.
void ClassifyVars(const Expr& e, const std::map<const Variable*, int64_t>& relaxed, bool* uses_relaxed,
                  bool* uses_other) {
  PostOrderVisit(Evaluate::Make(e), [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kVariable) return;
    (relaxed.count(static_cast<const Variable*>(n)) ? *uses_relaxed : *uses_other) = true;
  });
}

}  // namespace

Result<std::map<const Variable*, int64_t>> RelaxedThreadLoops(const Stmt& root, const For* loop, MemoryScope scope) {
  std::map<const Variable*, int64_t> out;
  // kLocal: one buffer per thread, nothing to share. kGlobal: relaxing would
  // make every thread of the grid compute the whole region of a buffer that
  // no barrier orders across blocks; its producers keep their own region.
  if (scope != MemoryScope::kShared) return out;
  for (const For* f : LoopsAboveAndAt(root, loop)) {
    if (!IsThreadLoop(f)) continue;
    const int64_t* extent = AsConstInt(f->extent);
    const int64_t* min = AsConstInt(f->min);
    if (!extent || !min || *min != 0) {
      return Status::InvalidArgument("thread loop " + f->loop_var.name() + " (" + f->thread_tag +
                                     ") has no constant extent from 0; a shared buffer cannot cover its threads");
    }
    out[f->loop_var.get()] = *extent;
  }
  return out;
}

Region RelaxRegion(const Region& region, const std::map<const Variable*, int64_t>& relaxed,
                   const std::vector<int64_t>& shape) {
  if (relaxed.empty()) return region;
  RangeMap ranges;
  for (const auto& [v, extent] : relaxed) ranges[v] = Interval{0, extent - 1};
  Region out;
  for (size_t d = 0; d < region.size(); ++d) {
    std::vector<std::pair<Expr, int64_t>> terms;
    AdditiveTerms(region[d].min, 1, &terms);
    Expr min = IntImm::Make(DataType::Index(), 0);
    int64_t extent = region[d].extent;
    bool whole = false;
    for (const auto& [term, coef] : terms) {
      bool uses_relaxed = false, uses_other = false;
      ClassifyVars(term, relaxed, &uses_relaxed, &uses_other);
      if (!uses_relaxed) {
        min = min + term * Expr(coef);
        continue;
      }
      std::optional<Interval> bound = uses_other ? std::nullopt : BoundOf(term, ranges);
      if (!bound) {
        whole = true;
        break;
      }
      int64_t lo = bound->min * coef, hi = bound->max * coef;
      if (lo > hi) std::swap(lo, hi);
      min = min + Expr(lo);
      extent += hi - lo;
    }
    if (whole) {
      out.push_back(RegionDim{IntImm::Make(DataType::Index(), 0), shape.at(d)});
    } else {
      out.push_back(RegionDim{Simplify(min), extent});
    }
  }
  return out;
}

const For* OutermostRelaxedLoop(const Stmt& root, const For* loop, const std::map<const Variable*, int64_t>& relaxed) {
  for (const For* f : LoopsAboveAndAt(root, loop)) {
    if (relaxed.count(f->loop_var.get())) return f;
  }
  return nullptr;
}

}  // namespace tunefarm::sched
