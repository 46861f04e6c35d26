#include "anchor.h"

#include <fmt/core.h>

namespace tunefarm::frontend {

Result<AnchorResult> BuildAnchor(TaskContext& ctx, const GraphNode& n) {
  for (const std::string& in : n.inputs) {
    if (in.empty() || ctx.graph().value(in).dtype == ir::DataType::Int(64)) continue;  // shapes, axes: int64 constants
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
  return Status::Internal("no anchor builder for " + n.Where());
}

IndexFn LoadOf(const ir::Buffer& b) {
  return [b](const std::vector<ir::Expr>& at) { return ir::Load::Make(b, at); };
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
