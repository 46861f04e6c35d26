// Reading a peer follows the stages the importer writes (frontend/anchor_*.cpp):
// a reduction stage for convolutions, matmuls, pooling and reductions, with
// the epilogue (if any) in one final stage over it; softmax and layer norm as
// their four and six stages; a transpose and an element-wise chain as one
// stage over the inputs. Anything else is no peer, with the reason, rather
// than a guess: the tests hold every peer to the task's own default program.
#include "task_peer.h"

#include <algorithm>

#include "task_peer_internal.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::bench {
namespace peer_internal {

std::vector<const ir::Load*> InputLoads(const Workload& w, const ir::Expr& e) {
  std::vector<const ir::Load*> loads;
  class Finder : public ir::IRVisitor {
   public:
    Finder(const Workload& w, std::vector<const ir::Load*>* out) : w_(w), out_(out) {}
    void VisitLoad(const ir::Load* op) override {
      for (const ir::Buffer& in : w_.inputs) {
        if (in.get() == op->buffer.get()) out_->push_back(op);
      }
      ir::IRVisitor::VisitLoad(op);
    }

   private:
    const Workload& w_;
    std::vector<const ir::Load*>* out_;
  } finder(w, &loads);
  finder.Visit(e);
  return loads;
}

const ComputeStage* FirstReduction(const Workload& w) {
  for (const ComputeStage& s : w.stages) {
    if (s.reduce != ReduceKind::kNone) return &s;
  }
  return nullptr;
}

CoreMatcher LoadOfStage(const ComputeStage& anchor, const ComputeStage& last) {
  const ir::BufferNode* buffer = anchor.output.get();
  return [buffer, &last](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    return load != nullptr && load->buffer.get() == buffer && IsIdentityIndex(load->indices, last);
  };
}

Result<WindowIndex> ReadWindowIndex(const ir::Expr& index, const ir::Variable* out_axis, const ir::Variable* tap) {
  WindowIndex wi;
  wi.stride = 0;
  wi.dilation = 0;
  bool ok = ir::Linearize(index, 1, [&](const ir::Expr& term, int64_t scale) {
    if (const auto* v = term.as<ir::Variable>()) {
      if (v == out_axis) wi.stride += scale;
      else if (v == tap) wi.dilation += scale;
      else return false;
      return true;
    }
    if (const int64_t* c = ir::AsConstInt(term)) {
      wi.pad -= scale * *c;
      return true;
    }
    return false;
  });
  if (!ok || wi.stride < 0 || wi.dilation < 1 || wi.pad < 0) {
    return Status::Unimplemented("window index '" + ir::ToString(index) + "' is not oh * stride + r * dilation - pad");
  }
  if (wi.stride == 0) wi.stride = 1;  // a global window: one output, any stride
  return wi;
}

int64_t PadEnd(int64_t in, int64_t out, int64_t kernel, const WindowIndex& wi) {
  return std::max<int64_t>(0, (out - 1) * wi.stride + wi.dilation * (kernel - 1) + 1 - in - wi.pad);
}

}  // namespace peer_internal

using namespace peer_internal;

const char* PeerKindName(PeerKind kind) {
  switch (kind) {
    case PeerKind::kNone: return "none";
    case PeerKind::kConvolution: return "convolution";
    case PeerKind::kMatmul: return "matmul";
    case PeerKind::kPooling: return "pooling";
    case PeerKind::kSoftmax: return "softmax";
    case PeerKind::kLayerNorm: return "layer normalization";
    case PeerKind::kReduction: return "reduction";
    case PeerKind::kReorder: return "reorder";
    case PeerKind::kEltwise: return "eltwise";
    case PeerKind::kBinary: return "binary";
  }
  return "?";
}

