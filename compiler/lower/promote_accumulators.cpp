#include "tunefarm/compiler/lower/promote_accumulators.h"

#include <algorithm>
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
  void VisitAllocate(const Allocate* op) override {
    if (op->buffer.get() == buffer_) opaque = true;  // another lifetime of B
    IRVisitor::VisitAllocate(op);
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
  std::vector<const For*> loops;
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
      window.loops.push_back(nullptr);
      continue;
    }
    auto it = scan.loops.find(inner);
    if (it == scan.loops.end() || it->second.size() != 1 || !used.insert(inner).second) return std::nullopt;
    const For* loop = it->second.front();
    const int64_t* extent = AsConstInt(loop->extent);
    const int64_t* min = AsConstInt(loop->min);
    if (loop->kind != ForKind::kUnrolled && loop->kind != ForKind::kVectorized) return std::nullopt;
    if (extent == nullptr || *extent < 1 || min == nullptr || *min != 0) return std::nullopt;
    window.rest.push_back(Simplify(Substitute(index, {{inner, MakeConst(inner->dtype, 0)}})));
    window.loops.push_back(loop);
  }
  return window;
}

// One buffer promoted in one loop: its window and the tile that holds it.
struct Promotion {
  Buffer from;
  Buffer tile;
  Window window;
};

// `bound`: the loop variables around `loop`. A variable bound again under it
// would make one name stand for two loops.
std::optional<Promotion> PlanPromotion(const Stmt& loop, const Buffer& buffer, const std::set<const Variable*>& bound) {
  AccessScan scan(buffer.get());
  scan.Visit(loop);
  if (scan.opaque || scan.guarded) return std::nullopt;
  // An accumulation reads and writes the window; a window only written
  // (an init) or only read gains nothing from registers.
  if (scan.stores == 0 || scan.stores == int(scan.accesses.size())) return std::nullopt;
  for (const Variable* v : scan.defined) {
    if (bound.count(v) > 0) return std::nullopt;
  }
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
  for (const For* l : window->loops) {
    if (l == nullptr) continue;
    shape.push_back(*AsConstInt(l->extent));
    window_vars.insert(l->loop_var.get());
  }
  // Without a loop that leaves the window in place there is nothing to keep
  // in registers across iterations.
  bool reduces = false;
  for (const auto& entry : scan.loops) reduces = reduces || window_vars.count(entry.first) == 0;
  if (!reduces) return std::nullopt;
  if (shape.empty()) shape.push_back(1);
  Buffer tile = MakeBuffer(buffer->name + "_tile", buffer->dtype, shape, MemoryScope::kLocal);
  if (tile->num_elements() >= buffer->num_elements() || tile->size_bytes() > kMaxPromotedBytes) return std::nullopt;
  return Promotion{buffer, tile, *window};
}

// The tile's indices for the window's loop variables (or for copies' own).
std::vector<Expr> TileIndices(const Window& window, const std::vector<Var>& vars) {
  std::vector<Expr> tile;
  for (size_t d = 0; d < window.loops.size(); ++d) {
    if (window.loops[d] != nullptr) tile.push_back(vars[d]);
  }
  if (tile.empty()) tile.push_back(Expr(int64_t{0}));
  return tile;
}

enum class CopyDirection { kIntoTile, kOutOfTile };

// Copies the window into the tile or back, one loop per window dimension:
// unrolled, and vectorized for the innermost when the reduction vectorizes
// it too.
Stmt CopyNest(const Promotion& p, CopyDirection direction) {
  const Window& w = p.window;
  std::vector<Var> vars(w.loops.size());
  std::vector<Expr> full;
  for (size_t d = 0; d < w.loops.size(); ++d) {
    if (w.loops[d] == nullptr) {
      full.push_back(w.rest[d]);
      continue;
    }
    const Var& original = w.loops[d]->loop_var;
    vars[d] = Var(original.name() + (direction == CopyDirection::kIntoTile ? "_in" : "_out"), original.dtype());
    full.push_back(Simplify(w.rest[d] + Expr(vars[d])));
  }
  std::vector<Expr> tile = TileIndices(w, vars);
  Stmt body = direction == CopyDirection::kIntoTile ? Store::Make(p.tile, Load::Make(p.from, full), tile)
                                                    : Store::Make(p.from, Load::Make(p.tile, tile), full);
  bool innermost = true;
  for (size_t d = w.loops.size(); d-- > 0;) {
    if (w.loops[d] == nullptr) continue;
    ForKind kind = innermost && w.loops[d]->kind == ForKind::kVectorized ? ForKind::kVectorized : ForKind::kUnrolled;
    body = For::Make(vars[d], MakeConst(vars[d].dtype(), 0), w.loops[d]->extent, kind, body);
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
    std::vector<Var> vars(p.window.loops.size());
    for (size_t d = 0; d < vars.size(); ++d) {
      if (p.window.loops[d] != nullptr) vars[d] = p.window.loops[d]->loop_var;
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
    // The code generator widens a vectorized loop only when its body holds no
    // allocation and no loop: a tile under one would leave it scalar.
    if (vector_depth_ == 0 && (op->kind == ForKind::kSerial || op->kind == ForKind::kUnrolled)) {
      std::vector<Promotion> promotions;
      for (const Buffer& buffer : local_) {
        if (std::optional<Promotion> p = PlanPromotion(self, buffer, bound_)) promotions.push_back(*p);
      }
      if (!promotions.empty()) return Promote(self, promotions);
    }
    return Descend(op, self);
  }

 private:
  // The outermost loop that qualifies takes a buffer's window; the buffers
  // it does not take may still qualify further in.
  Stmt Promote(const Stmt& self, const std::vector<Promotion>& promotions) {
    Stmt retargeted = Retarget(promotions).Mutate(self);
    const std::vector<Buffer> saved = local_;
    std::erase_if(local_, [&](const Buffer& b) {
      return std::any_of(promotions.begin(), promotions.end(), [&](const Promotion& p) { return p.from == b; });
    });
    Stmt result = Descend(retargeted.as<For>(), retargeted);
    local_ = saved;
    for (const Promotion& p : promotions) {
      result = Allocate::Make(p.tile, SeqStmt::Make({CopyNest(p, CopyDirection::kIntoTile), result,
                                                     CopyNest(p, CopyDirection::kOutOfTile)}));
    }
    return result;
  }

  Stmt Descend(const For* op, const Stmt& self) {
    const bool vectorized = op->kind == ForKind::kVectorized;
    vector_depth_ += vectorized;
    bound_.insert(op->loop_var.get());
    Stmt result = IRMutator::MutateFor(op, self);
    bound_.erase(op->loop_var.get());
    vector_depth_ -= vectorized;
    return result;
  }

  std::vector<Buffer> local_;             // local buffers allocated around the statement being mutated
  std::set<const Variable*> bound_;       // the loop variables around it
  int vector_depth_ = 0;                  // vectorized loops around it
};

bool HasThreadBoundLoop(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    found = found || (n->kind == IRNodeKind::kFor && static_cast<const For*>(n)->kind == ForKind::kThreadBinding);
  });
  return found;
}

}  // namespace

Stmt PromoteAccumulators(const Stmt& s) {
  // A GPU kernel's accumulators are its threads' own, and the CUDA generator
  // lowers without this pass: the cost model's view of the kernel (this
  // pass's output) must stay the code that runs.
  if (HasThreadBoundLoop(s)) return s;
  return Promoter().Mutate(s);
}

}  // namespace tunefarm::ir
