// Tree queries, node replacement and affine region analysis for schedules.
#include "schedule_utils.h"

#include <set>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::sched {

using namespace ir;

namespace {

// Finds the first statement satisfying a predicate, remembering the loops above it.
class StmtFinder : public IRVisitor {
 public:
  explicit StmtFinder(std::function<bool(const StmtNode*)> pred) : pred_(std::move(pred)) {}
  using IRVisitor::Visit;
  void Visit(const Stmt& s) override {
    if (found_.defined() || !s.defined()) return;
    if (pred_(s.get())) {
      found_ = s;
      loops_found_ = loops_;
      return;
    }
    if (const auto* f = s.as<For>()) {
      loops_.push_back(f);
      IRVisitor::Visit(s);
      loops_.pop_back();
      return;
    }
    IRVisitor::Visit(s);
  }
  void Visit(const Expr&) override {}  // statements only

  Stmt found_;
  std::vector<const For*> loops_found_;

 private:
  std::function<bool(const StmtNode*)> pred_;
  std::vector<const For*> loops_;
};

class NodeReplacer : public IRMutator {
 public:
  NodeReplacer(const StmtNode* target, Stmt replacement) : target_(target), replacement_(std::move(replacement)) {}
  using IRMutator::Mutate;
  Stmt Mutate(const Stmt& s) override {
    if (s.get() == target_) return replacement_;
    return IRMutator::Mutate(s);
  }
  Expr Mutate(const Expr& e) override { return e; }

 protected:
  Stmt MutateSeqStmt(const SeqStmt* op, const Stmt& self) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt r = Mutate(s);
      changed |= !r.same_as(s);
      if (r.defined()) seq.push_back(r);
    }
    if (!changed) return self;
    if (seq.empty()) return Stmt();
    return SeqStmt::Make(std::move(seq));
  }
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (body.same_as(op->body)) return self;
    if (!body.defined()) return Stmt();
    return For::Make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, op->annotations);
  }
  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (body.same_as(op->body)) return self;
    if (!body.defined()) return Stmt();
    return Allocate::Make(op->buffer, body);
  }
  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    Stmt init = Mutate(op->init), body = Mutate(op->body);
    if (init.same_as(op->init) && body.same_as(op->body)) return self;
    return Block::Make(op->name, op->iter_vars, init, body, op->predicate);
  }

 private:
  const StmtNode* target_;
  Stmt replacement_;
};

// Splits an integer expression into sum(coef * var) over `varying` variables
// plus a symbolic rest that does not mention them (linearize.h).
bool SplitVarying(const Expr& e, const std::map<const Variable*, int64_t>& varying,
                  std::map<const Variable*, int64_t>* coefs, Expr* rest) {
  return Linearize(e, 1, [&](const Expr& term, int64_t scale) {
    if (const auto* v = term.as<Variable>(); v && varying.count(v)) {
      (*coefs)[v] += scale;
      return true;
    }
    // Any other term must not depend on the varying variables.
    for (const auto& [v, extent] : varying) {
      if (UsesVar(term, v)) return false;
    }
    Expr t = scale == 1 ? term : Mul::Make(term, IntImm::Make(term.dtype(), scale));
    *rest = rest->defined() ? Add::Make(*rest, t) : t;
    return true;
  });
}

}  // namespace

const For* FindLoop(const Stmt& root, const Variable* var) {
  StmtFinder finder([var](const StmtNode* n) {
    return n->kind == IRNodeKind::kFor && static_cast<const For*>(n)->loop_var.get() == var;
  });
  finder.Visit(root);
  return finder.found_.as<For>();
}

const Block* FindBlock(const Stmt& root, const std::string& name) {
  StmtFinder finder([&name](const StmtNode* n) {
    return n->kind == IRNodeKind::kBlock && static_cast<const Block*>(n)->name == name;
  });
  finder.Visit(root);
  return finder.found_.as<Block>();
}

Stmt FindStmt(const Stmt& root, const StmtNode* node) {
  StmtFinder finder([node](const StmtNode* n) { return n == node; });
  finder.Visit(root);
  return finder.found_;
}

std::vector<const For*> LoopsAbove(const Stmt& root, const StmtNode* node) {
  StmtFinder finder([node](const StmtNode* n) { return n == node; });
  finder.Visit(root);
  return finder.loops_found_;
}

