// Softmax and layer norm (over the last axis, in the stages of
// frontend/anchor_row.cpp), transposes and element-wise chains. oneDNN's
// reorder takes no element-wise post-ops, so a transpose with a fused
// operator has no peer; an element-wise chain is oneDNN's primitive for its
// first operator with the rest as its post-ops.
#include "task_peer_internal.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::bench::peer_internal {

Result<TaskPeer> SoftmaxPeer(const Workload& w) {
  // mx = max(X), e = exp(X - mx), s = sum(e), out = e / s.
  if (w.stages.size() < 4 || w.stages[0].reduce != ReduceKind::kMax || !w.stages[3].body.as<ir::Div>()) {
    return Status::Unimplemented("not a softmax as the importer writes one");
  }
  std::vector<const ir::Load*> loads = InputLoads(w, w.stages[0].body);
  if (loads.size() != 1) return Status::Unimplemented("a softmax reads one input");
  TaskPeer p;
  p.kind = PeerKind::kSoftmax;
  p.src = loads[0]->buffer->name;
  p.src_dims = loads[0]->buffer->shape;
  p.dst_dims = w.stages[3].output->shape;
  if (p.src_dims != p.dst_dims) return Status::Unimplemented("a softmax's input and output differ in shape");
  TF_RETURN_IF_ERROR(ReadEpilogue(w, w.stages[3], &p));
  return p;
}

Result<TaskPeer> LayerNormPeer(const Workload& w) {
  // s, mean, d = X - mean, ss, rstd = rsqrt(ss / n + eps), out = d * rstd * gamma (+ beta).
  if (w.stages.size() < 6 || w.stages[0].reduce != ReduceKind::kSum) {
    return Status::Unimplemented("not a layer norm as the importer writes one");
  }
  std::vector<const ir::Load*> loads = InputLoads(w, w.stages[0].body);
  const auto* rsqrt = w.stages[4].body.as<ir::Call>();
  const auto* plus_eps = rsqrt && rsqrt->op == ir::CallOp::kRsqrt ? rsqrt->args[0].as<ir::Add>() : nullptr;
  const auto* eps = plus_eps ? plus_eps->b.as<ir::FloatImm>() : nullptr;
  if (loads.size() != 1 || eps == nullptr) return Status::Unimplemented("no rsqrt(variance + epsilon) stage");
  const ComputeStage& norm = w.stages[5];
  TaskPeer p;
  p.kind = PeerKind::kLayerNorm;
  p.src = loads[0]->buffer->name;
  p.src_dims = loads[0]->buffer->shape;
  p.dst_dims = norm.output->shape;
  p.epsilon = float(eps->value);
  if (p.src_dims != p.dst_dims) return Status::Unimplemented("a layer norm's input and output differ in shape");
  // gamma and beta: vectors along the last axis.
  std::vector<int64_t> along_last(p.dst_dims.size(), 1);
  along_last.back() = p.dst_dims.back();
  auto vector_of = [&](const ir::Expr& e) -> Result<std::string> {
    const auto* l = e.as<ir::Load>();
    bool input = l != nullptr && !InputLoads(w, e).empty();
    if (!input) return Status::Unimplemented("layer norm's scale or shift '" + ir::ToString(e) + "' is not a tensor");
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(*l, norm));
    if (dims != along_last) return Status::Unimplemented("layer norm's scale or shift is not one vector along the row");
    return l->buffer->name;
  };
  ir::Expr scaled = norm.body;
  if (const auto* add = norm.body.as<ir::Add>()) {
    TF_ASSIGN_OR_RETURN(p.shift, vector_of(add->b));
    scaled = add->a;
  }
  const auto* mul = scaled.as<ir::Mul>();
  if (mul == nullptr || !mul->a.as<ir::Mul>()) return Status::Unimplemented("no d * rstd * gamma in the layer norm");
  TF_ASSIGN_OR_RETURN(p.scale, vector_of(mul->b));
  TF_RETURN_IF_ERROR(ReadEpilogue(w, norm, &p));
  return p;
}

Result<TaskPeer> TransposePeer(const Workload& w) {
  const ComputeStage& out = w.stages.back();
  const ir::Load* xl = nullptr;
  for (const ir::Load* l : InputLoads(w, out.body)) xl = l == out.body.get() ? l : xl;
  if (w.stages.size() != 1 || xl == nullptr) {
    return Status::Unimplemented(w.stages.size() == 1 ? "oneDNN's reorder takes no element-wise post-ops"
                                                      : "not a transpose as the importer writes one");
  }
  TaskPeer p;
  p.kind = PeerKind::kReorder;
  p.src = xl->buffer->name;
  p.src_dims = xl->buffer->shape;
  p.dst_dims = out.output->shape;
  p.perm.assign(p.dst_dims.size(), -1);
  for (size_t s = 0; s < xl->indices.size(); ++s) {
    const auto* v = xl->indices[s].as<ir::Variable>();
    for (size_t d = 0; v != nullptr && d < out.axes.size(); ++d) {
      if (out.axes[d].get() == v) p.perm[d] = int64_t(s);
    }
  }
  for (size_t d = 0; d < p.perm.size(); ++d) {
    if (xl->indices.size() != p.perm.size() || p.perm[d] < 0 || p.src_dims[size_t(p.perm[d])] != p.dst_dims[d]) {
      return Status::Unimplemented("'" + ir::ToString(out.body) + "' is not a permutation of its input");
    }
  }
  return p;
}

Result<TaskPeer> ElementwisePeer(const Workload& w) {
  if (w.stages.size() != 1) return Status::Unimplemented("an element-wise task of more than one stage");
  const ComputeStage& out = w.stages[0];
  Status why = Status::Unimplemented("no input is read at the output's own index");
  // The chain starts at an input read at the output's index; try each.
  for (const ir::Load* first : InputLoads(w, out.body)) {
    if (!IsIdentityIndex(first->indices, out)) continue;
    const ir::BufferNode* buffer = first->buffer.get();
    CoreMatcher is_core = [&](const ir::Expr& e) {
      const auto* l = e.as<ir::Load>();
      return l != nullptr && l->buffer.get() == buffer && IsIdentityIndex(l->indices, out);
    };
    Result<std::vector<PostOp>> ops = ReadPostOps(w, out, is_core);
    if (!ops.ok()) {
      why = ops.status();
      continue;
    }
    TaskPeer p;
    p.src = first->buffer->name;
    p.src_dims = out.output->shape;
    p.dst_dims = out.output->shape;
    p.post_ops = std::move(ops).value();
    if (p.post_ops.empty()) {
      p.kind = PeerKind::kReorder;  // a copy
      for (size_t d = 0; d < p.dst_dims.size(); ++d) p.perm.push_back(int64_t(d));
      return p;
    }
    PostOp lead = p.post_ops.front();
    p.post_ops.erase(p.post_ops.begin());
    p.algorithm = lead.algorithm;
    if (lead.kind == PostOp::Kind::kBinary) {
      p.kind = PeerKind::kBinary;
      p.src1 = lead.input;
      p.src1_dims = lead.dims;
    } else {
      p.kind = PeerKind::kEltwise;
      p.alpha = lead.alpha;
      p.beta = lead.beta;
    }
    return p;
  }
  return why;
}

}  // namespace tunefarm::bench::peer_internal