std::string TaskPeer::What() const {
  if (kind == PeerKind::kNone) return "none: " + no_peer;
  std::string s = PeerKindName(kind);
  auto window = [&] {
    std::string t = " " + std::to_string(kernel[0]) + "x" + std::to_string(kernel[1]) + " s" + std::to_string(strides[0]);
    if (strides[1] != strides[0]) t += "x" + std::to_string(strides[1]);
    if (dilations[0] != 1 || dilations[1] != 1) t += " d" + std::to_string(dilations[0]);
    if (pad_begin[0] || pad_begin[1] || pad_end[0] || pad_end[1]) t += " p" + std::to_string(pad_begin[0]);
    return t;
  };
  switch (kind) {
    case PeerKind::kConvolution:
      s += window();
      if (groups > 1) s += " groups " + std::to_string(groups);
      break;
    case PeerKind::kMatmul:
      if (weights_constant) s += " (weights packed)";
      if (src_transposed) s += " (A read as [K, M])";
      if (weights_transposed) s += " (B read as [N, K])";
      break;
    case PeerKind::kPooling: s += " " + algorithm + window(); break;
    case PeerKind::kReduction:
    case PeerKind::kEltwise:
    case PeerKind::kBinary: s += " " + algorithm; break;
    case PeerKind::kNone:
    case PeerKind::kSoftmax:
    case PeerKind::kLayerNorm:
    case PeerKind::kReorder: break;
  }
  if (!bias.empty()) s += " + bias";
  for (size_t i = 0; i < post_ops.size(); ++i) s += (i == 0 ? ", " : " + ") + post_ops[i].Describe();
  return s;
}

TaskPeer PeerOf(const frontend::Model& model, const frontend::ModelTask& task) {
  const std::vector<std::string>& bound = task.calls.empty() ? std::vector<std::string>{} : task.calls[0].inputs;
  IsWeight is_weight = [&](const std::string& input) {
    for (size_t i = 0; i < task.workload.inputs.size() && i < bound.size(); ++i) {
      if (task.workload.inputs[i]->name != input) continue;
      const frontend::ModelTensor* t = model.Tensor(bound[i]);
      return t != nullptr && t->kind == frontend::ModelTensor::Kind::kWeight;
    }
    return false;
  };
  return ReadPeer(task.workload, task.op_class, is_weight);
}

TaskPeer PeerOf(const Workload& w, const std::string& op_class) {
  IsWeight is_weight = [&](const std::string& input) {
    for (const ir::Buffer& in : w.inputs) {
      if (in->name == input) return in->constant;
    }
    return false;
  };
  return ReadPeer(w, op_class, is_weight);
}

