// SplitPrepack: the root statements that only re-lay out constant inputs move
// into their own entry point (split_prepack.h).
#include "tunefarm/compiler/lower/split_prepack.h"

#include <set>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/lower.h"

namespace tunefarm {

using namespace ir;

namespace {

// What one root statement reads and writes, not counting buffers it
// allocates itself (a per-task scratch tile lives and dies inside it).
struct Access {
  std::set<const BufferNode*> reads;
  std::set<const BufferNode*> writes;
};

Access AccessOf(const Stmt& s) {
  Access a;
  std::set<const BufferNode*> internal;
  PostOrderVisit(s, [&](const IRNode* node) {
    if (node->kind == IRNodeKind::kLoad) a.reads.insert(static_cast<const Load*>(node)->buffer.get());
    if (node->kind == IRNodeKind::kStore) a.writes.insert(static_cast<const Store*>(node)->buffer.get());
    if (node->kind == IRNodeKind::kAllocate) internal.insert(static_cast<const Allocate*>(node)->buffer.get());
  });
  for (const BufferNode* b : internal) {
    a.reads.erase(b);
    a.writes.erase(b);
  }
  return a;
}

// The root of a scheduled function is Allocates and SeqStmts around loop
// nests, nested as the schedule left them (a cache's Allocate wraps the
// statements from its writer on). Flattens it: the buffers allocated at the
// root, in order, and the root statements, in order.
void FlattenRoot(const Stmt& s, std::vector<Buffer>* allocs, std::vector<Stmt>* stmts) {
  if (!s.defined()) return;
  if (const Allocate* a = s.as<Allocate>()) {
    allocs->push_back(a->buffer);
    FlattenRoot(a->body, allocs, stmts);
  } else if (const SeqStmt* seq = s.as<SeqStmt>()) {
    for (const Stmt& one : seq->seq) FlattenRoot(one, allocs, stmts);
  } else {
    stmts->push_back(s);
  }
}

}  // namespace

std::optional<PrepackSplit> SplitPrepack(const PrimFunc& f) {
  std::set<const BufferNode*> constant;
  for (size_t i = 0; i < f.num_inputs && i < f.params.size(); ++i) {
    if (f.params[i]->constant) constant.insert(f.params[i].get());
  }
  if (constant.empty() || !f.body.defined()) return std::nullopt;

  std::vector<Buffer> root_allocs;
  std::vector<Stmt> stmts;
  FlattenRoot(f.body, &root_allocs, &stmts);
  std::set<const BufferNode*> root_global;
  for (const Buffer& b : root_allocs) {
    if (b->scope == MemoryScope::kGlobal) root_global.insert(b.get());
  }

  std::vector<Access> access;
  for (const Stmt& s : stmts) access.push_back(AccessOf(s));
  std::vector<bool> moved(stmts.size(), false);
  std::set<const BufferNode*> packed_set;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const Access& a = access[i];
    if (a.writes.empty()) continue;
    bool ok = true;
    for (const BufferNode* r : a.reads) ok = ok && (constant.count(r) || a.writes.count(r));
    for (const BufferNode* w : a.writes) {
      ok = ok && root_global.count(w);
      // No other statement writes it, and none before this one reads it.
      for (size_t j = 0; ok && j < stmts.size(); ++j) {
        if (j == i) continue;
        if (access[j].writes.count(w) || (j < i && access[j].reads.count(w))) ok = false;
      }
    }
    if (!ok) continue;
    moved[i] = true;
    packed_set.insert(a.writes.begin(), a.writes.end());
  }
  if (packed_set.empty()) return std::nullopt;

  PrepackSplit split;
  // Packed buffers in root-allocation order: deterministic, and the order the
  // kernel declared them in.
  for (const Buffer& b : root_allocs) {
    if (packed_set.count(b.get())) split.packed.push_back(b);
  }
  std::set<const BufferNode*> constant_read;
  std::vector<Stmt> prepack_stmts, rest;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (moved[i]) {
      prepack_stmts.push_back(stmts[i]);
      for (const BufferNode* r : access[i].reads) {
        if (constant.count(r)) constant_read.insert(r);
      }
    } else {
      rest.push_back(stmts[i]);
    }
  }

  split.prepack.name = f.name + kPrepackSuffix;
  for (size_t i = 0; i < f.num_inputs; ++i) {
    if (constant_read.count(f.params[i].get())) {
      split.prepack.params.push_back(f.params[i]);
      split.constant_params.push_back(i);
    }
  }
  split.prepack.num_inputs = split.prepack.params.size();
  for (const Buffer& b : split.packed) split.prepack.params.push_back(b);
  split.prepack.body = SeqStmt::Make(std::move(prepack_stmts));

  split.prepacked.name = f.name + kPrepackedSuffix;
  split.prepacked.params = f.params;
  split.prepacked.num_inputs = f.num_inputs;
  for (const Buffer& b : split.packed) split.prepacked.params.push_back(b);
  // The other root buffers are allocated around the whole body (they may
  // have been scoped to a tail of it; living longer changes no result).
  Stmt body = SeqStmt::Make(std::move(rest));
  for (auto it = root_allocs.rbegin(); it != root_allocs.rend(); ++it) {
    if (!packed_set.count(it->get())) body = Allocate::Make(*it, body);
  }
  split.prepacked.body = body;
  return split;
}

Result<PrimFunc> LowerMeasuredCall(const PrimFunc& f) {
  std::optional<PrepackSplit> split = SplitPrepack(f);
  return LowerForCodegen(split ? split->prepacked : f);
}

}  // namespace tunefarm
