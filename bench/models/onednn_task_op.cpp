// A convolution's residual is oneDNN's sum post-op (task_peer.cpp marks
// it), as oneDNN pipelines fuse a residual block: with the residual as a
// binary operand oneDNN 2.6 falls back to its GEMM convolution in plain
// layouts (measured on a 1x1 convolution: brgconv_1x1:avx512_core without
// the add, x64:gemm:jit with it, the operand given plain or in the nhwc
// layout oneDNN picks for the output). Other binary operands (a bias after
// a scale, a mask, a matmul's residual) are read in place, plain. A sum
// only on a primitive whose dst this file fills at setup (convolution).
#include "onednn_task_op.h"

#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tune/onednn_support.h"

namespace tunefarm::bench {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;
using Args = std::unordered_map<int, dnnl::memory>;
using onednn::Context;
using onednn::Into;
using onednn::Wrap;

dims PlainStrides(const dims& d) {
  dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

dnnl::memory::desc Plain(const dims& d) { return dnnl::memory::desc(d, dt::f32, PlainStrides(d)); }

// Logical dims {.., K, N} of a buffer stored as [.., N, K].
dnnl::memory::desc Transposed(const dims& d) {
  size_t n = d.size();
  dims stored = d;
  std::swap(stored[n - 2], stored[n - 1]);
  dims s = PlainStrides(stored);
  std::swap(s[n - 2], s[n - 1]);
  return dnnl::memory::desc(d, dt::f32, s);
}

Result<HostBuffer*> Get(std::map<std::string, HostBuffer*>& buffers, const std::string& name) {
  auto it = buffers.find(name);
  if (it == buffers.end()) return Status::InvalidArgument("workload has no input named " + name);
  return it->second;
}

dnnl::memory User(Context& c, const dnnl::memory::desc& md, HostBuffer* b) { return dnnl::memory(md, c.eng, b->data()); }

Result<dnnl::algorithm> EltwiseAlgorithm(const std::string& name) {
  static const std::map<std::string, dnnl::algorithm> kAlgorithms = {
      {"relu", dnnl::algorithm::eltwise_relu},         {"clip", dnnl::algorithm::eltwise_clip},
      {"linear", dnnl::algorithm::eltwise_linear},     {"gelu_erf", dnnl::algorithm::eltwise_gelu_erf},
      {"logistic", dnnl::algorithm::eltwise_logistic}, {"tanh", dnnl::algorithm::eltwise_tanh},
      {"exp", dnnl::algorithm::eltwise_exp},           {"log", dnnl::algorithm::eltwise_log},
      {"sqrt", dnnl::algorithm::eltwise_sqrt},         {"abs", dnnl::algorithm::eltwise_abs},
      {"square", dnnl::algorithm::eltwise_square},     {"pow", dnnl::algorithm::eltwise_pow},
      {"hardswish", dnnl::algorithm::eltwise_hardswish},
  };
  auto it = kAlgorithms.find(name);
  if (it == kAlgorithms.end()) return Status::Unimplemented("no oneDNN eltwise algorithm " + name);
  return it->second;
}

Result<dnnl::algorithm> BinaryAlgorithm(const std::string& name) {
  static const std::map<std::string, dnnl::algorithm> kAlgorithms = {
      {"add", dnnl::algorithm::binary_add}, {"sub", dnnl::algorithm::binary_sub}, {"mul", dnnl::algorithm::binary_mul},
      {"div", dnnl::algorithm::binary_div}, {"max", dnnl::algorithm::binary_max}, {"min", dnnl::algorithm::binary_min},
  };
  auto it = kAlgorithms.find(name);
  if (it == kAlgorithms.end()) return Status::Unimplemented("no oneDNN binary algorithm " + name);
  return it->second;
}

// The post-ops as attributes, with the memory descriptor of each binary operand.
struct PostOpPlan {
  dnnl::primitive_attr attr;
  std::vector<dnnl::memory::desc> operand;  // per post-op; unused for eltwise and the sum
  int sum = -1;                             // the index of the sum post-op, if any
};

// `sum_onto_dst`: the primitive's dst is filled with the sum's operand at setup.
Result<PostOpPlan> Plan(const std::vector<PostOp>& ops, bool sum_onto_dst) {
  PostOpPlan plan;
  dnnl::post_ops po;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PostOp& op = ops[i];
    plan.operand.emplace_back();
    switch (op.kind) {
      case PostOp::Kind::kSum:
        if (plan.sum >= 0 || !sum_onto_dst) return Status::Unimplemented("no sum post-op " + op.Describe() + " here");
        plan.sum = int(i);
        po.append_sum(1.0f);
        break;
      case PostOp::Kind::kEltwise: {
        TF_ASSIGN_OR_RETURN(dnnl::algorithm alg, EltwiseAlgorithm(op.algorithm));
        po.append_eltwise(1.0f, alg, op.alpha, op.beta);
        break;
      }
      case PostOp::Kind::kBinary: {
        TF_ASSIGN_OR_RETURN(dnnl::algorithm alg, BinaryAlgorithm(op.algorithm));
        plan.operand.back() = Plain(dims(op.dims.begin(), op.dims.end()));
        po.append_binary(alg, plan.operand.back());
        break;
      }
    }
  }
  plan.attr.set_post_ops(po);
  return plan;
}

// Each binary operand from the user's buffer, read in place.
Status BindPostOps(Context& c, const PostOpPlan& plan, const std::vector<PostOp>& ops,
                   std::map<std::string, HostBuffer*>& buffers, Args* args) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != PostOp::Kind::kBinary) continue;
    TF_ASSIGN_OR_RETURN(HostBuffer* b, Get(buffers, ops[i].input));
    (*args)[DNNL_ARG_ATTR_MULTIPLE_POST_OP(int(i)) | DNNL_ARG_SRC_1] = User(c, plan.operand[i], b);
  }
  return Status::OK();
}

