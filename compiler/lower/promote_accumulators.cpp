#include "tunefarm/compiler/lower/promote_accumulators.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::ir {

namespace {

// What a loop L does with one buffer, and what L defines.
class AccessScan : public IRVisitor {
 public:
  explicit AccessScan(const BufferNode* buffer) : buffer_(buffer) {}

  std::vector<const std::vector<Expr>*> accesses;  // the indices of every load and store of the buffer
  int stores = 0;
  bool guarded = false;   // some access is under an if
  // A barrier, a thread-bound loop or a block (not a CPU register tile), a
  // loop whose extent is not a constant of at least 1, or a loop whose nest a
  // code generator matches as it stands (dot products, matrix
  // multiply-accumulates, double buffers).
  bool opaque = false;
  std::map<const Variable*, std::vector<const For*>> loops;  // the loops under L (L too), by variable
  std::set<const Variable*> defined;                           // their variables and the lets'

 protected:
  void VisitFor(const For* op) override {
    if (op->kind == ForKind::kThreadBinding) opaque = true;
    // A loop that may not run could leave the window untouched for outer
    // values at which it lies outside the buffer.
    const int64_t* extent = AsConstInt(op->extent);
    if (extent == nullptr || *extent < 1) opaque = true;
    for (const char* pattern : {kDotProductAnnotation, kMatrixMultiplyAnnotation, kDoubleBufferAnnotation}) {
      if (op->annotations.count(pattern) > 0) opaque = true;
    }
    loops[op->loop_var.get()].push_back(op);
    defined.insert(op->loop_var.get());
    IRVisitor::VisitFor(op);
  }
  void VisitLetStmt(const LetStmt* op) override {
    defined.insert(op->var.get());
    IRVisitor::VisitLetStmt(op);
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    ++if_depth_;
    IRVisitor::VisitIfThenElse(op);
    --if_depth_;
  }
  void VisitBarrier(const Barrier*) override { opaque = true; }
  void VisitBlock(const Block*) override { opaque = true; }
  void VisitLoad(const Load* op) override {
    if (op->buffer.get() == buffer_) Record(op->indices);
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    if (op->buffer.get() == buffer_) {
      Record(op->indices);
      ++stores;
    }
    IRVisitor::VisitStore(op);
  }

 private:
  void Record(const std::vector<Expr>& indices) {
    accesses.push_back(&indices);
    if (if_depth_ > 0) guarded = true;
  }
  const BufferNode* buffer_;
  int if_depth_ = 0;
};

// Whether an expression reads memory or a variable of `vars`.
class MentionScan : public IRVisitor {
 public:
  explicit MentionScan(const std::set<const Variable*>& vars) : vars_(vars) {}
  bool found = false;

 protected:
  void VisitVariable(const Variable* op) override { found = found || vars_.count(op) > 0; }
  void VisitLoad(const Load*) override { found = true; }

 private:
  const std::set<const Variable*>& vars_;
};

bool ReadsMemoryOrAny(const Expr& e, const std::set<const Variable*>& vars) {
  MentionScan scan(vars);
  scan.Visit(e);
  return scan.found;
}

// The window of B that L updates: per dimension of B, the part of the index
// free of L's variables, and the loop whose variable is added to it (null
// when none is).
struct Window {
  std::vector<Expr> rest;
  std::vector<const For*> loop;
};

std::optional<Window> FindWindow(const std::vector<Expr>& indices, const AccessScan& scan) {
  Window window;
  std::set<const Variable*> used;
  for (const Expr& index : indices) {
    const Variable* inner = nullptr;
    bool linear = Linearize(index, 1, [&](const Expr& term, int64_t scale) {
      const auto* v = term.as<Variable>();
      if (v != nullptr && scan.defined.count(v) > 0) {
        if (inner != nullptr || scale != 1) return false;
        inner = v;
        return true;
      }
      return !ReadsMemoryOrAny(term, scan.defined);
    });
    if (!linear) return std::nullopt;
    if (inner == nullptr) {
      window.rest.push_back(index);
      window.loop.push_back(nullptr);
      continue;
    }
    auto it = scan.loops.find(inner);
    if (it == scan.loops.end() || it->second.size() != 1 || !used.insert(inner).second) return std::nullopt;
    const For* loop = it->second.front();
    const int64_t* extent = AsConstInt(loop->extent);
    const int64_t* min = AsConstInt(loop->min);
    if (loop->kind != ForKind::kUnrolled && loop->kind != ForKind::kVectorized) return std::nullopt;
    if (extent == nullptr || *extent < 1 || min == nullptr || *min != 0) return std::nullopt;
    window.rest.push_back(Simplify(Substitute(index, {{inner, Expr(int64_t{0})}})));
    window.loop.push_back(loop);
  }
  return window;
}

// One buffer promoted in one loop: its window and the tile that holds it.
struct Promotion {
  Buffer from;
  Buffer tile;
  Window window;
};

std::optional<Promotion> PlanPromotion(const Stmt& loop, const Buffer& buffer) {
  AccessScan scan(buffer.get());
  scan.Visit(loop);
  if (scan.opaque || scan.guarded || scan.stores == 0 || scan.stores == int(scan.accesses.size())) return std::nullopt;
  const std::vector<Expr>& indices = *scan.accesses.front();
  for (const std::vector<Expr>* other : scan.accesses) {
    if (other->size() != indices.size()) return std::nullopt;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (!ExprEqual((*other)[d], indices[d])) return std::nullopt;
    }
  }
  std::optional<Window> window = FindWindow(indices, scan);
  if (!window) return std::nullopt;
  std::vector<int64_t> shape;
  std::set<const Variable*> window_vars;
  for (const For* l : window->loop) {
    if (l == nullptr) continue;
    shape.push_back(*AsConstInt(l->extent));
    window_vars.insert(l->loop_var.get());
  }
  // Without a loop that leaves the window in place there is nothing to keep
  // in registers across iterations.
  bool reduces = false;
  for (const auto& [var, fors] : scan.loops) reduces = reduces || window_vars.count(var) == 0;
  if (!reduces) return std::nullopt;
  if (shape.empty()) shape.push_back(1);
  Buffer tile = MakeBuffer(buffer->name + "_tile", buffer->dtype, shape, MemoryScope::kLocal);
  if (tile->num_elements() >= buffer->num_elements() || tile->size_bytes() > kMaxPromotedBytes) return std::nullopt;
  return Promotion{buffer, tile, *window};
}

