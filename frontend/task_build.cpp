// The anchor's stages come first, then every fused element-wise operator
// composes into one final stage `out`. Names are derived from the operators
// so that a person reading `tunefarm import`'s list recognises the layer:
// resnet50_conv3x3_c64_k64_h56_s1_relu, bert_layer_dense_m128_n3072_k768_bias_gelu.
#include "task_build.h"

#include <fmt/core.h>

#include "anchor.h"
#include "elementwise_ops.h"

namespace tunefarm::frontend {
namespace {

// A short word for a fused operator: "bias" for an added constant vector,
// "relu6" for Clip(0, 6), the operator's name otherwise.
std::string Token(TaskContext& ctx, const GraphNode& n) {
  auto constant_operand = [&](bool scalar) {
    for (size_t k = 1; k < n.inputs.size() && k < 2; ++k) {
      const GraphValue& v = ctx.graph().value(n.inputs[k]);
      if (v.constant() && (v.num_elements() == 1) == scalar) return true;
    }
    const GraphValue& v0 = ctx.graph().value(n.inputs[0]);
    return v0.constant() && (v0.num_elements() == 1) == scalar;
  };
  if (n.op_type == "Add" && constant_operand(false)) return "bias";
  if (n.op_type == "Mul" && constant_operand(true)) return "scale";
  if (n.op_type == "Clip" && n.inputs.size() == 3 && ctx.Scalar(n.inputs[1]) == 0.0 && ctx.Scalar(n.inputs[2]) == 6.0) {
    return "relu6";
  }
  if (n.op_type == "BatchNormalization") return "bn";
  std::string t = n.op_type;
  for (char& c : t) c = char(::tolower(c));
  return t;
}

// Joins the tokens, naming the erf form of GELU as such.
std::string Suffix(std::vector<std::string> tokens) {
  std::string s;
  for (const std::string& t : tokens) s += (s.empty() ? "" : "_") + t;
  for (const char* gelu : {"div_erf_add_mul_scale", "div_erf_add_mul_mul"}) {
    if (size_t at = s.find(gelu); at != std::string::npos) s.replace(at, std::string(gelu).size(), "gelu");
  }
  return s;
}

}  // namespace

Result<ModelTask> BuildTask(const OnnxGraph& g, const NodeGroup& group, const std::string& model_name) {
  const std::vector<GraphNode>& nodes = g.nodes();
  size_t first_member = group.anchor >= 0 ? 1 : 0;
  TaskContext ctx(g, model_name, group.nodes.size() > first_member);
  ModelTask task;
  TaskCall call;
  std::vector<int64_t> shape;  // canonical
  std::map<std::string, Operand> values;
  std::string shape_name, summary;
  ir::Buffer result;
  if (group.anchor >= 0) {
    const GraphNode& a = nodes[size_t(group.anchor)];
    TF_ASSIGN_OR_RETURN(AnchorResult res, BuildAnchor(ctx, a, group.part));
    shape = res.shape;
    values[a.outputs[size_t(group.part)]] = Operand{res.value, shape};
    task.op_class = res.op_class;
    shape_name = res.shape_name;
    summary = res.summary;
    result = res.stage;
    call.nodes.push_back(a.name);
  } else {
    shape = DropLeadingOnes(g.value(nodes[size_t(group.nodes[0])].outputs[0]).shape, 1);
    task.op_class = "elementwise";
    shape_name = "eltwise_" + ShapeText(shape);
    summary = "element-wise on " + ShapeText(shape);
  }
  size_t graph_rank = g.value(nodes[size_t(group.nodes[0])].outputs[size_t(group.part)]).shape.size();
  // ONNX's channel axis (1) in the canonical shape; when more than the batch
  // was dropped the channel count is 1 and per-channel operands are scalars.
  size_t dropped = graph_rank - shape.size();
  size_t channel_axis = dropped == 0 && shape.size() > 1 ? 1 : 0;
  std::vector<std::string> tokens;
  for (size_t k = first_member; k < group.nodes.size(); ++k) {
    const GraphNode& n = nodes[size_t(group.nodes[k])];
    std::vector<Operand> ops;
    for (const std::string& in : n.inputs) {
      if (in.empty()) {
        ops.push_back(Operand{nullptr, {}});
      } else if (auto it = values.find(in); it != values.end()) {
        ops.push_back(it->second);
      } else {
        if (!ctx.Scalar(in)) TF_RETURN_IF_ERROR(CheckF32(ctx, n, in));
        if (g.value(in).shape.size() > graph_rank) {
          return g.NodeError(n, fmt::format("'{}' broadcasts its other operand to a larger shape", in));
        }
        TF_ASSIGN_OR_RETURN(Operand o, ctx.TensorOperand(in, shape.size()));
        ops.push_back(std::move(o));
      }
    }
    // A commutative operator takes the task's own value first, so that
    // Add(conv, residual) and Add(residual, conv) are one task.
    bool commutative = n.op_type == "Add" || n.op_type == "Mul" || n.op_type == "Max" || n.op_type == "Min";
    if (commutative && ops.size() == 2 && !values.count(n.inputs[0]) && values.count(n.inputs[1])) {
      std::swap(ops[0], ops[1]);
    }
    TF_ASSIGN_OR_RETURN(IndexFn fn, ElementwiseValue(ctx, n, ops, shape, channel_axis));
    values[n.outputs[0]] = Operand{fn, shape};
    tokens.push_back(Token(ctx, n));
    call.nodes.push_back(n.name);
    result = nullptr;
  }
  const std::string& output = nodes[size_t(group.last())].outputs[group.nodes.size() == 1 ? size_t(group.part) : 0];
  if (!result) {
    std::vector<ir::Var> axes;
    std::vector<ir::Expr> index;
    for (size_t d = 0; d < shape.size(); ++d) {
      axes.push_back(ctx.Axis(fmt::format("o{}", d)));
      index.push_back(axes.back());
    }
    result = ctx.builder().Compute("out", shape, axes, values.at(output).value(index));
  }
  ctx.builder().Output(result);
  auto workload = ctx.builder().Build();
  if (!workload.ok()) {
    return Status::Internal(fmt::format("the task of {} does not validate: {}", nodes[size_t(group.last())].Where(),
                                        workload.status().message()));
  }
  task.workload = std::move(workload).value();
  std::string suffix = Suffix(tokens);
  task.workload.name = model_name + "_" + shape_name + (suffix.empty() ? "" : "_" + suffix);
  task.summary = summary;
  for (size_t at = 0; !suffix.empty();) {
    size_t end = suffix.find('_', at);
    std::string word = suffix.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!(word == "bias" && summary.find("bias") != std::string::npos)) task.summary += ", " + word;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  call.inputs = ctx.bound_inputs();
  call.output = output;
  task.calls.push_back(std::move(call));
  return task;
}

}  // namespace tunefarm::frontend
