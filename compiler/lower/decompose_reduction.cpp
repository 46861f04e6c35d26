#include "tunefarm/compiler/lower/decompose_reduction.h"

#include <map>
#include <set>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::ir {

namespace {

// One statement on the path from the reduction loop down to the block: a For,
// an Allocate, or a SeqStmt with the index of the child the path goes through.
struct PathStep {
  Stmt stmt;
  size_t child = 0;
};

struct ReductionPath {
  std::vector<PathStep> steps;  // outermost first: steps[0] is the reduction loop
  const Block* block = nullptr;
};

struct Accesses {
  std::set<const BufferNode*> loads, stores;
};

bool BindingUses(const Block* block, IterKind kind, const Variable* v) {
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == kind && UsesVar(iv.binding, v)) return true;
  }
  return false;
}

// Every block with an init that reduces over `loop_var`, reached from `s`
// through For, Allocate and SeqStmt statements only.
void FindPaths(const Stmt& s, const Variable* loop_var, std::vector<PathStep>& steps,
               std::vector<ReductionPath>& out) {
  if (const auto* block = s.as<Block>()) {
    if (block->init.defined() && BindingUses(block, IterKind::kReduce, loop_var)) out.push_back({steps, block});
    return;
  }
  Stmt below;
  if (const auto* f = s.as<For>()) below = f->body;
  if (const auto* a = s.as<Allocate>()) below = a->body;
  if (below.defined()) {
    steps.push_back({s, 0});
    FindPaths(below, loop_var, steps, out);
    steps.pop_back();
  } else if (const auto* seq = s.as<SeqStmt>()) {
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      steps.push_back({s, i});
      FindPaths(seq->seq[i], loop_var, steps, out);
      steps.pop_back();
    }
  }
}

std::vector<const For*> LoopsOf(const ReductionPath& path) {
  std::vector<const For*> loops;
  for (const PathStep& step : path.steps) {
    if (const auto* f = step.stmt.as<For>()) loops.push_back(f);
  }
  return loops;
}

bool IsPerfect(const ReductionPath& path) {
  for (const PathStep& step : path.steps) {
    if (!step.stmt.as<For>()) return false;
  }
  return true;
}

Accesses AccessesOf(const Stmt& s) {
  Accesses a;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kLoad) a.loads.insert(static_cast<const Load*>(n)->buffer.get());
    if (n->kind == IRNodeKind::kStore) a.stores.insert(static_cast<const Store*>(n)->buffer.get());
  });
  return a;
}

bool Touches(const Accesses& a, const BufferNode* b) { return a.loads.count(b) || a.stores.count(b); }

// The init nest is built from these loops' extents and mins outside them: each
// must be a constant-size, sequential-or-unrolled loop whose range does not
// depend on the path.
bool LoopsAllowHoisting(const std::vector<const For*>& loops) {
  for (const For* f : loops) {
    if (f->kind == ForKind::kThreadBinding || !AsConstInt(f->extent)) return false;
    for (const For* g : loops) {
      if (UsesVar(f->min, g->loop_var.get())) return false;
    }
  }
  return true;
}

// The init may only depend on the spatial loops, and must run once per
// spatial point: a loop with several iterations that no spatial binding uses
// re-ran the guarded init on each of them, which a hoisted init would not.
bool BindingsAllowHoisting(const Block* block, const std::vector<const For*>& loops) {
  std::set<const Variable*> reduce_vars;
  for (const For* f : loops) {
    const Variable* v = f->loop_var.get();
    if (BindingUses(block, IterKind::kReduce, v)) {
      reduce_vars.insert(v);
      if (BindingUses(block, IterKind::kSpatial, v)) return false;
    } else if (*AsConstInt(f->extent) > 1 && !BindingUses(block, IterKind::kSpatial, v)) {
      return false;
    }
  }
  // Every variable of a reduction binding is a reduction loop of the path (so
  // the path's first loop is the outermost one).
  bool covered = true;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kReduce) continue;
    PostOrderVisit(Evaluate::Make(iv.binding), [&](const IRNode* n) {
      if (n->kind == IRNodeKind::kVariable) covered &= reduce_vars.count(static_cast<const Variable*>(n)) > 0;
    });
  }
  return covered;
}

