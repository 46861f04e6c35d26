// Operators along the last axis (Softmax, LayerNormalization), reductions
// over chosen axes, and Transpose. Their stages follow the suite's softmax
// and layer_norm workloads: the row maximum is subtracted before exp, the
// variance is taken of the centred values.
#include <algorithm>

#include <fmt/core.h>

#include "anchor.h"

namespace tunefarm::frontend {
namespace {

using ir::Expr;

Expr F(double v) { return ir::FloatImm::Make(ir::DataType::Float(32), v); }

// The axis attribute made non-negative; InvalidArgument unless it is the last axis.
Status RequireLastAxis(const OnnxGraph& g, const GraphNode& n, int64_t axis, size_t rank) {
  if (axis < 0) axis += int64_t(rank);
  if (axis != int64_t(rank) - 1) {
    return g.NodeError(n, fmt::format("axis {} of a rank-{} tensor: tunefarm imports {} over the last axis", axis, rank,
                                      n.op_type));
  }
  return Status::OK();
}

struct Rows {
  std::vector<int64_t> shape;      // the canonical shape: leading 1s dropped
  std::vector<ir::Var> row_axes;   // all but the last
  ir::Var col;                     // the last axis
  std::vector<Expr> At(const Expr& last) const {
    std::vector<Expr> idx(row_axes.begin(), row_axes.end());
    idx.push_back(last);
    return idx;
  }
  std::vector<int64_t> RowShape() const { return std::vector<int64_t>(shape.begin(), shape.end() - 1); }
};

Rows MakeRows(TaskContext& ctx, const std::vector<int64_t>& shape) {
  Rows rows;
  rows.shape = DropLeadingOnes(shape, 1);
  for (size_t d = 0; d + 1 < rows.shape.size(); ++d) rows.row_axes.push_back(ctx.Axis(fmt::format("i{}", d)));
  rows.col = ctx.Axis("j");
  return rows;
}

int64_t RowCount(const Rows& rows) {
  int64_t count = 1;
  for (size_t d = 0; d + 1 < rows.shape.size(); ++d) count *= rows.shape[d];
  return count;
}

std::string RowsName(const Rows& rows) { return fmt::format("r{}_n{}", RowCount(rows), rows.shape.back()); }

}  // namespace

Result<AnchorResult> BuildSoftmax(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", g.opset() >= 13 ? -1 : 1));
  TF_RETURN_IF_ERROR(RequireLastAxis(g, n, axis, xv.shape.size()));
  Rows rows = MakeRows(ctx, xv.shape);
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], rows.shape, "X"));
  WorkloadBuilder& b = ctx.builder();
  ir::Var jr = ctx.Axis("k");
  ir::Buffer mx = b.Compute("mx", rows.RowShape(), rows.row_axes, ReduceKind::kMax, {jr}, {rows.shape.back()},
                            ir::Load::Make(x, rows.At(jr)));
  std::vector<ir::Var> all = rows.row_axes;
  all.push_back(rows.col);
  std::vector<Expr> row_idx(rows.row_axes.begin(), rows.row_axes.end());
  ir::Buffer e = b.Compute("e", rows.shape, all,
                           ir::Call::Make(ir::CallOp::kExp, {ir::Load::Make(x, rows.At(rows.col)) - ir::Load::Make(mx, row_idx)}));
  ir::Var js = ctx.Axis("l");
  ir::Buffer sum = b.Compute("s", rows.RowShape(), rows.row_axes, ReduceKind::kSum, {js}, {rows.shape.back()},
                             ir::Load::Make(e, rows.At(js)));
  ir::Buffer out = b.Compute(ctx.ResultName(true), rows.shape, all, ir::Load::Make(e, rows.At(rows.col)) / ir::Load::Make(sum, row_idx));
  AnchorResult res{rows.shape, LoadOf(out), out, "softmax", "softmax_" + RowsName(rows),
                   fmt::format("softmax over {} rows of {}", RowCount(rows), rows.shape.back())};
  return res;
}