const StmtNode* NestOf(const Stmt& root, const Block* block) {
  const StmtNode* top = block;
  auto loops = LoopsAbove(root, block);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    if ((*it)->body.get() != top) break;
    top = *it;
  }
  return top;
}

std::vector<const Block*> BlocksUnder(const Stmt& s) {
  std::vector<const Block*> blocks;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBlock) blocks.push_back(static_cast<const Block*>(n));
  });
  return blocks;
}

Stmt ReplaceNode(const Stmt& root, const StmtNode* target, const Stmt& replacement) {
  return NodeReplacer(target, replacement).Mutate(root);
}

bool IsReductionLoop(const Stmt& s, const Variable* var) {
  for (const Block* b : BlocksUnder(s)) {
    for (const IterVar& iv : b->iter_vars) {
      if (iv.kind == IterKind::kReduce && UsesVar(iv.binding, var)) return true;
    }
  }
  return false;
}

const Store* BlockStore(const Block* block) { return block->body.as<Store>(); }

std::vector<const Load*> BlockLoadsOf(const Block* block, const BufferNode* buffer) {
  std::vector<const Load*> loads;
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kLoad && static_cast<const Load*>(n)->buffer.get() == buffer) {
      loads.push_back(static_cast<const Load*>(n));
    }
  });
  return loads;
}

std::vector<Buffer> BlockReadBuffers(const Block* block) {
  std::vector<Buffer> out;
  const Store* store = BlockStore(block);
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const Buffer& b = static_cast<const Load*>(n)->buffer;
    if (store && b.get() == store->buffer.get()) return;  // the accumulator of a reduction
    for (const Buffer& seen : out) {
      if (seen.get() == b.get()) return;
    }
    out.push_back(b);
  });
  return out;
}

std::vector<Expr> BoundIndices(const Block* block, const std::vector<Expr>& indices) {
  std::map<const Variable*, Expr> m;
  for (const IterVar& iv : block->iter_vars) m[iv.var.get()] = iv.binding;
  std::vector<Expr> out;
  for (const Expr& i : indices) out.push_back(Substitute(i, m));
  return out;
}

Result<Region> AccessRegion(const std::vector<Expr>& indices, const std::map<const Variable*, int64_t>& varying,
                            const RangeMap& outer) {
  Region region;
  RangeMap ranges = outer;
  for (const auto& [v, extent] : varying) ranges[v] = Interval{0, extent - 1};
  for (const Expr& index : indices) {
    std::map<const Variable*, int64_t> coefs;
    Expr rest;
    if (!SplitVarying(Simplify(index, ranges), varying, &coefs, &rest)) {
      return Status::InvalidArgument("index " + std::to_string(region.size()) +
                                     " is not an affine function of the loops it varies over");
    }
    int64_t min_offset = 0, extent = 1;
    for (const auto& [v, c] : coefs) {
      int64_t span = c * (varying.at(v) - 1);
      if (span < 0) min_offset += span;
      extent += span < 0 ? -span : span;
    }
    Expr min = rest.defined() ? rest : IntImm::Make(DataType::Index(), 0);
    region.push_back(RegionDim{Simplify(min + IntImm::Make(DataType::Index(), min_offset)), extent});
  }
  return region;
}

Result<Region> UnionRegion(const Region& a, const Region& b) {
  if (a.size() != b.size()) return Status::Internal("regions of different rank");
  Region out;
  for (size_t d = 0; d < a.size(); ++d) {
    Expr diff = Simplify(b[d].min - a[d].min);
    const int64_t* c = AsConstInt(diff);
    if (!c) {
      return Status::InvalidArgument("accesses in dimension " + std::to_string(d) +
                                     " start at offsets that differ by a non-constant amount");
    }
    // b starts *c after a: the union of [0, a's extent) and [*c, *c + b's extent).
    Interval u = Interval::Union(Interval{0, a[d].extent - 1}, Interval{*c, *c + b[d].extent - 1});
    out.push_back(RegionDim{*c < 0 ? b[d].min : a[d].min, u.extent()});
  }
  return out;
}

bool IsParam(const PrimFunc& f, const BufferNode* buffer) {
  for (const Buffer& p : f.params) {
    if (p.get() == buffer) return true;
  }
  return false;
}

