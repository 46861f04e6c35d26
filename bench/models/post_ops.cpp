// The importer writes each operator the way elementwise_ops.cpp builds it,
// so the patterns here are its shapes: max(x, 0.0) for Relu, min(max(x, lo),
// hi) for Clip, x * (erf(x / 1.41421...) + 1.0) * 0.5 for the erf GELU,
// select(x > 0, x, x * a) for LeakyRelu, a constant divisor for a scale.
// Consecutive linear post-ops (HardSigmoid's x * a + b) fold into one, as a
// user of oneDNN would write them.
#include "post_ops.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::bench {
namespace {

using ir::Expr;

std::optional<double> Imm(const Expr& e) {
  if (const auto* f = e.as<ir::FloatImm>()) return f->value;
  if (const auto* i = e.as<ir::IntImm>()) return double(i->value);
  return std::nullopt;
}

// An immediate equal to `want` (within float rounding of the importer's constants).
bool Near(const std::optional<double>& v, double want) { return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want); }
bool IsZero(const Expr& e) { return Imm(e) == 0.0; }

// True once the walk meets the core anywhere below the root.
class CoreFinder : public ir::IRVisitor {
 public:
  explicit CoreFinder(const CoreMatcher& is_core) : is_core_(is_core) {}
  bool found = false;
  void Visit(const Expr& e) override {
    if (found || !e.defined()) return;
    if (is_core_(e)) {
      found = true;
      return;
    }
    ir::IRVisitor::Visit(e);
  }
  using ir::IRVisitor::Visit;

 private:
  const CoreMatcher& is_core_;
};

PostOp Eltwise(const char* algorithm, float alpha = 0, float beta = 0) {
  PostOp op;
  op.algorithm = algorithm;
  op.alpha = alpha;
  op.beta = beta;
  return op;
}

class Reader {
 public:
  Reader(const Workload& w, const ComputeStage& stage, const CoreMatcher& is_core)
      : w_(w), stage_(stage), is_core_(is_core) {}

  // Appends the post-ops that make `e` out of the core.
  Status Read(const Expr& e, std::vector<PostOp>* ops) {
    if (is_core_(e)) return Status::OK();
    if (!Contains(e)) return Status::Unimplemented("'" + ir::ToString(e) + "' does not read the anchor's value");
    if (std::optional<Expr> v = GeluArgument(e)) return Then(*v, Eltwise("gelu_erf"), ops);
    if (std::optional<Expr> v = HardSwishArgument(e)) return Then(*v, Eltwise("hardswish"), ops);
    if (const auto* op = e.as<ir::Mul>(); op && ir::ExprEqual(op->a, op->b)) return Then(op->a, Eltwise("square"), ops);
    if (const auto* op = e.as<ir::Add>()) return Arith("add", op->a, op->b, ops);
    if (const auto* op = e.as<ir::Sub>()) return Arith("sub", op->a, op->b, ops);
    if (const auto* op = e.as<ir::Mul>()) return Arith("mul", op->a, op->b, ops);
    if (const auto* op = e.as<ir::Div>()) return Arith("div", op->a, op->b, ops);
    if (const auto* op = e.as<ir::Max>()) return Clamp(op->a, op->b, /*is_max=*/true, ops);
    if (const auto* op = e.as<ir::Min>()) return Clamp(op->a, op->b, /*is_max=*/false, ops);
    if (const auto* op = e.as<ir::Select>()) return LeakyRelu(e, *op, ops);
    if (const auto* op = e.as<ir::Call>()) return Unary(*op, ops);
    return Status::Unimplemented("oneDNN has no post-op for '" + ir::ToString(e) + "'");
  }

 private:
  bool Contains(const Expr& e) const {
    CoreFinder finder(is_core_);
    finder.Visit(e);
    return finder.found;
  }

