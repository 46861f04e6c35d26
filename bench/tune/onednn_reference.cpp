#include "onednn_reference.h"

#include <memory>
#include <unordered_map>

#include "onednn_support.h"

namespace tunefarm::bench {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

using onednn::Context;
using onednn::Into;
using onednn::Wrap;

Result<HostBuffer*> Get(std::map<std::string, HostBuffer*>& buffers, const std::string& name) {
  auto it = buffers.find(name);
  if (it == buffers.end()) return Status::InvalidArgument("workload has no parameter named " + name);
  return it->second;
}

// C[M,N] = A[M,K] x B[K,N]; A and C keep the user's row-major layout (as
// callers of a GEMM would), B is packed the way oneDNN likes.
Result<OneDnnOp> Matmul(std::map<std::string, HostBuffer*>& b, HostBuffer* out) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* a, Get(b, "A"));
  TF_ASSIGN_OR_RETURN(HostBuffer* bb, Get(b, "B"));
  int64_t m = a->shape()[0], k = a->shape()[1], n = bb->shape()[1];
  dnnl::memory::desc a_md({m, k}, dt::f32, tag::ab), b_any({k, n}, dt::f32, tag::any), c_md({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), c->eng);
  dnnl::memory b_mem = Into(*c, pd.weights_desc(), dnnl::memory({{k, n}, dt::f32, tag::ab}, c->eng, bb->data()));
  dnnl::memory a_mem(a_md, c->eng, a->data()), c_mem(c_md, c->eng, out->data());
  return Wrap(c, "matmul", dnnl::matmul(pd), {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}}, c_mem);
}

// out[M,N] = act(A[M,K] x W[N,K]^T + bias): matmul with a bias and the
// activation as an eltwise post-op, so oneDNN fuses it the way the workload does.
Result<OneDnnOp> Dense(std::map<std::string, HostBuffer*>& b, HostBuffer* out, OneDnnActivation activation) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* a, Get(b, "A"));
  TF_ASSIGN_OR_RETURN(HostBuffer* w, Get(b, "W"));
  TF_ASSIGN_OR_RETURN(HostBuffer* bias, Get(b, "bias"));
  int64_t m = a->shape()[0], k = a->shape()[1], n = w->shape()[0];
  dnnl::memory::desc a_md({m, k}, dt::f32, tag::ab), w_any({k, n}, dt::f32, tag::any), bias_md({1, n}, dt::f32, tag::ab),
      c_md({m, n}, dt::f32, tag::ab);
  dnnl::post_ops po;
  std::string what = "matmul+bias";
  switch (activation) {
    case OneDnnActivation::kNone: break;
    case OneDnnActivation::kRelu:
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      what += "+relu post-op";
      break;
    case OneDnnActivation::kGeluErf:
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      what += "+gelu_erf post-op";
      break;
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_any, bias_md, c_md), attr, c->eng);
  // W is [N, K] row-major: as a {K, N} matrix that is layout "ba".
  dnnl::memory w_mem = Into(*c, pd.weights_desc(), dnnl::memory({{k, n}, dt::f32, tag::ba}, c->eng, w->data()));
  dnnl::memory a_mem(a_md, c->eng, a->data()), bias_mem(bias_md, c->eng, bias->data()), c_mem(c_md, c->eng, out->data());
  return Wrap(c, what, dnnl::matmul(pd),
              {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_BIAS, bias_mem}, {DNNL_ARG_DST, c_mem}}, c_mem);
}

// out[B,M,N] = X[B,M,K] x Y per batch, Y read as [B,N,K] transposed ("acb"
// as a {B, K, N} matrix) or as [B,K,N]. Both are activations, changing every
// call: oneDNN reads them where they are, as the tunefarm kernel does.
Result<OneDnnOp> BatchMatmul(std::map<std::string, HostBuffer*>& b, HostBuffer* out, bool transposed) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, "X"));
  TF_ASSIGN_OR_RETURN(HostBuffer* y, Get(b, "Y"));
  int64_t batch = x->shape()[0], m = x->shape()[1], k = x->shape()[2];
  int64_t n = transposed ? y->shape()[1] : y->shape()[2];
  dnnl::memory::desc x_md({batch, m, k}, dt::f32, tag::abc), y_md({batch, k, n}, dt::f32, transposed ? tag::acb : tag::abc),
      out_md({batch, m, n}, dt::f32, tag::abc);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_md, y_md, out_md), c->eng);
  dnnl::memory x_mem(x_md, c->eng, x->data()), y_mem(y_md, c->eng, y->data()), out_mem(out_md, c->eng, out->data());
  return Wrap(c, transposed ? "batch matmul (Y transposed)" : "batch matmul", dnnl::matmul(pd),
              {{DNNL_ARG_SRC, x_mem}, {DNNL_ARG_WEIGHTS, y_mem}, {DNNL_ARG_DST, out_mem}}, out_mem);
}

