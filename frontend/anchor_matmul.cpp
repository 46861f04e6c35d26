// MatMul and Gemm. Leading dimensions of size 1 are dropped (a batch-1
// transformer's [1, 128, 768] x [768, 768] is the 2-D dense layer it is), and
// the weights keep the model's layout: no transposed copy is made at import.
#include <fmt/core.h>

#include "anchor.h"

namespace tunefarm::frontend {
namespace {

using ir::Expr;

std::string Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return std::to_string(p);
}

}  // namespace

Result<AnchorResult> BuildMatMul(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& av = g.value(n.inputs[0]);
  const GraphValue& bv = g.value(n.inputs[1]);
  if (av.shape.size() < 2 || bv.shape.size() < 2) {
    return g.NodeError(n, "tunefarm imports MatMul of operands of rank 2 or more (no matrix-vector form)");
  }
  std::vector<int64_t> out = DropLeadingOnes(g.value(n.outputs[0]).shape, 2);
  std::vector<int64_t> a_shape = DropLeadingOnes(av.shape, 2), b_shape = DropLeadingOnes(bv.shape, 2);
  if (a_shape.size() > out.size() || b_shape.size() > out.size()) {
    return Status::Internal("MatMul operands of higher rank than the result at " + n.Where());
  }
  int64_t m = out[out.size() - 2], nn = out.back(), kk = a_shape.back();
  if (b_shape[b_shape.size() - 2] != kk) {
    return g.NodeError(n, fmt::format("inner dimensions disagree: {} and {}", kk, b_shape[b_shape.size() - 2]));
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer a, ctx.Input(n.inputs[0], a_shape, "A"));
  TF_ASSIGN_OR_RETURN(ir::Buffer b, ctx.Input(n.inputs[1], b_shape, bv.constant() ? "W" : "B"));

  std::vector<ir::Var> axes;
  for (size_t d = 0; d + 2 < out.size(); ++d) axes.push_back(ctx.Axis(fmt::format("b{}", d)));
  ir::Var i = ctx.Axis("i"), j = ctx.Axis("j"), k = ctx.Axis("k");
  axes.push_back(i);
  axes.push_back(j);
  // An operand's batch index: the result's, aligned at the right, 0 where it broadcasts.
  auto batch_index = [&](const std::vector<int64_t>& shape) {
    std::vector<Expr> idx;
    size_t offset = out.size() - shape.size();
    for (size_t d = 0; d + 2 < shape.size(); ++d) idx.push_back(shape[d] == 1 ? Expr(int64_t{0}) : Expr(axes[d + offset]));
    return idx;
  };
  std::vector<Expr> ai = batch_index(a_shape), bi = batch_index(b_shape);
  ai.insert(ai.end(), {i, k});
  bi.insert(bi.end(), {k, j});
  ir::Buffer acc = ctx.builder().Compute(ctx.ResultName(true), out, axes, ReduceKind::kSum, {k}, {kk},
                                         ir::Load::Make(a, ai) * ir::Load::Make(b, bi));
  AnchorResult res;
  res.shape = out;
  res.value = LoadOf(acc);
  res.stage = acc;
  std::vector<int64_t> batch(out.begin(), out.end() - 2);
  if (b_shape.size() == 2 && bv.constant()) {
    res.op_class = "dense";
    res.shape_name = fmt::format("dense_m{}_n{}_k{}", std::stoll(Product(batch)) * m, nn, kk);
    res.summary = fmt::format("dense {} x {} -> {} features", ShapeText(a_shape), kk, nn);
  } else {
    res.op_class = batch.empty() ? "matmul" : "batch_matmul";
    res.shape_name = batch.empty() ? fmt::format("matmul_m{}_n{}_k{}", m, nn, kk)
                                   : fmt::format("bmm_b{}_m{}_n{}_k{}", Product(batch), m, nn, kk);
    res.summary = fmt::format("{} {} x {}", batch.empty() ? "matmul" : "batch matmul", ShapeText(a_shape),
                              ShapeText(b_shape));
  }
  return res;
}

Result<AnchorResult> BuildGemm(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& av = g.value(n.inputs[0]);
  const GraphValue& bv = g.value(n.inputs[1]);
  if (av.shape.size() != 2 || bv.shape.size() != 2) return g.NodeError(n, "Gemm takes 2-D operands");
  TF_ASSIGN_OR_RETURN(int64_t trans_a, g.IntAttr(n, "transA", 0));
  TF_ASSIGN_OR_RETURN(int64_t trans_b, g.IntAttr(n, "transB", 0));
  TF_ASSIGN_OR_RETURN(double alpha, g.FloatAttr(n, "alpha", 1.0));
  TF_ASSIGN_OR_RETURN(double beta, g.FloatAttr(n, "beta", 1.0));
  int64_t m = av.shape[trans_a ? 1 : 0], kk = av.shape[trans_a ? 0 : 1];
  int64_t kb = bv.shape[trans_b ? 1 : 0], nn = bv.shape[trans_b ? 0 : 1];
  if (kk != kb) return g.NodeError(n, fmt::format("inner dimensions disagree: A gives {}, B gives {}", kk, kb));
  TF_ASSIGN_OR_RETURN(ir::Buffer a, ctx.Input(n.inputs[0], av.shape, "A"));
  TF_ASSIGN_OR_RETURN(ir::Buffer b, ctx.Input(n.inputs[1], bv.shape, "W"));
  bool has_c = n.inputs.size() > 2 && !n.inputs[2].empty() && beta != 0;
  ir::Var i = ctx.Axis("i"), j = ctx.Axis("j"), k = ctx.Axis("k");
  Expr la = trans_a ? ir::Load::Make(a, {k, i}) : ir::Load::Make(a, {i, k});
  Expr lb = trans_b ? ir::Load::Make(b, {j, k}) : ir::Load::Make(b, {k, j});
  bool plain = !has_c && alpha == 1;
  ir::Buffer acc =
      ctx.builder().Compute(ctx.ResultName(plain), {m, nn}, {i, j}, ReduceKind::kSum, {k}, {kk}, la * lb);
  AnchorResult res;
  res.shape = {m, nn};
  res.value = LoadOf(acc);
  res.stage = plain ? acc : nullptr;
  if (!plain) {
    Operand c{nullptr, {}};
    if (has_c) {
      TF_ASSIGN_OR_RETURN(c, ctx.TensorOperand(n.inputs[2], 2));
      if (c.shape.size() == 2 && c.shape[0] == m && c.shape[1] != nn) return g.NodeError(n, "C does not broadcast to M x N");
    }
    Expr a_scale = ir::FloatImm::Make(ir::DataType::Float(32), alpha);
    Expr c_scale = ir::FloatImm::Make(ir::DataType::Float(32), beta);
    const std::vector<int64_t> shape = res.shape;
    res.value = [acc, c, a_scale, c_scale, alpha, beta, has_c, shape](const std::vector<Expr>& idx) {
      Expr v = ir::Load::Make(acc, idx);
      if (alpha != 1) v = v * a_scale;
      if (has_c) v = v + (beta == 1 ? BroadcastAt(c, idx, shape) : BroadcastAt(c, idx, shape) * c_scale);
      return v;
    };
  }
  res.op_class = "dense";
  res.shape_name = fmt::format("dense_m{}_n{}_k{}", m, nn, kk);
  res.summary = fmt::format("dense {} x {} -> {} features{}", m, kk, nn, has_c ? ", bias" : "");
  return res;
}

}  // namespace tunefarm::frontend