  Status Then(const Expr& inner, PostOp op, std::vector<PostOp>* ops) {
    TF_RETURN_IF_ERROR(Read(inner, ops));
    // linear(a2, b2) after linear(a1, b1) is linear(a2 a1, a2 b1 + b2).
    if (op.algorithm == "linear" && !ops->empty() && ops->back().algorithm == "linear" &&
        ops->back().kind == PostOp::Kind::kEltwise) {
      PostOp& prev = ops->back();
      prev.beta = op.alpha * prev.beta + op.beta;
      prev.alpha = op.alpha * prev.alpha;
      return Status::OK();
    }
    ops->push_back(std::move(op));
    return Status::OK();
  }

  // A binary operator with the core on one side: a constant other side is a
  // linear (or pow) eltwise, a tensor other side a binary post-op.
  Status Arith(const char* alg, const Expr& a, const Expr& b, std::vector<PostOp>* ops) {
    bool in_a = Contains(a), in_b = Contains(b);
    std::string op_name = alg;
    if (in_a && in_b) return Status::Unimplemented("both operands of a " + op_name + " read the anchor's value");
    const Expr& inner = in_a ? a : b;
    const Expr& other = in_a ? b : a;
    if (std::optional<double> c = Imm(other)) {
      float v = float(*c);
      if (op_name == "add") return Then(inner, Eltwise("linear", 1, v), ops);
      if (op_name == "sub") return Then(inner, in_a ? Eltwise("linear", 1, -v) : Eltwise("linear", -1, v), ops);
      if (op_name == "mul") return Then(inner, Eltwise("linear", v, 0), ops);
      // div: x / c scales; c / x is oneDNN's pow with exponent -1.
      if (op_name == "div") return Then(inner, in_a ? Eltwise("linear", float(1.0 / *c), 0) : Eltwise("pow", v, -1), ops);
      return Status::Unimplemented("a " + op_name + " with the constant " + ir::ToString(other));
    }
    const auto* load = other.as<ir::Load>();
    bool is_input = false;
    for (const ir::Buffer& in : w_.inputs) is_input |= load != nullptr && in.get() == load->buffer.get();
    if (!is_input) {
      return Status::Unimplemented("the " + op_name + "'s operand '" + ir::ToString(other) +
                                   "' is not a tensor oneDNN can read as a binary post-op");
    }
    if (!in_a && (op_name == "sub" || op_name == "div")) {
      return Status::Unimplemented("oneDNN's binary_" + op_name + " post-op takes the anchor's value first, not '" +
                                   ir::ToString(other) + "'");
    }
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(*load, stage_));
    PostOp op;
    op.kind = PostOp::Kind::kBinary;
    op.algorithm = op_name;
    op.input = load->buffer->name;
    op.dims = std::move(dims);
    return Then(inner, std::move(op), ops);
  }

  // max(x, lo), min(x, hi), min(max(x, lo), hi) and max(min(x, hi), lo).
  Status Clamp(const Expr& a, const Expr& b, bool is_max, std::vector<PostOp>* ops) {
    std::optional<double> bound = Imm(b) ? Imm(b) : Imm(a);
    if (!bound) return Arith(is_max ? "max" : "min", a, b, ops);
    const Expr& x = Imm(b) ? a : b;
    double lo = is_max ? *bound : -FLT_MAX, hi = is_max ? FLT_MAX : *bound;
    Expr inner = x;
    const auto* nested_max = is_max ? nullptr : x.as<ir::Max>();
    const auto* nested_min = is_max ? x.as<ir::Min>() : nullptr;
    if (nested_max && (Imm(nested_max->a) || Imm(nested_max->b))) {
      lo = Imm(nested_max->b) ? *Imm(nested_max->b) : *Imm(nested_max->a);
      inner = Imm(nested_max->b) ? nested_max->a : nested_max->b;
    } else if (nested_min && (Imm(nested_min->a) || Imm(nested_min->b))) {
      hi = Imm(nested_min->b) ? *Imm(nested_min->b) : *Imm(nested_min->a);
      inner = Imm(nested_min->b) ? nested_min->a : nested_min->b;
    }
    if (lo == 0 && hi == FLT_MAX) return Then(inner, Eltwise("relu", 0, 0), ops);
    return Then(inner, Eltwise("clip", float(lo), float(hi)), ops);
  }

  // select(x > 0, x, x * a): LeakyRelu, oneDNN's relu with a negative slope.
  Status LeakyRelu(const Expr& e, const ir::Select& s, std::vector<PostOp>* ops) {
    const auto* gt = s.condition.as<ir::GT>();
    const auto* neg = s.false_value.as<ir::Mul>();
    if (gt && neg && IsZero(gt->b) && Imm(neg->b) && ir::ExprEqual(gt->a, s.true_value) &&
        ir::ExprEqual(neg->a, s.true_value)) {
      return Then(s.true_value, Eltwise("relu", float(*Imm(neg->b)), 0), ops);
    }
    return Status::Unimplemented("oneDNN has no post-op for '" + ir::ToString(e) + "'");
  }

  Status Unary(const ir::Call& c, std::vector<PostOp>* ops) {
    const Expr& x = c.args[0];
    switch (c.op) {
      case ir::CallOp::kSigmoid: return Then(x, Eltwise("logistic"), ops);
      case ir::CallOp::kTanh: return Then(x, Eltwise("tanh"), ops);
      case ir::CallOp::kExp: return Then(x, Eltwise("exp"), ops);
      case ir::CallOp::kLog: return Then(x, Eltwise("log"), ops);
      case ir::CallOp::kSqrt: return Then(x, Eltwise("sqrt"), ops);
      case ir::CallOp::kAbs: return Then(x, Eltwise("abs"), ops);
      case ir::CallOp::kRsqrt: return Then(x, Eltwise("pow", 1, -0.5f), ops);
      case ir::CallOp::kPow:
        if (std::optional<double> p = Imm(c.args[1])) return Then(x, Eltwise("pow", 1, float(*p)), ops);
        break;
      case ir::CallOp::kErf:
      case ir::CallOp::kFloor:
      case ir::CallOp::kCeil: break;
    }
    return Status::Unimplemented(std::string("oneDNN 2.6 has no ") + ir::CallOpName(c.op) + " post-op");
  }

  // x * (erf(x / sqrt 2) + 1) * 0.5 in any grouping of its three factors: x.
  std::optional<Expr> GeluArgument(const Expr& e) const {
    const auto* top = e.as<ir::Mul>();
    if (top == nullptr) return std::nullopt;
    std::vector<std::vector<Expr>> groupings;
    if (const auto* p = top->a.as<ir::Mul>()) groupings.push_back({p->a, p->b, top->b});
    if (const auto* q = top->b.as<ir::Mul>()) groupings.push_back({top->a, q->a, q->b});
    for (const std::vector<Expr>& f : groupings) {
      for (size_t half = 0; half < 3; ++half) {
        if (!Near(Imm(f[half]), 0.5)) continue;
        for (size_t erf1 = 0; erf1 < 3; ++erf1) {
          if (erf1 == half) continue;
          size_t x = 3 - half - erf1;  // the third factor
          const auto* add = f[erf1].as<ir::Add>();
          if (add == nullptr || (!Near(Imm(add->b), 1) && !Near(Imm(add->a), 1))) continue;
          const auto* erf = (Near(Imm(add->b), 1) ? add->a : add->b).as<ir::Call>();
          if (erf == nullptr || erf->op != ir::CallOp::kErf) continue;
          const Expr& arg = erf->args[0];
          const auto* div = arg.as<ir::Div>();
          const auto* mul = arg.as<ir::Mul>();
          bool scaled = (div && Near(Imm(div->b), std::sqrt(2.0)) && ir::ExprEqual(div->a, f[x])) ||
                        (mul && Near(Imm(mul->b), std::sqrt(0.5)) && ir::ExprEqual(mul->a, f[x]));
          if (scaled) return f[x];
        }
      }
    }
    return std::nullopt;
  }

  // x * max(0, min(1, x * (1/6) + 0.5)): HardSwish.
  std::optional<Expr> HardSwishArgument(const Expr& e) const {
    const auto* top = e.as<ir::Mul>();
    if (top == nullptr) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Expr& x = side == 0 ? top->a : top->b;
      const auto* mx = (side == 0 ? top->b : top->a).as<ir::Max>();
      if (mx == nullptr || !IsZero(mx->a)) continue;
      const auto* mn = mx->b.as<ir::Min>();
      if (mn == nullptr || !Near(Imm(mn->a), 1)) continue;
      const auto* add = mn->b.as<ir::Add>();
      const auto* scale = add ? add->a.as<ir::Mul>() : nullptr;
      if (scale && Near(Imm(add->b), 0.5) && Near(Imm(scale->b), 1.0 / 6) && ir::ExprEqual(scale->a, x)) return x;
    }
    return std::nullopt;
  }

  const Workload& w_;
  const ComputeStage& stage_;
  const CoreMatcher& is_core_;
};

}  // namespace

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string PostOp::Describe() const {
  if (kind == Kind::kBinary) return "binary_" + algorithm + "(" + input + " " + DimsText(dims) + ")";
  if (kind == Kind::kSum) return "sum(" + input + ")";
  auto num = [](float v) {
    if (v == FLT_MAX) return std::string("inf");
    if (v == -FLT_MAX) return std::string("-inf");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(v));
    return std::string(buf);
  };
  std::string s = "eltwise_" + algorithm;
  if (algorithm == "clip" || algorithm == "linear" || algorithm == "pow") s += "(" + num(alpha) + ", " + num(beta) + ")";
  if (algorithm == "relu" && alpha != 0) s += "(" + num(alpha) + ")";
  return s;
}