// What runs between the original init and the hoisted one: the statements
// beside the path (copy stages, other blocks) and the block's own earlier
// iterations. None may see or change what the init stores, and what the init
// loads must not change under the loop.
bool NeighboursAllowHoisting(const ReductionPath& path, const Accesses& init) {
  const Accesses under_loop = AccessesOf(path.steps.front().stmt);
  for (const BufferNode* b : init.loads) {
    if (under_loop.stores.count(b)) return false;
  }
  for (const PathStep& step : path.steps) {
    if (const auto* alloc = step.stmt.as<Allocate>()) {
      if (Touches(init, alloc->buffer.get())) return false;
    }
    const auto* seq = step.stmt.as<SeqStmt>();
    if (!seq) continue;
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      if (i == step.child) continue;
      const Accesses sibling = AccessesOf(seq->seq[i]);
      for (const BufferNode* b : init.stores) {
        if (Touches(sibling, b)) return false;
      }
    }
  }
  if (IsPerfect(path)) return true;
  // A shared accumulator is visible to the block's other threads, and the
  // barriers the loop holds are placed for the stages' order: be conservative.
  for (const BufferNode* b : init.stores) {
    if (b->scope == MemoryScope::kShared) return false;
  }
  return true;
}

std::map<const Variable*, Expr> BindingMap(const Block* b) {
  std::map<const Variable*, Expr> m;
  for (const IterVar& iv : b->iter_vars) m[iv.var.get()] = iv.binding;
  return m;
}

bool MentionsAny(const Stmt& s, const std::vector<const For*>& loops) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kVariable) return;
    for (const For* f : loops) found |= f->loop_var.get() == static_cast<const Variable*>(n);
  });
  return found;
}

// The init over fresh copies of the path's spatial loops (one variable, one loop).
Stmt InitNest(const Block* block, const std::vector<const For*>& loops) {
  std::vector<const For*> spatial;
  for (const For* f : loops) {
    if (!BindingUses(block, IterKind::kReduce, f->loop_var.get())) spatial.push_back(f);
  }
  std::map<const Variable*, Expr> fresh;
  std::vector<Var> init_vars;
  for (const For* f : spatial) {
    init_vars.emplace_back(f->loop_var.name() + "_init", f->loop_var.dtype());
    fresh[f->loop_var.get()] = init_vars.back();
  }
  Stmt init = Substitute(Substitute(block->init, BindingMap(block)), fresh);
  // Bindings may mention loops above the path, never a loop of the path.
  if (MentionsAny(init, loops)) return Stmt();
  for (size_t i = spatial.size(); i-- > 0;) {
    init = For::Make(init_vars[i], spatial[i]->min, spatial[i]->extent, spatial[i]->kind, init, spatial[i]->thread_tag);
  }
  return init;
}

// The path rebuilt around the block without its init.
Stmt WithoutInit(const ReductionPath& path) {
  const Block* b = path.block;
  Stmt s = Block::Make(b->name, b->iter_vars, Stmt(), b->body, b->predicate);
  for (size_t i = path.steps.size(); i-- > 0;) {
    const Stmt& at = path.steps[i].stmt;
    if (const auto* f = at.as<For>()) {
      s = For::Make(f->loop_var, f->min, f->extent, f->kind, s, f->thread_tag, f->annotations);
    } else if (const auto* a = at.as<Allocate>()) {
      s = Allocate::Make(a->buffer, s);
    } else {
      std::vector<Stmt> seq = at.as<SeqStmt>()->seq;
      seq[path.steps[i].child] = s;
      s = SeqStmt::Make(std::move(seq));
    }
  }
  return s;
}

std::optional<DecomposedReduction> TryDecompose(const ReductionPath& path) {
  if (path.block->predicate.defined()) return std::nullopt;
  const std::vector<const For*> loops = LoopsOf(path);
  if (!LoopsAllowHoisting(loops) || !BindingsAllowHoisting(path.block, loops)) return std::nullopt;
  if (!NeighboursAllowHoisting(path, AccessesOf(path.block->init))) return std::nullopt;
  Stmt init = InitNest(path.block, loops);
  if (!init.defined()) return std::nullopt;
  return DecomposedReduction{init, WithoutInit(path)};
}

}  // namespace

std::optional<DecomposedReduction> DecomposeReduction(const Stmt& loop) {
  const auto* f = loop.as<For>();
  if (!f) return std::nullopt;
  std::vector<PathStep> steps;
  std::vector<ReductionPath> paths;
  FindPaths(loop, f->loop_var.get(), steps, paths);
  for (const ReductionPath& path : paths) {
    if (auto d = TryDecompose(path)) return d;
  }
  return std::nullopt;
}

}  // namespace tunefarm::ir