dims Dims(const std::vector<int64_t>& v) { return dims(v.begin(), v.end()); }

Result<OneDnnOp> Convolution(const TaskPeer& p, std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, p.src));
  TF_ASSIGN_OR_RETURN(HostBuffer* w, Get(b, p.weights));
  const dims src = Dims(p.src_dims), dst = Dims(p.dst_dims);
  dims wei = Dims(p.weights_dims);
  tag wei_tag = tag::oihw;
  if (p.groups > 1) {
    // W[K, C / g, R, S] is goihw {g, K / g, C / g, R, S}.
    wei = {p.groups, wei[0] / p.groups, wei[1], wei[2], wei[3]};
    wei_tag = tag::goihw;
  }
  dnnl::memory::desc src_any(src, dt::f32, tag::any), wei_any(wei, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any);
  dnnl::memory::desc bias_md({dst[1]}, dt::f32, tag::a);
  const dims strides = {p.strides[0], p.strides[1]}, dilates = {p.dilations[0] - 1, p.dilations[1] - 1};
  const dims pad_l = {p.pad_begin[0], p.pad_begin[1]}, pad_r = {p.pad_end[0], p.pad_end[1]};
  TF_ASSIGN_OR_RETURN(PostOpPlan plan, Plan(p.post_ops, /*sum_onto_dst=*/true));
  const auto inference = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::convolution_direct;
  using PD = dnnl::convolution_forward::primitive_desc;
  PD pd = p.bias.empty() ? PD(dnnl::convolution_forward::desc(inference, direct, src_any, wei_any, dst_any, strides,
                                                              dilates, pad_l, pad_r),
                              plan.attr, c->eng)
                         : PD(dnnl::convolution_forward::desc(inference, direct, src_any, wei_any, bias_md, dst_any,
                                                              strides, dilates, pad_l, pad_r),
                              plan.attr, c->eng);
  dnnl::memory dst_mem(pd.dst_desc(), c->eng);
  if (plan.sum >= 0) {
    // The sum post-op adds what dst holds: the residual, copied in at setup.
    // A oneDNN pipeline writes the block's output onto its shortcut in
    // place; repeated (timed) runs keep adding to it, which costs the same.
    TF_ASSIGN_OR_RETURN(HostBuffer* residual, Get(b, p.post_ops[size_t(plan.sum)].input));
    dnnl::memory from = User(*c, Plain(dst), residual);
    dnnl::reorder(from, dst_mem).execute(c->strm, from, dst_mem);
    c->strm.wait();
  }
  Args args = {{DNNL_ARG_SRC, Into(*c, pd.src_desc(), User(*c, Plain(src), x))},
               {DNNL_ARG_WEIGHTS, Into(*c, pd.weights_desc(), dnnl::memory({wei, dt::f32, wei_tag}, c->eng, w->data()))},
               {DNNL_ARG_DST, dst_mem}};
  if (!p.bias.empty()) {
    TF_ASSIGN_OR_RETURN(HostBuffer* bias, Get(b, p.bias));
    args[DNNL_ARG_BIAS] = Into(*c, pd.bias_desc(), User(*c, bias_md, bias));
  }
  TF_RETURN_IF_ERROR(BindPostOps(*c, plan, p.post_ops, b, &args));
  return Wrap(c, p.What(), dnnl::convolution_forward(pd), std::move(args), User(*c, Plain(dst), out));
}