Result<std::vector<PostOp>> ReadPostOps(const Workload& w, const ComputeStage& stage, const CoreMatcher& is_core) {
  std::vector<PostOp> ops;
  Reader reader(w, stage, is_core);
  TF_RETURN_IF_ERROR(reader.Read(stage.body, &ops));
  return ops;
}

bool IsIdentityIndex(const std::vector<ir::Expr>& indices, const ComputeStage& stage) {
  if (indices.size() != stage.axes.size()) return false;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (const auto* v = indices[d].as<ir::Variable>(); v && v == stage.axes[d].get()) continue;
    if (const int64_t* c = ir::AsConstInt(indices[d]); c && *c == 0 && stage.output->shape[d] == 1) continue;
    return false;
  }
  return true;
}

Result<std::vector<int64_t>> BroadcastDims(const ir::Load& load, const ComputeStage& stage) {
  std::vector<int64_t> dims(stage.axes.size(), 1);
  const std::vector<int64_t>& shape = load.buffer->shape;
  int last = -1;  // the output dim of the previous indexed dim: the order must be kept
  for (size_t p = 0; p < load.indices.size(); ++p) {
    if (const int64_t* c = ir::AsConstInt(load.indices[p]); c && *c == 0 && shape[p] == 1) continue;
    const auto* v = load.indices[p].as<ir::Variable>();
    int d = -1;
    for (size_t a = 0; v != nullptr && a < stage.axes.size(); ++a) {
      if (stage.axes[a].get() == v) d = int(a);
    }
    if (d <= last || shape[p] != stage.output->shape[size_t(d)]) {
      return Status::Unimplemented("'" + load.buffer->name + "' is read at '" + ir::ToString(load.indices[p]) +
                                   "': not a broadcast oneDNN's binary post-op takes");
    }
    dims[size_t(d)] = shape[p];
    last = d;
  }
  return dims;
}

}  // namespace tunefarm::bench