const Allocate* FindAllocate(const Stmt& root, const BufferNode* buffer) {
  StmtFinder finder([buffer](const StmtNode* n) {
    return n->kind == IRNodeKind::kAllocate && static_cast<const Allocate*>(n)->buffer.get() == buffer;
  });
  finder.Visit(root);
  return finder.found_.as<Allocate>();
}

bool UsesBuffer(const Stmt& s, const BufferNode* buffer) {
  bool used = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kLoad) used |= static_cast<const Load*>(n)->buffer.get() == buffer;
    if (n->kind == IRNodeKind::kStore) used |= static_cast<const Store*>(n)->buffer.get() == buffer;
  });
  return used;
}

namespace {
class BufferReplacer : public IRMutator {
 public:
  BufferReplacer(const BufferNode* from, Buffer to,
                 const std::function<std::vector<Expr>(const std::vector<Expr>&)>& remap)
      : from_(from), to_(std::move(to)), remap_(remap) {}
  using IRMutator::Mutate;

 protected:
  std::vector<Expr> Map(const std::vector<Expr>& idx) { return remap_ ? remap_(idx) : idx; }
  Expr MutateLoad(const Load* op, const Expr& self) override {
    Expr e = IRMutator::MutateLoad(op, self);
    const auto* l = e.as<Load>();
    if (l->buffer.get() != from_) return e;
    return Load::Make(to_, Map(l->indices));
  }
  Stmt MutateStore(const Store* op, const Stmt& self) override {
    Stmt s = IRMutator::MutateStore(op, self);
    const auto* st = s.as<Store>();
    if (st->buffer.get() != from_) return s;
    return Store::Make(to_, st->value, Map(st->indices));
  }
  Stmt MutateAllocate(const Allocate* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (op->buffer.get() == from_) return Allocate::Make(to_, body);
    return body.same_as(op->body) ? self : Allocate::Make(op->buffer, body);
  }

 private:
  const BufferNode* from_;
  Buffer to_;
  const std::function<std::vector<Expr>(const std::vector<Expr>&)>& remap_;
};
}  // namespace

Stmt ReplaceBuffer(const Stmt& s, const BufferNode* from, const Buffer& to,
                   const std::function<std::vector<Expr>(const std::vector<Expr>&)>& remap) {
  return BufferReplacer(from, to, remap).Mutate(s);
}

namespace {
class ScopeChecker : public IRVisitor {
 public:
  explicit ScopeChecker(const PrimFunc& f) {
    for (const Buffer& p : f.params) in_scope_.insert(p.get());
  }
  using IRVisitor::Visit;
  std::string problem;

 protected:
  void VisitAllocate(const Allocate* op) override {
    bool added = in_scope_.insert(op->buffer.get()).second;
    IRVisitor::VisitAllocate(op);
    if (added) in_scope_.erase(op->buffer.get());
  }
  void VisitBlock(const Block* op) override {
    const Block* outer = block_;
    block_ = op;
    IRVisitor::VisitBlock(op);
    block_ = outer;
  }
  void VisitLoad(const Load* op) override {
    Check(op->buffer.get());
    IRVisitor::VisitLoad(op);
  }
  void VisitStore(const Store* op) override {
    Check(op->buffer.get());
    IRVisitor::VisitStore(op);
  }

 private:
  void Check(const BufferNode* b) {
    if (!problem.empty() || in_scope_.count(b)) return;
    problem = "block " + (block_ ? block_->name : std::string("?")) + " would use " + b->name +
              " outside the scope where " + b->name + " is allocated";
  }
  std::set<const BufferNode*> in_scope_;
  const Block* block_ = nullptr;
};
}  // namespace

Status CheckAllocationScopes(const PrimFunc& f, const Stmt& body) {
  ScopeChecker checker(f);
  checker.Visit(body);
  if (!checker.problem.empty()) return Status::InvalidArgument(checker.problem);
  return Status::OK();
}

std::string UniqueName(const PrimFunc& f, const std::string& base) {
  std::set<std::string> used;
  for (const Buffer& b : f.params) used.insert(b->name);
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBlock) used.insert(static_cast<const Block*>(n)->name);
    if (n->kind == IRNodeKind::kFor) used.insert(static_cast<const For*>(n)->loop_var.name());
    if (n->kind == IRNodeKind::kAllocate) used.insert(static_cast<const Allocate*>(n)->buffer->name);
  });
  if (!used.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!used.count(candidate)) return candidate;
  }
}

}  // namespace tunefarm::sched