Result<OneDnnOp> Matmul(const TaskPeer& p, std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* a, Get(b, p.src));
  TF_ASSIGN_OR_RETURN(HostBuffer* w, Get(b, p.weights));
  const dims src = Dims(p.src_dims), wei = Dims(p.weights_dims), dst = Dims(p.dst_dims);
  dnnl::memory::desc src_md = p.src_transposed ? Transposed(src) : Plain(src);
  dnnl::memory::desc wei_user = p.weights_transposed ? Transposed(wei) : Plain(wei);
  // Constant weights are packed the way oneDNN likes, at setup; an activation is read where it is.
  dnnl::memory::desc wei_md = p.weights_constant ? dnnl::memory::desc(wei, dt::f32, tag::any) : wei_user;
  dims bias_dims(dst.size(), 1);
  bias_dims.back() = dst.back();
  dnnl::memory::desc bias_md = Plain(bias_dims), dst_md = Plain(dst);
  TF_ASSIGN_OR_RETURN(PostOpPlan plan, Plan(p.post_ops, /*sum_onto_dst=*/false));
  dnnl::matmul::primitive_desc pd =
      p.bias.empty() ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, wei_md, dst_md), plan.attr, c->eng)
                     : dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md), plan.attr, c->eng);
  Args args = {{DNNL_ARG_SRC, User(*c, src_md, a)},
               {DNNL_ARG_WEIGHTS, Into(*c, pd.weights_desc(), User(*c, wei_user, w))},
               {DNNL_ARG_DST, User(*c, dst_md, out)}};
  if (!p.bias.empty()) {
    TF_ASSIGN_OR_RETURN(HostBuffer* bias, Get(b, p.bias));
    args[DNNL_ARG_BIAS] = User(*c, bias_md, bias);
  }
  TF_RETURN_IF_ERROR(BindPostOps(*c, plan, p.post_ops, b, &args));
  return Wrap(c, p.What(), dnnl::matmul(pd), std::move(args), User(*c, dst_md, out));
}

Result<OneDnnOp> Pooling(const TaskPeer& p, std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, p.src));
  const dims src = Dims(p.src_dims), dst = Dims(p.dst_dims);
  tag blocked = src[1] % 16 == 0 ? tag::nChw16c : src[1] % 8 == 0 ? tag::nChw8c : tag::nchw;
  dnnl::memory::desc src_md(src, dt::f32, blocked), dst_any(dst, dt::f32, tag::any);
  dnnl::algorithm alg = p.algorithm == "max"                   ? dnnl::algorithm::pooling_max
                        : p.algorithm == "avg_include_padding" ? dnnl::algorithm::pooling_avg_include_padding
                                                               : dnnl::algorithm::pooling_avg_exclude_padding;
  TF_ASSIGN_OR_RETURN(PostOpPlan plan, Plan(p.post_ops, /*sum_onto_dst=*/false));
  dnnl::pooling_v2_forward::primitive_desc pd(
      dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_any, {p.strides[0], p.strides[1]},
                                     {p.kernel[0], p.kernel[1]}, {0, 0}, {p.pad_begin[0], p.pad_begin[1]},
                                     {p.pad_end[0], p.pad_end[1]}),
      plan.attr, c->eng);
  Args args = {{DNNL_ARG_SRC, Into(*c, src_md, User(*c, Plain(src), x))}, {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), c->eng)}};
  TF_RETURN_IF_ERROR(BindPostOps(*c, plan, p.post_ops, b, &args));
  return Wrap(c, p.What(), dnnl::pooling_v2_forward(pd), std::move(args), User(*c, Plain(dst), out));
}

