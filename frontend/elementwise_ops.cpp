// Constants that ONNX passes as tensors (Clip's bounds, Pow's exponent) are
// read at import and become immediates, so that the fused expression is what
// a person would write (max(x, 0) rather than max(x, lo[0])).
#include "elementwise_ops.h"

#include <cmath>
#include <map>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

namespace tunefarm::frontend {
namespace {

using ir::Expr;

Expr F(double v) { return ir::FloatImm::Make(ir::DataType::Float(32), v); }
Expr Math(ir::CallOp op, Expr x) { return ir::Call::Make(op, {std::move(x)}); }

// Booleans: IR bool inside a task's expression, f32 0/1 where a value is
// stored or meets arithmetic. A bool turned to f32 and read back as a
// condition is the original condition, so a fused mask is one comparison.
Expr ToF32(Expr c) { return ir::Select::Make(std::move(c), F(1), F(0)); }
Expr ToBool(Expr v) {
  if (const auto* s = v.as<ir::Select>()) {
    const auto* t = s->true_value.as<ir::FloatImm>();
    const auto* f = s->false_value.as<ir::FloatImm>();
    if (t && f && t->value == 1 && f->value == 0) return s->condition;
  }
  return ir::NE::Make(v, F(0));
}

using Unary = Expr (*)(Expr);
const std::map<std::string, Unary>& UnaryOps() {
  static const std::map<std::string, Unary> kOps = {
      {"Relu", [](Expr x) { return ir::Max::Make(x, F(0)); }},
      {"Sigmoid", [](Expr x) { return Math(ir::CallOp::kSigmoid, x); }},
      {"Tanh", [](Expr x) { return Math(ir::CallOp::kTanh, x); }},
      {"Erf", [](Expr x) { return Math(ir::CallOp::kErf, x); }},
      {"Exp", [](Expr x) { return Math(ir::CallOp::kExp, x); }},
      {"Log", [](Expr x) { return Math(ir::CallOp::kLog, x); }},
      {"Sqrt", [](Expr x) { return Math(ir::CallOp::kSqrt, x); }},
      {"Abs", [](Expr x) { return Math(ir::CallOp::kAbs, x); }},
      {"Neg", [](Expr x) { return F(0) - x; }},
      {"Reciprocal", [](Expr x) { return F(1) / x; }},
      {"Not", [](Expr x) { return ToF32(ir::Not::Make(ToBool(x))); }},
      {"HardSwish", [](Expr x) { return x * ir::Max::Make(F(0), ir::Min::Make(F(1), x * F(1.0 / 6) + F(0.5))); }},
  };
  return kOps;
}

using Binary = Expr (*)(Expr, Expr);
const std::map<std::string, Binary>& BinaryOps() {
  static const std::map<std::string, Binary> kOps = {
      {"Add", [](Expr a, Expr b) { return a + b; }},
      {"Sub", [](Expr a, Expr b) { return a - b; }},
      {"Mul", [](Expr a, Expr b) { return a * b; }},
      {"Div", [](Expr a, Expr b) { return a / b; }},
      {"Max", [](Expr a, Expr b) { return ir::Max::Make(a, b); }},
      {"Min", [](Expr a, Expr b) { return ir::Min::Make(a, b); }},
      {"Equal", [](Expr a, Expr b) { return ToF32(ir::EQ::Make(a, b)); }},
      {"Less", [](Expr a, Expr b) { return ToF32(ir::LT::Make(a, b)); }},
      {"Greater", [](Expr a, Expr b) { return ToF32(ir::GT::Make(a, b)); }},
      {"LessOrEqual", [](Expr a, Expr b) { return ToF32(ir::LE::Make(a, b)); }},
      {"GreaterOrEqual", [](Expr a, Expr b) { return ToF32(ir::GE::Make(a, b)); }},
      {"And", [](Expr a, Expr b) { return ToF32(ir::And::Make(ToBool(a), ToBool(b))); }},
      {"Or", [](Expr a, Expr b) { return ToF32(ir::Or::Make(ToBool(a), ToBool(b))); }},
  };
  return kOps;
}

// Clip's bound: an input (opset >= 11) or an attribute (older opsets).
Result<std::optional<double>> ClipBound(TaskContext& ctx, const GraphNode& n, size_t input, const char* attr) {
  if (n.inputs.size() > input && !n.inputs[input].empty()) {
    std::optional<double> v = ctx.Scalar(n.inputs[input]);
    if (!v) return ctx.graph().NodeError(n, fmt::format("its {} bound '{}' must be a constant scalar", attr, n.inputs[input]));
    return v;
  }
  if (ctx.graph().opset() < 11) {
    TF_ASSIGN_OR_RETURN(double v, ctx.graph().FloatAttr(n, attr, std::nan("")));
    if (!std::isnan(v)) return std::optional<double>(v);
  }
  return std::optional<double>();
}

Result<IndexFn> PowValue(TaskContext& ctx, const GraphNode& n, const std::vector<Operand>& ops,
                         const std::vector<int64_t>& shape) {
  Operand x = ops[0];
  std::optional<double> e = ctx.Scalar(n.inputs[1]);
  if (e && *e == 2) {
    return IndexFn([x, shape](const std::vector<Expr>& i) { Expr v = BroadcastAt(x, i, shape); return v * v; });
  }
  if (e && *e == 0.5) {
    return IndexFn([x, shape](const std::vector<Expr>& i) {
      return Math(ir::CallOp::kSqrt, BroadcastAt(x, i, shape));
    });
  }
  Operand y = ops[1];
  return IndexFn([x, y, shape](const std::vector<Expr>& i) {
    return ir::Call::Make(ir::CallOp::kPow, {BroadcastAt(x, i, shape), BroadcastAt(y, i, shape)});
  });
}

Result<IndexFn> BatchNormValue(TaskContext& ctx, const GraphNode& n, const std::vector<Operand>& ops,
                               size_t channel_axis) {
  TF_ASSIGN_OR_RETURN(double eps, ctx.graph().FloatAttr(n, "epsilon", 1e-5));
  for (size_t k = 1; k < 5; ++k) {
    if (ops[k].shape.size() > 1) return ctx.graph().NodeError(n, "its scale, bias, mean and variance must be 1-D");
  }
  Operand x = ops[0];
  std::vector<Operand> p(ops.begin() + 1, ops.begin() + 5);
  return IndexFn([x, p, eps, channel_axis](const std::vector<Expr>& i) {
    auto at = [&](const Operand& o) { return o.shape.empty() ? o.value({}) : o.value({i[channel_axis]}); };
    Expr scale = at(p[0]) * Math(ir::CallOp::kRsqrt, at(p[3]) + F(eps));
    return (x.value(i) - at(p[2])) * scale + at(p[1]);
  });
}

}  // namespace

Result<IndexFn> ElementwiseValue(TaskContext& ctx, const GraphNode& n, const std::vector<Operand>& ops,
                                 const std::vector<int64_t>& shape, size_t channel_axis) {
  const OnnxGraph& g = ctx.graph();
  if (auto it = UnaryOps().find(n.op_type); it != UnaryOps().end()) {
    Unary f = it->second;
    Operand x = ops[0];
    return IndexFn([f, x, shape](const std::vector<Expr>& i) { return f(BroadcastAt(x, i, shape)); });
  }
  if (auto it = BinaryOps().find(n.op_type); it != BinaryOps().end()) {
    if (ops.size() != 2) return g.NodeError(n, "tunefarm imports the two-input form of " + n.op_type);
    Binary f = it->second;
    Operand a = ops[0], b = ops[1];
    return IndexFn([f, a, b, shape](const std::vector<Expr>& i) {
      return f(BroadcastAt(a, i, shape), BroadcastAt(b, i, shape));
    });
  }
  if (n.op_type == "Where") {
    Operand c = ops[0], a = ops[1], b = ops[2];
    return IndexFn([c, a, b, shape](const std::vector<Expr>& i) {
      return ir::Select::Make(ToBool(BroadcastAt(c, i, shape)), BroadcastAt(a, i, shape), BroadcastAt(b, i, shape));
    });
  }
  Operand x = ops[0];
  if (n.op_type == "LeakyRelu" || n.op_type == "HardSigmoid") {
    bool leaky = n.op_type == "LeakyRelu";
    TF_ASSIGN_OR_RETURN(double alpha, g.FloatAttr(n, "alpha", leaky ? 0.01 : 0.2));
    TF_ASSIGN_OR_RETURN(double beta, g.FloatAttr(n, "beta", 0.5));
    if (leaky) {
      return IndexFn([x, alpha, shape](const std::vector<Expr>& i) {
        Expr v = BroadcastAt(x, i, shape);
        return ir::Select::Make(ir::GT::Make(v, F(0)), v, v * F(alpha));
      });
    }
    return IndexFn([x, alpha, beta, shape](const std::vector<Expr>& i) {
      return ir::Max::Make(F(0), ir::Min::Make(F(1), BroadcastAt(x, i, shape) * F(alpha) + F(beta)));
    });
  }
  if (n.op_type == "Clip") {
    TF_ASSIGN_OR_RETURN(std::optional<double> lo, ClipBound(ctx, n, 1, "min"));
    TF_ASSIGN_OR_RETURN(std::optional<double> hi, ClipBound(ctx, n, 2, "max"));
    return IndexFn([x, lo, hi, shape](const std::vector<Expr>& i) {
      Expr v = BroadcastAt(x, i, shape);
      if (lo) v = ir::Max::Make(v, F(*lo));
      if (hi) v = ir::Min::Make(v, F(*hi));
      return v;
    });
  }
  if (n.op_type == "Pow") return PowValue(ctx, n, ops, shape);
  if (n.op_type == "BatchNormalization") {
    if (ops.size() < 5 || n.outputs.size() > 1) {
      return g.NodeError(n, "tunefarm imports BatchNormalization in inference form (5 inputs, 1 output)");
    }
    return BatchNormValue(ctx, n, ops, channel_axis);
  }
  if (n.op_type == "Cast") {
    TF_ASSIGN_OR_RETURN(int64_t to, g.IntAttr(n, "to", 0));
    if (to != onnx::TensorProto::FLOAT) return g.NodeError(n, "tunefarm imports Cast to float only");
    return IndexFn([x, shape](const std::vector<Expr>& i) { return BroadcastAt(x, i, shape); });
  }
  return Status::Internal("no element-wise value for " + n.Where());
}

}  // namespace tunefarm::frontend