namespace peer_internal {

TaskPeer ReadPeer(const Workload& w, const std::string& op_class, const IsWeight& is_weight) {
  Result<TaskPeer> peer = Status::Unimplemented("oneDNN has no primitive for a task of op class " + op_class);
  if (w.outputs.size() != 1 || w.stages.empty() || w.stages.back().output.get() != w.outputs[0].get()) {
    peer = Status::Unimplemented("the task has not exactly one output, its last stage");
  } else if (op_class == "conv2d" || op_class == "depthwise_conv2d" || op_class == "grouped_conv2d") {
    peer = ConvPeer(w, is_weight);
  } else if (op_class == "dense" || op_class == "matmul" || op_class == "batch_matmul") {
    peer = MatmulPeer(w, op_class == "dense", is_weight);
  } else if (op_class == "pool") {
    peer = PoolPeer(w);
  } else if (op_class == "reduce") {
    peer = ReducePeer(w);
  } else if (op_class == "softmax") {
    peer = SoftmaxPeer(w);
  } else if (op_class == "layer_norm") {
    peer = LayerNormPeer(w);
  } else if (op_class == "transpose") {
    peer = TransposePeer(w);
  } else if (op_class == "elementwise") {
    peer = ElementwisePeer(w);
  }
  if (peer.ok()) return std::move(peer).value();
  TaskPeer none;
  none.no_peer = peer.status().message();
  return none;
}

Result<TaskPeer> ConvPeer(const Workload& w, const IsWeight& is_weight) {
  const ComputeStage* acc = FirstReduction(w);
  if (acc == nullptr || acc->reduce != ReduceKind::kSum || acc->output->shape.size() != 4) {
    return Status::Unimplemented("no 4-D sum stage: not a convolution as the importer writes one");
  }
  std::vector<const ir::Load*> loads = InputLoads(w, acc->body);
  if (loads.size() != 2) return Status::Unimplemented("a convolution reads two inputs");
  // The weights are indexed [k, c or 0, r, s] by the output channel.
  const ir::Load* wl = loads[1]->indices[0].as<ir::Variable>() == acc->axes[1].get() ? loads[1] : loads[0];
  const ir::Load* xl = wl == loads[1] ? loads[0] : loads[1];
  if (wl->indices.size() != 4 || xl->indices.size() != 4 || wl->indices[0].as<ir::Variable>() != acc->axes[1].get()) {
    return Status::Unimplemented("weights not read as W[k, c, r, s]");
  }
  const auto* r = wl->indices[2].as<ir::Variable>();
  const auto* s = wl->indices[3].as<ir::Variable>();
  if (r == nullptr || s == nullptr) return Status::Unimplemented("weights' taps are not reduction axes");
  TF_ASSIGN_OR_RETURN(WindowIndex h, ReadWindowIndex(xl->indices[2], acc->axes[2].get(), r));
  TF_ASSIGN_OR_RETURN(WindowIndex wd, ReadWindowIndex(xl->indices[3], acc->axes[3].get(), s));
  const std::vector<int64_t>& xs = xl->buffer->shape;
  const std::vector<int64_t>& ws = wl->buffer->shape;
  const std::vector<int64_t>& os = acc->output->shape;
  TaskPeer p;
  p.kind = PeerKind::kConvolution;
  p.src = xl->buffer->name;
  p.weights = wl->buffer->name;
  p.src_dims = xs;
  p.weights_dims = ws;
  p.dst_dims = os;
  p.groups = xs[1] / ws[1];
  if (p.groups * ws[1] != xs[1] || os[1] % p.groups) return Status::Unimplemented("channels do not split into groups");
  p.kernel = {ws[2], ws[3]};
  p.strides = {h.stride, wd.stride};
  p.dilations = {h.dilation, wd.dilation};
  p.pad_begin = {h.pad, wd.pad};
  p.pad_end = {PadEnd(xs[2], os[2], ws[2], h), PadEnd(xs[3], os[3], ws[3], wd)};
  TF_RETURN_IF_ERROR(ReadEpilogue(w, *acc, &p));
  FoldBias(is_weight, {1, os[1], 1, 1}, &p);
  // The residual: oneDNN's sum onto the output, as oneDNN fuses a residual
  // block (onednn_task_op.cpp says why not a binary add).
  for (PostOp& op : p.post_ops) {
    if (op.kind == PostOp::Kind::kBinary && op.algorithm == "add" && op.dims == p.dst_dims) {
      op.kind = PostOp::Kind::kSum;
      break;
    }
  }
  return p;
}

Status ReadEpilogue(const Workload& w, const ComputeStage& anchor, TaskPeer* p) {
  const ComputeStage& last = w.stages.back();
  if (&last == &anchor) return Status::OK();
  TF_ASSIGN_OR_RETURN(p->post_ops, ReadPostOps(w, last, LoadOfStage(anchor, last)));
  return Status::OK();
}

void FoldBias(const IsWeight& is_weight, const std::vector<int64_t>& bias_dims, TaskPeer* p) {
  if (p->post_ops.empty()) return;
  const PostOp& first = p->post_ops.front();
  if (first.kind == PostOp::Kind::kBinary && first.algorithm == "add" && first.dims == bias_dims && is_weight(first.input)) {
    p->bias = first.input;
    p->post_ops.erase(p->post_ops.begin());
  }
}

}  // namespace peer_internal
}  // namespace tunefarm::bench