// Softmax, layer norm, reduction, eltwise and binary: plain buffers in place.
Result<OneDnnOp> RowOrElementwise(const TaskPeer& p, std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, p.src));
  const dims src = Dims(p.src_dims), dst = Dims(p.dst_dims);
  TF_ASSIGN_OR_RETURN(PostOpPlan plan, Plan(p.post_ops, /*sum_onto_dst=*/false));
  const auto inference = dnnl::prop_kind::forward_inference;
  Args args = {{DNNL_ARG_SRC, User(*c, Plain(src), x)}, {DNNL_ARG_DST, User(*c, Plain(dst), out)}};
  dnnl::primitive prim;
  switch (p.kind) {
    case PeerKind::kSoftmax: {
      dnnl::softmax_v2_forward::primitive_desc pd(
          dnnl::softmax_v2_forward::desc(inference, dnnl::algorithm::softmax_accurate, Plain(src), Plain(dst),
                                         int(src.size()) - 1),
          plan.attr, c->eng);
      prim = dnnl::softmax_v2_forward(pd);
      break;
    }
    case PeerKind::kLayerNorm: {
      auto flags = dnnl::normalization_flags::use_scale;
      if (!p.shift.empty()) flags = flags | dnnl::normalization_flags::use_shift;
      dnnl::layer_normalization_forward::primitive_desc pd(
          dnnl::layer_normalization_forward::desc(inference, Plain(src), p.epsilon, flags), plan.attr, c->eng);
      const dims channels = {src.back()};
      TF_ASSIGN_OR_RETURN(HostBuffer* scale, Get(b, p.scale));
      args[DNNL_ARG_SCALE] = User(*c, Plain(channels), scale);
      if (!p.shift.empty()) {
        TF_ASSIGN_OR_RETURN(HostBuffer* shift, Get(b, p.shift));
        args[DNNL_ARG_SHIFT] = User(*c, Plain(channels), shift);
      }
      if (pd.mean_desc().get_size() > 0) {
        args[DNNL_ARG_MEAN] = dnnl::memory(pd.mean_desc(), c->eng);
        args[DNNL_ARG_VARIANCE] = dnnl::memory(pd.variance_desc(), c->eng);
      }
      prim = dnnl::layer_normalization_forward(pd);
      break;
    }
    case PeerKind::kReduction: {
      static const std::map<std::string, dnnl::algorithm> kAlgorithms = {
          {"sum", dnnl::algorithm::reduction_sum}, {"max", dnnl::algorithm::reduction_max},
          {"min", dnnl::algorithm::reduction_min}, {"mean", dnnl::algorithm::reduction_mean},
          {"mul", dnnl::algorithm::reduction_mul}};
      dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(kAlgorithms.at(p.algorithm), Plain(src), Plain(dst), 0, 0),
                                         plan.attr, c->eng);
      prim = dnnl::reduction(pd);
      break;
    }
    case PeerKind::kEltwise: {
      TF_ASSIGN_OR_RETURN(dnnl::algorithm alg, EltwiseAlgorithm(p.algorithm));
      dnnl::eltwise_forward::primitive_desc pd(dnnl::eltwise_forward::desc(inference, alg, Plain(src), p.alpha, p.beta),
                                               plan.attr, c->eng);
      prim = dnnl::eltwise_forward(pd);
      break;
    }
    case PeerKind::kBinary: {
      TF_ASSIGN_OR_RETURN(dnnl::algorithm alg, BinaryAlgorithm(p.algorithm));
      TF_ASSIGN_OR_RETURN(HostBuffer* y, Get(b, p.src1));
      dnnl::memory::desc src1 = Plain(Dims(p.src1_dims));
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, Plain(src), src1, Plain(dst)), plan.attr, c->eng);
      args.erase(DNNL_ARG_SRC);
      args[DNNL_ARG_SRC_0] = User(*c, Plain(src), x);
      args[DNNL_ARG_SRC_1] = User(*c, src1, y);
      prim = dnnl::binary(pd);
      break;
    }
    case PeerKind::kNone:
    case PeerKind::kConvolution:
    case PeerKind::kMatmul:
    case PeerKind::kPooling:
    case PeerKind::kReorder: return Status::Internal(std::string("not a row or element-wise peer: ") + PeerKindName(p.kind));
  }
  TF_RETURN_IF_ERROR(BindPostOps(*c, plan, p.post_ops, b, &args));
  return Wrap(c, p.What(), prim, std::move(args), User(*c, Plain(dst), out));
}

// A transpose: the input read through permuted strides, written plain.
Result<OneDnnOp> Reorder(const TaskPeer& p, std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, p.src));
  const dims dst = Dims(p.dst_dims), src_strides = PlainStrides(Dims(p.src_dims));
  dims strides(dst.size());
  for (size_t d = 0; d < dst.size(); ++d) strides[d] = src_strides[size_t(p.perm[d])];
  dnnl::memory from(dnnl::memory::desc(dst, dt::f32, strides), c->eng, x->data());
  dnnl::memory to = User(*c, Plain(dst), out);
  return Wrap(c, p.What(), dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, to);
}

}  // namespace

Result<OneDnnOp> MakeTaskOp(const TaskPeer& peer, std::map<std::string, HostBuffer*>& buffers, HostBuffer* output) {
  try {
    switch (peer.kind) {
      case PeerKind::kNone: return Status::Unimplemented(peer.no_peer);
      case PeerKind::kConvolution: return Convolution(peer, buffers, output);
      case PeerKind::kMatmul: return Matmul(peer, buffers, output);
      case PeerKind::kPooling: return Pooling(peer, buffers, output);
      case PeerKind::kReorder: return Reorder(peer, buffers, output);
      case PeerKind::kSoftmax:
      case PeerKind::kLayerNorm:
      case PeerKind::kReduction:
      case PeerKind::kEltwise:
      case PeerKind::kBinary: return RowOrElementwise(peer, buffers, output);
    }
  } catch (const dnnl::error& e) {
    return Status::Unimplemented(std::string("oneDNN refuses ") + peer.What() + ": " + e.what());
  }
  return Status::Internal("unknown peer kind");
}

}  // namespace tunefarm::bench
