// Reads at a block's own iteration variables (iter_var_reads.h), and the
// rewrite that lets the fusion primitives treat a unit zero index exactly as
// the variable it stands for (schedule_compute_common.h).
#include "tunefarm/compiler/schedule/iter_var_reads.h"

#include "schedule_compute_common.h"
#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::sched {

using namespace ir;

bool IsUnitZeroIndex(const Block* block, const Load* load, size_t d) {
  if (d >= load->indices.size() || d >= load->buffer->shape.size() || d >= block->iter_vars.size()) return false;
  const auto* zero = load->indices[d].as<IntImm>();
  if (!zero || zero->value != 0 || load->buffer->shape[d] != 1) return false;
  const IterVar& iv = block->iter_vars[d];
  if (iv.kind != IterKind::kSpatial || iv.extent != 1) return false;
  // acc[0, n] with n of extent 1 is no read at (n, m): the zero stands for
  // a variable only where that variable is not already an index.
  for (const Expr& index : load->indices) {
    if (UsesVar(index, iv.var.get())) return false;
  }
  return true;
}

bool ReadsAtIterVars(const Block* block, const BufferNode* buffer) {
  bool ok = true;
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const auto* l = static_cast<const Load*>(n);
    if (l->buffer.get() != buffer) return;
    if (l->indices.size() != block->iter_vars.size()) {
      ok = false;
      return;
    }
    for (size_t d = 0; d < l->indices.size(); ++d) {
      ok = ok && (l->indices[d].as<Variable>() == block->iter_vars[d].var.get() || IsUnitZeroIndex(block, l, d));
    }
  });
  return ok;
}

Stmt ReadUnitZerosAtIterVars(const Stmt& root, const Block* block, const BufferNode* buffer) {
  class Rewriter : public IRMutator {
   public:
    Rewriter(const Block* b, const BufferNode* buf) : block_(b), buffer_(buf) {}
    using IRMutator::Mutate;
    bool changed = false;

   protected:
    Expr MutateLoad(const Load* op, const Expr& self) override {
      Expr e = IRMutator::MutateLoad(op, self);
      const Load* l = e.as<Load>();
      if (!l || l->buffer.get() != buffer_) return e;
      std::vector<Expr> indices = l->indices;
      bool any = false;
      for (size_t d = 0; d < indices.size(); ++d) {
        if (!IsUnitZeroIndex(block_, l, d)) continue;
        indices[d] = block_->iter_vars[d].var;
        any = true;
      }
      if (!any) return e;
      changed = true;
      return Load::Make(l->buffer, std::move(indices));
    }

   private:
    const Block* block_;
    const BufferNode* buffer_;
  } rewriter(block, buffer);
  Stmt body = rewriter.Mutate(block->body);
  if (!rewriter.changed) return root;
  return ReplaceNode(root, block, Block::Make(block->name, block->iter_vars, block->init, body, block->predicate));
}

}  // namespace tunefarm::sched
