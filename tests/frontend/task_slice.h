// A shrunk copy of an imported task for the reference interpreter: the same
// inputs, stages and bodies, computing only a corner of the output.
//
// A dimension of the task's stages is sliced when every stage reads every
// stage buffer along it at the reading stage's own axis (so a sliced buffer
// holds all that is read of it): the spatial and channel dimensions of a
// convolution, the rows of a softmax, not the row a softmax sums over. The
// corner is at the start (offsets 0) or at the end of each sliced dimension,
// where padding guards and clipped windows are.
#pragma once

#include <algorithm>
#include <map>
#include <set>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::frontend::testing {

// Rewrites a stage body: stage-buffer loads go to the sliced buffers with
// their indices as written; every other use of a sliced axis moves by its offset.
class SliceBody : public ir::IRMutator {
 public:
  SliceBody(const std::map<const ir::BufferNode*, ir::Buffer>& buffers, const std::map<const ir::Variable*, ir::Expr>& shift)
      : buffers_(buffers), shift_(shift) {}

 protected:
  ir::Expr MutateLoad(const ir::Load* op, const ir::Expr& self) override {
    auto it = buffers_.find(op->buffer.get());
    if (it == buffers_.end()) return ir::IRMutator::MutateLoad(op, self);
    return ir::Load::Make(it->second, op->indices);
  }
  ir::Expr MutateVariable(const ir::Variable* op, const ir::Expr& self) override {
    auto it = shift_.find(op);
    return it == shift_.end() ? self : it->second;
  }

 private:
  const std::map<const ir::BufferNode*, ir::Buffer>& buffers_;
  const std::map<const ir::Variable*, ir::Expr>& shift_;
};

// Dimension positions at which every stage-buffer load is indexed by the reader's own axis.
inline std::set<size_t> SliceableDims(const Workload& w) {
  std::set<const ir::BufferNode*> stage_buffers;
  size_t rank = w.outputs[0]->shape.size();
  for (const ComputeStage& s : w.stages) stage_buffers.insert(s.output.get());
  std::set<size_t> dims;
  for (size_t d = 0; d < rank; ++d) dims.insert(d);
  for (const ComputeStage& s : w.stages) {
    for (size_t d = 0; d < s.axes.size(); ++d) {
      if (d >= rank || s.output->shape[d] != w.outputs[0]->shape[d]) dims.erase(d);
    }
    ir::PostOrderVisit(ir::Evaluate::Make(s.body), [&](const ir::IRNode* n) {
      if (n->kind != ir::IRNodeKind::kLoad) return;
      const auto* load = static_cast<const ir::Load*>(n);
      if (!stage_buffers.count(load->buffer.get())) return;
      for (size_t d = 0; d < load->indices.size(); ++d) {
        const ir::Variable* v = load->indices[d].as<ir::Variable>();
        if (!v || d >= s.axes.size() || v != s.axes[d].get()) dims.erase(d);
      }
    });
  }
  return dims;
}

// The task computing out[corner ...] only: each sliceable dimension cut to at
// most `cap` (the last one to `last_cap`), at its start or its end.
inline Result<Workload> SliceTask(const Workload& w, int64_t cap, int64_t last_cap, bool at_end) {
  std::set<size_t> dims = SliceableDims(w);
  const std::vector<int64_t>& full = w.outputs[0]->shape;
  size_t last = dims.empty() ? 0 : *dims.rbegin();
  std::vector<int64_t> sliced = full, offset(full.size(), 0);
  for (size_t d : dims) {
    sliced[d] = std::min(full[d], d == last ? last_cap : cap);
    if (at_end) offset[d] = full[d] - sliced[d];
  }
  Workload out = w;
  std::map<const ir::BufferNode*, ir::Buffer> buffers;
  for (ComputeStage& s : out.stages) {
    std::vector<int64_t> shape = s.output->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (dims.count(d)) shape[d] = sliced[d];
    }
    buffers[s.output.get()] = ir::MakeBuffer(s.output->name, s.output->dtype, shape);
  }
  for (ComputeStage& s : out.stages) {
    std::map<const ir::Variable*, ir::Expr> shift;
    for (size_t d = 0; d < s.axes.size(); ++d) {
      if (dims.count(d) && offset[d]) shift[s.axes[d].get()] = s.axes[d] + ir::Expr(offset[d]);
    }
    SliceBody mutator(buffers, shift);
    s.body = mutator.Mutate(s.body);
    s.output = buffers.at(s.output.get());
  }
  for (ir::Buffer& o : out.outputs) o = buffers.at(o.get());
  out.name = w.name + (at_end ? "_end" : "_start");
  TF_RETURN_IF_ERROR(out.Validate());
  return out;
}

}  // namespace tunefarm::frontend::testing