// The tile's indices for the window's loop variables (or for copies' own).
std::vector<Expr> TileIndices(const Window& window, const std::vector<Var>& vars) {
  std::vector<Expr> tile;
  for (size_t d = 0; d < window.loop.size(); ++d) {
    if (window.loop[d] != nullptr) tile.push_back(vars[d]);
  }
  if (tile.empty()) tile.push_back(Expr(int64_t{0}));
  return tile;
}

// Copies the window into the tile (`into_tile`) or back, one loop per
// window dimension: unrolled, and vectorized for the innermost when the
// reduction vectorizes it too.
Stmt CopyNest(const Promotion& p, bool into_tile) {
  const Window& w = p.window;
  std::vector<Var> vars(w.loop.size());
  std::vector<Expr> full;
  for (size_t d = 0; d < w.loop.size(); ++d) {
    if (w.loop[d] == nullptr) {
      full.push_back(w.rest[d]);
      continue;
    }
    vars[d] = Var(w.loop[d]->loop_var.name() + (into_tile ? "_in" : "_out"));
    full.push_back(Simplify(w.rest[d] + Expr(vars[d])));
  }
  std::vector<Expr> tile = TileIndices(w, vars);
  Stmt body = into_tile ? Store::Make(p.tile, Load::Make(p.from, full), tile)
                        : Store::Make(p.from, Load::Make(p.tile, tile), full);
  bool innermost = true;
  for (size_t d = w.loop.size(); d-- > 0;) {
    if (w.loop[d] == nullptr) continue;
    ForKind kind = innermost && w.loop[d]->kind == ForKind::kVectorized ? ForKind::kVectorized : ForKind::kUnrolled;
    body = For::Make(vars[d], Expr(int64_t{0}), w.loop[d]->extent, kind, body);
    innermost = false;
  }
  return body;
}

// Points every access of the promoted buffers at their tiles.
class Retarget : public IRMutator {
 public:
  explicit Retarget(const std::vector<Promotion>& promotions) : promotions_(promotions) {}

 protected:
  Expr MutateLoad(const Load* op, const Expr& self) override {
    if (const Promotion* p = Find(op->buffer)) return Load::Make(p->tile, Indices(*p));
    return IRMutator::MutateLoad(op, self);
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    if (const Promotion* p = Find(op->buffer)) return Store::Make(p->tile, Mutate(op->value), Indices(*p));
    return IRMutator::MutateStore(op, self);
  }

 private:
  const Promotion* Find(const Buffer& buffer) const {
    for (const Promotion& p : promotions_) {
      if (p.from.get() == buffer.get()) return &p;
    }
    return nullptr;
  }
  static std::vector<Expr> Indices(const Promotion& p) {
    std::vector<Var> vars(p.window.loop.size());
    for (size_t d = 0; d < vars.size(); ++d) {
      if (p.window.loop[d] != nullptr) vars[d] = p.window.loop[d]->loop_var;
    }
    return TileIndices(p.window, vars);
  }
  const std::vector<Promotion>& promotions_;
};

class Promoter : public IRMutator {
 protected:
  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    bool local = op->buffer->scope == MemoryScope::kLocal;
    if (local) local_.push_back(op->buffer);
    Stmt result = IRMutator::MutateAllocate(op, self);
    if (local) local_.pop_back();
    return result;
  }

  Stmt MutateFor(const For* op, const Stmt& self) override {
    // Under a vectorized loop every lane is an iteration of its own: a tile
    // there would be one slot for all of them.
    if (vector_depth_ == 0 && (op->kind == ForKind::kSerial || op->kind == ForKind::kUnrolled)) {
      std::vector<Promotion> promotions;
      for (const Buffer& buffer : local_) {
        if (std::optional<Promotion> p = PlanPromotion(self, buffer)) promotions.push_back(*p);
      }
      if (!promotions.empty()) {
        // The outermost loop that qualifies takes the window; nothing under it
        // is promoted again.
        Stmt result = Retarget(promotions).Mutate(self);
        for (const Promotion& p : promotions) {
          result = Allocate::Make(p.tile, SeqStmt::Make({CopyNest(p, true), result, CopyNest(p, false)}));
        }
        return result;
      }
    }
    const bool vectorized = op->kind == ForKind::kVectorized;
    vector_depth_ += vectorized;
    Stmt result = IRMutator::MutateFor(op, self);
    vector_depth_ -= vectorized;
    return result;
  }

 private:
  std::vector<Buffer> local_;  // local buffers allocated around the statement being mutated
  int vector_depth_ = 0;       // vectorized loops around it
};

}  // namespace

Stmt PromoteAccumulators(const Stmt& s) { return Promoter().Mutate(s); }

}  // namespace tunefarm::ir