// Convolutions, depthwise (weights viewed as goihw with groups = C) and deconvolution.
struct ConvShape {
  dims src, wei, dst, strides, pad;
  tag wei_user_tag;
  bool deconv = false;
};

Result<OneDnnOp> Conv(std::map<std::string, HostBuffer*>& b, HostBuffer* out, const ConvShape& s) {
  auto c = std::make_shared<Context>();
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(b, "X"));
  TF_ASSIGN_OR_RETURN(HostBuffer* w, Get(b, "Wt"));
  dnnl::memory::desc src_any(s.src, dt::f32, tag::any), wei_any(s.wei, dt::f32, tag::any), dst_any(s.dst, dt::f32, tag::any);
  dnnl::memory src_user({s.src, dt::f32, tag::nchw}, c->eng, x->data());
  dnnl::memory wei_user({s.wei, dt::f32, s.wei_user_tag}, c->eng, w->data());
  dnnl::memory dst_user({s.dst, dt::f32, tag::nchw}, c->eng, out->data());
  const auto inference = dnnl::prop_kind::forward_inference;
  if (s.deconv) {
    dnnl::deconvolution_forward::primitive_desc pd(
        dnnl::deconvolution_forward::desc(inference, dnnl::algorithm::deconvolution_direct, src_any, wei_any, dst_any,
                                          s.strides, s.pad, s.pad),
        c->eng);
    dnnl::memory src = Into(*c, pd.src_desc(), src_user), wei = Into(*c, pd.weights_desc(), wei_user);
    dnnl::memory dst(pd.dst_desc(), c->eng);
    return Wrap(c, "deconvolution", dnnl::deconvolution_forward(pd),
                {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}}, dst_user);
  }
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(inference, dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any, s.strides,
                                      s.pad, s.pad),
      c->eng);
  dnnl::memory src = Into(*c, pd.src_desc(), src_user), wei = Into(*c, pd.weights_desc(), wei_user);
  dnnl::memory dst(pd.dst_desc(), c->eng);
  return Wrap(c, s.wei.size() == 5 ? "grouped convolution (groups = C)" : "convolution",
              dnnl::convolution_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}}, dst_user);
}

// The shapes of a convolution-like op from its buffers and the spec's strides and padding.
Result<OneDnnOp> ConvFromSpec(const OneDnnSpec& spec, std::map<std::string, HostBuffer*>& buffers, HostBuffer* output) {
  TF_ASSIGN_OR_RETURN(HostBuffer* x, Get(buffers, "X"));
  TF_ASSIGN_OR_RETURN(HostBuffer* w, Get(buffers, "Wt"));
  const auto& xs = x->shape();
  const auto& ws = w->shape();
  const auto& os = output->shape();
  ConvShape s{dims(xs.begin(), xs.end()), {}, dims(os.begin(), os.end()), {spec.strides[0], spec.strides[1]},
              {spec.padding[0], spec.padding[1]}, tag::oihw};
  switch (spec.op) {
    case OneDnnOpClass::kConv2d:
      s.wei = {ws[0], ws[1], ws[2], ws[3]};
      break;
    case OneDnnOpClass::kDepthwiseConv2d:
      // Wt[C, R, S] is goihw with one input and one output channel per group.
      s.wei = {ws[0], 1, 1, ws[1], ws[2]};
      s.wei_user_tag = tag::goihw;
      break;
    case OneDnnOpClass::kDeconv2d:
      // Wt[C, K, R, S] is oneDNN's {OC = K, IC = C, KH, KW} in layout iohw.
      s.wei = {ws[1], ws[0], ws[2], ws[3]};
      s.wei_user_tag = tag::iohw;
      s.deconv = true;
      break;
    case OneDnnOpClass::kMatmul:
    case OneDnnOpClass::kDense:
    case OneDnnOpClass::kBatchMatmulNT:
    case OneDnnOpClass::kBatchMatmulNN:
      return Status::Internal("not a convolution");
  }
  return Conv(buffers, output, s);
}

}  // namespace

Result<OneDnnOp> MakeOneDnnOp(const OneDnnSpec& spec, std::map<std::string, HostBuffer*>& buffers, HostBuffer* output) {
  try {
    switch (spec.op) {
      case OneDnnOpClass::kMatmul: return Matmul(buffers, output);
      case OneDnnOpClass::kDense: return Dense(buffers, output, spec.activation);
      case OneDnnOpClass::kBatchMatmulNT: return BatchMatmul(buffers, output, /*transposed=*/true);
      case OneDnnOpClass::kBatchMatmulNN: return BatchMatmul(buffers, output, /*transposed=*/false);
      case OneDnnOpClass::kConv2d:
      case OneDnnOpClass::kDepthwiseConv2d:
      case OneDnnOpClass::kDeconv2d: return ConvFromSpec(spec, buffers, output);
    }
  } catch (const dnnl::error& e) {
    return Status::Internal(std::string("oneDNN: ") + e.what());
  }
  return Status::InvalidArgument("unknown oneDNN op class");
}

}  // namespace tunefarm::bench
