#include "anchor.h"

#include <fmt/core.h>

namespace tunefarm::frontend {

Result<AnchorResult> BuildAnchor(TaskContext& ctx, const GraphNode& n, int part) {
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const std::string& in = n.inputs[k];
    if (in.empty() || ctx.graph().value(in).dtype == ir::DataType::Int(64)) continue;  // shapes, axes: int64 constants
    if (n.op_type == "Gather" && k == 1) continue;  // int32 or int64 indices
    TF_RETURN_IF_ERROR(CheckF32(ctx, n, in));
  }
  const std::string& op = n.op_type;
  if (op == "Conv") return BuildConv(ctx, n);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    return BuildPool(ctx, n);
  }
  if (op == "MatMul") return BuildMatMul(ctx, n);
  if (op == "Gemm") return BuildGemm(ctx, n);
  if (op == "Softmax") return BuildSoftmax(ctx, n);
  if (op == "LayerNormalization") return BuildLayerNorm(ctx, n);
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") return BuildReduce(ctx, n);
  if (op == "Transpose") return BuildTranspose(ctx, n);
  if (op == "Concat") return BuildConcat(ctx, n);
  if (op == "Slice") return BuildSlice(ctx, n);
  if (op == "Split") return BuildSplit(ctx, n, part);
  if (op == "Pad") return BuildPad(ctx, n);
  if (op == "Expand") return BuildExpand(ctx, n);
  if (op == "Gather") return BuildGather(ctx, n);
  if (op == "Resize" || op == "Upsample") return BuildResize(ctx, n);
  return Status::Internal("no anchor builder for " + n.Where());
}

IndexFn LoadOf(const ir::Buffer& b) {
  return [b](const std::vector<ir::Expr>& at) { return ir::Load::Make(b, at); };
}

ir::Expr ClampIndex(const ir::Expr& i, int64_t extent) {
  return ir::Max::Make(ir::Min::Make(i, ir::Expr(extent - 1)), ir::Expr(int64_t{0}));
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

Status CheckF32(const TaskContext& ctx, const GraphNode& n, const std::string& tensor) {
  ir::DataType t = ctx.graph().value(tensor).dtype;
  if (t == ir::DataType::Float(32)) return Status::OK();
  return ctx.graph().NodeError(n, fmt::format("tensor '{}' is {}; tunefarm's imported tasks compute in f32", tensor,
                                              t.ToString()));
}

}  // namespace tunefarm::frontend