Result<AnchorResult> BuildLayerNorm(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", -1));
  TF_RETURN_IF_ERROR(RequireLastAxis(g, n, axis, xv.shape.size()));
  TF_ASSIGN_OR_RETURN(double eps, g.FloatAttr(n, "epsilon", 1e-5));
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (!n.outputs[o].empty() && !g.value(n.outputs[o]).consumers.empty()) {
      return g.NodeError(n, "its Mean and InvStdDev outputs are not supported");
    }
  }
  Rows rows = MakeRows(ctx, xv.shape);
  int64_t width = rows.shape.back();
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], rows.shape, "X"));
  TF_ASSIGN_OR_RETURN(Operand gamma, ctx.TensorOperand(n.inputs[1], rows.shape.size()));
  std::optional<Operand> beta;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    TF_ASSIGN_OR_RETURN(beta, ctx.TensorOperand(n.inputs[2], rows.shape.size()));
  }
  WorkloadBuilder& b = ctx.builder();
  std::vector<ir::Var> all = rows.row_axes;
  all.push_back(rows.col);
  std::vector<Expr> row_idx(rows.row_axes.begin(), rows.row_axes.end());
  std::vector<Expr> all_idx = rows.At(rows.col);
  ir::Var j1 = ctx.Axis("k");
  ir::Buffer sum = b.Compute("s", rows.RowShape(), rows.row_axes, ReduceKind::kSum, {j1}, {width}, ir::Load::Make(x, rows.At(j1)));
  ir::Buffer mean = b.Compute("mean", rows.RowShape(), rows.row_axes, ir::Load::Make(sum, row_idx) / F(double(width)));
  ir::Buffer d = b.Compute("d", rows.shape, all, ir::Load::Make(x, all_idx) - ir::Load::Make(mean, row_idx));
  ir::Var j2 = ctx.Axis("l");
  ir::Buffer ss = b.Compute("ss", rows.RowShape(), rows.row_axes, ReduceKind::kSum, {j2}, {width},
                            ir::Load::Make(d, rows.At(j2)) * ir::Load::Make(d, rows.At(j2)));
  ir::Buffer rstd = b.Compute("rstd", rows.RowShape(), rows.row_axes,
                              ir::Call::Make(ir::CallOp::kRsqrt, {ir::Load::Make(ss, row_idx) / F(double(width)) + F(eps)}));
  Expr value = ir::Load::Make(d, all_idx) * ir::Load::Make(rstd, row_idx) * BroadcastAt(gamma, all_idx, rows.shape);
  if (beta) value = value + BroadcastAt(*beta, all_idx, rows.shape);
  ir::Buffer out = b.Compute(ctx.ResultName(true), rows.shape, all, value);
  return AnchorResult{rows.shape, LoadOf(out), out, "layer_norm", "layer_norm_" + RowsName(rows),
                      fmt::format("layer norm over {} rows of {}", RowCount(rows), width)};
}

Result<AnchorResult> BuildReduce(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  size_t rank = xv.shape.size();
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, g.IntsAttr(n, "axes", {}));
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    if (!g.value(n.inputs[1]).constant()) return g.NodeError(n, "its axes must be a constant");
    TF_ASSIGN_OR_RETURN(std::vector<double> values, g.ConstantValues(n.inputs[1]));
    axes.assign(values.begin(), values.end());
  }
  TF_ASSIGN_OR_RETURN(int64_t keepdims, g.IntAttr(n, "keepdims", 1));
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    if (a < 0) a += int64_t(rank);
    if (a < 0 || a >= int64_t(rank)) return g.NodeError(n, fmt::format("axis {} is out of range", a));
    reduced[size_t(a)] = true;
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  std::vector<ir::Var> out_axes, red_axes;
  std::vector<int64_t> out_shape, red_extents;
  std::vector<Expr> load_idx;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      ir::Var r = ctx.Axis(fmt::format("r{}", d));
      red_axes.push_back(r);
      red_extents.push_back(xv.shape[d]);
      load_idx.push_back(r);
      count *= xv.shape[d];
      if (keepdims) {
        out_axes.push_back(ctx.Axis(fmt::format("o{}", d)));
        out_shape.push_back(1);
      }
    } else {
      ir::Var o = ctx.Axis(fmt::format("o{}", d));
      out_axes.push_back(o);
      out_shape.push_back(xv.shape[d]);
      load_idx.push_back(o);
    }
  }
  bool is_max = n.op_type == "ReduceMax", is_mean = n.op_type == "ReduceMean";
  ir::Buffer acc = ctx.builder().Compute(ctx.ResultName(!is_mean), out_shape, out_axes,
                                         is_max ? ReduceKind::kMax : ReduceKind::kSum, red_axes, red_extents,
                                         ir::Load::Make(x, load_idx));
  AnchorResult res{out_shape, LoadOf(acc), is_mean ? nullptr : acc, "reduce", "", ""};
  if (is_mean) {
    Expr scale = F(1.0 / double(count));
    res.value = [acc, scale](const std::vector<Expr>& i) { return ir::Load::Make(acc, i) * scale; };
  }
  std::string op = n.op_type.substr(6);
  std::transform(op.begin(), op.end(), op.begin(), ::tolower);
  res.shape_name = fmt::format("reduce_{}_{}_to_{}", op, ShapeText(xv.shape), ShapeText(out_shape));
  res.summary = fmt::format("reduce {} of {} to {}", op, ShapeText(xv.shape), ShapeText(out_shape));
  return res;
}

Result<AnchorResult> BuildTranspose(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  size_t rank = xv.shape.size();
  std::vector<int64_t> reverse(rank);
  for (size_t d = 0; d < rank; ++d) reverse[d] = int64_t(rank - 1 - d);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, g.IntsAttr(n, "perm", reverse));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < rank; ++d) {
    if (sorted.size() != rank || sorted[d] != int64_t(d)) return g.NodeError(n, "perm is not a permutation of the axes");
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  std::vector<int64_t> out_shape(rank);
  for (size_t d = 0; d < rank; ++d) out_shape[d] = xv.shape[size_t(perm[d])];
  AnchorResult res;
  res.shape = out_shape;
  res.value = [x, perm](const std::vector<Expr>& i) {
    std::vector<Expr> at(i.size());
    for (size_t d = 0; d < i.size(); ++d) at[size_t(perm[d])] = i[d];
    return ir::Load::Make(x, at);
  };
  std::string perm_text;
  for (int64_t p : perm) perm_text += std::to_string(p);
  res.op_class = "transpose";
  res.shape_name = fmt::format("transpose_{}_p{}", ShapeText(xv.shape), perm_text);
  res.summary = fmt::format("transpose {} by ({})", ShapeText(xv.shape), perm_text);
  return res;
}

}  // namespace tunefarm::frontend
