#include "tunefarm/compiler/lower/unroll_loops.h"

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::ir {

namespace {

// Iterations of the innermost bodies under s (product of constant extents
// along the heaviest path); -1 when some extent is not constant.
int64_t TripCount(const Stmt& s) {
  if (!s.defined()) return 1;
  if (const auto* f = s.as<For>()) {
    const int64_t* e = AsConstInt(f->extent);
    int64_t inner = TripCount(f->body);
    if (!e || inner < 0) return -1;
    // A vectorized loop becomes one vector operation per body statement, not
    // one per lane: counting its lanes would keep the short tap loops around
    // a wide vector rolled, leaving their unrolling to LLVM, whose choice the
    // schedule and the cost model cannot see.
    if (f->kind == ForKind::kVectorized) return inner;
    return *e * inner;
  }
  if (const auto* seq = s.as<SeqStmt>()) {
    int64_t total = 0;
    for (const Stmt& c : seq->seq) {
      int64_t t = TripCount(c);
      if (t < 0) return -1;
      total += t;
    }
    return total;
  }
  if (const auto* a = s.as<Allocate>()) return TripCount(a->body);
  if (const auto* l = s.as<LetStmt>()) return TripCount(l->body);
  if (const auto* i = s.as<IfThenElse>()) {
    int64_t t = TripCount(i->then_case), e = TripCount(i->else_case);
    return (t < 0 || e < 0) ? -1 : std::max(t, e);
  }
  if (const auto* b = s.as<Block>()) {
    int64_t t = TripCount(b->body), i = TripCount(b->init);
    return (t < 0 || i < 0) ? -1 : t + i;
  }
  return 1;
}

class Unroller : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    int64_t saved = max_step_;
    if (auto it = op->annotations.find("pragma_auto_unroll_max_step"); it != op->annotations.end()) {
      max_step_ = it->second;
    }
    Stmt body = Mutate(op->body);
    ForKind kind = op->kind;
    if (max_step_ > 0 && kind == ForKind::kSerial && AsConstInt(op->extent)) {
      int64_t trips = TripCount(Stmt(self));
      if (trips >= 0 && trips <= max_step_) kind = ForKind::kUnrolled;
    }
    max_step_ = saved;
    if (body.same_as(op->body) && kind == op->kind) return self;
    return For::Make(op->loop_var, op->min, op->extent, kind, body, op->thread_tag, op->annotations);
  }

 private:
  int64_t max_step_ = 0;
};

}  // namespace

Stmt UnrollLoops(const Stmt& s) { return Unroller().Mutate(s); }

}  // namespace tunefarm::ir
