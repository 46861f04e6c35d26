// PrintWorkload: the canonical text of a workload.
//
// Canonical means: shapes and extents as numbers (every output axis gets an
// explicit extent), minimal parentheses, shortest round-tripping float
// literals, and literals spelt so that the parser's typing rules
// (workload_expr_builder.cpp) give them back their exact type: a literal tree
// next to a typed operand is written bare (it adopts that type); a literal
// tree on its own is bare only if it is i64 or f32 (the defaults), otherwise
// each literal is written as a typed cast such as i32(5) or f16(0.5).
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "workload_ast.h"
#include "workload_ir_util.h"

namespace tunefarm {
namespace {

using ir::DataType;
using ir::Expr;
using ir::IRNodeKind;

constexpr int kAtomPrec = 7;
constexpr int kUnaryPrec = 6;

struct Printed {
  std::string text;
  int prec;
};

const char* CallName(ir::CallOp op) {
  switch (op) {
    case ir::CallOp::kExp: return "exp";
    case ir::CallOp::kLog: return "log";
    case ir::CallOp::kSqrt: return "sqrt";
    case ir::CallOp::kRsqrt: return "rsqrt";
    case ir::CallOp::kTanh: return "tanh";
    case ir::CallOp::kSigmoid: return "sigmoid";
    case ir::CallOp::kAbs: return "abs";
    case ir::CallOp::kPow: return "pow";
    case ir::CallOp::kFloor: return "floor";
    case ir::CallOp::kCeil: return "ceil";
    case ir::CallOp::kErf: return "erf";
  }
  return "unknown_call";
}

// Operator spelling and precedence of infix nodes (0 when not infix).
int InfixOf(IRNodeKind k, const char** text) {
  switch (k) {
    case IRNodeKind::kOr: *text = "||"; return 1;
    case IRNodeKind::kAnd: *text = "&&"; return 2;
    case IRNodeKind::kEQ: *text = "=="; return 3;
    case IRNodeKind::kNE: *text = "!="; return 3;
    case IRNodeKind::kLT: *text = "<"; return 3;
    case IRNodeKind::kLE: *text = "<="; return 3;
    case IRNodeKind::kGT: *text = ">"; return 3;
    case IRNodeKind::kGE: *text = ">="; return 3;
    case IRNodeKind::kAdd: *text = "+"; return 4;
    case IRNodeKind::kSub: *text = "-"; return 4;
    case IRNodeKind::kMul: *text = "*"; return 5;
    case IRNodeKind::kDiv: *text = "/"; return 5;
    case IRNodeKind::kMod: *text = "%"; return 5;
    default: return 0;
  }
}

bool IsImm(const Expr& e) { return e.kind() == IRNodeKind::kIntImm || e.kind() == IRNodeKind::kFloatImm; }

// The IR counterpart of the parser's literal trees.
bool IsLiteralTree(const Expr& e) {
  if (IsImm(e)) return true;
  if (!wl::IsArithmetic(e.kind())) return false;
  for (const Expr& c : wl::ExprChildren(e)) {
    if (!IsLiteralTree(c)) return false;
  }
  return true;
}

std::string FloatText(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");  // not parseable
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Sub(0, x) is what the parser builds for `-x` when x is not a single
// literal; printing it back as `-x` keeps the text as shallow as the source.
bool IsNegation(const Expr& e) {
  const auto* sub = e.as<ir::BinaryNode<IRNodeKind::kSub>>();
  if (!sub || IsImm(sub->b) || !(e.dtype().is_float() || e.dtype().is_int())) return false;
  if (const auto* i = sub->a.as<ir::IntImm>()) return i->value == 0;
  if (const auto* f = sub->a.as<ir::FloatImm>()) return std::bit_cast<uint64_t>(f->value) == 0;
  return false;
}

class ExprPrinter {
 public:
  Printed Print(const Expr& e, std::optional<DataType> implied) {
    if (!e.defined()) return {"<undefined>", kAtomPrec};
    if (IsLiteralTree(e)) {
      DataType t = e.dtype();
      bool bare = (implied && *implied == t) || t == DataType::Int(64) || t == DataType::Float(32);
      return PrintLiteralTree(e, bare);
    }
    const char* op_text = nullptr;
    int prec = InfixOf(e.kind(), &op_text);
    std::vector<Expr> children = wl::ExprChildren(e);
    if (IsNegation(e)) return {"-" + Wrap(Print(children[1], std::nullopt), kUnaryPrec), kUnaryPrec};
    if (prec > 0) {
      Printed a, b;
      PrintPair(children[0], children[1], &a, &b);
      return {Wrap(a, prec) + " " + op_text + " " + Wrap(b, prec + 1), prec};
    }
    switch (e.kind()) {
      case IRNodeKind::kVariable: return {e.as<ir::Variable>()->name, kAtomPrec};
      case IRNodeKind::kMin:
      case IRNodeKind::kMax: {
        Printed a, b;
        PrintPair(children[0], children[1], &a, &b);
        return {std::string(e.kind() == IRNodeKind::kMin ? "min(" : "max(") + a.text + ", " + b.text + ")",
                kAtomPrec};
      }
      case IRNodeKind::kNot: return {"!" + Wrap(Print(children[0], std::nullopt), kUnaryPrec), kUnaryPrec};
      case IRNodeKind::kSelect: {
        Printed c = Print(children[0], std::nullopt);
        Printed a, b;
        PrintPair(children[1], children[2], &a, &b);
        return {"select(" + c.text + ", " + a.text + ", " + b.text + ")", kAtomPrec};
      }
      case IRNodeKind::kCast: {
        const Expr& v = children[0];
        std::string inner = IsImm(v) ? TypedImm(v) : Print(v, std::nullopt).text;
        return {wl::DTypeName(e.dtype()) + "(" + inner + ")", kAtomPrec};
      }
      case IRNodeKind::kLoad: {
        const auto* op = e.as<ir::Load>();
        std::string s = (op->buffer ? op->buffer->name : std::string("<null>")) + "[";
        for (size_t i = 0; i < children.size(); ++i) {
          s += (i ? ", " : "") + Print(children[i], DataType::Index()).text;
        }
        return {s + "]", kAtomPrec};
      }
      case IRNodeKind::kCall: {
        const auto* op = e.as<ir::Call>();
        std::string s = std::string(CallName(op->op)) + "(";
        if (children.size() == 2) {
          Printed a, b;
          PrintPair(children[0], children[1], &a, &b);
          s += a.text + ", " + b.text;
        } else {
          for (size_t i = 0; i < children.size(); ++i) {
            s += (i ? ", " : "") + Print(children[i], std::nullopt).text;
          }
        }
        return {s + ")", kAtomPrec};
      }
      default: return {"<unprintable>", kAtomPrec};
    }
  }

 private:
  static std::string Wrap(const Printed& p, int min_prec) {
    return p.prec < min_prec ? "(" + p.text + ")" : p.text;
  }

  // Two operands of one type: a literal tree next to a typed operand is bare.
  void PrintPair(const Expr& a, const Expr& b, Printed* pa, Printed* pb) {
    bool la = IsLiteralTree(a), lb = IsLiteralTree(b);
    std::optional<DataType> ia, ib;
    if (la && !lb) ia = a.dtype();
    if (lb && !la) ib = b.dtype();
    *pa = Print(a, ia);
    *pb = Print(b, ib);
  }

  static std::string BareImm(const Expr& e) {
    if (const auto* i = e.as<ir::IntImm>()) return std::to_string(i->value);
    return FloatText(e.as<ir::FloatImm>()->value);
  }
  static std::string TypedImm(const Expr& e) { return wl::DTypeName(e.dtype()) + "(" + BareImm(e) + ")"; }

  Printed PrintLiteralTree(const Expr& e, bool bare) {
    if (IsImm(e)) {
      if (!bare) return {TypedImm(e), kAtomPrec};
      std::string s = BareImm(e);
      return {s, s[0] == '-' ? kUnaryPrec : kAtomPrec};
    }
    std::vector<Expr> children = wl::ExprChildren(e);
    Printed a = PrintLiteralTree(children[0], bare);
    Printed b = PrintLiteralTree(children[1], bare);
    if (e.kind() == IRNodeKind::kMin || e.kind() == IRNodeKind::kMax) {
      return {std::string(e.kind() == IRNodeKind::kMin ? "min(" : "max(") + a.text + ", " + b.text + ")",
              kAtomPrec};
    }
    const char* op_text = nullptr;
    int prec = InfixOf(e.kind(), &op_text);
    return {Wrap(a, prec) + " " + op_text + " " + Wrap(b, prec + 1), prec};
  }
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace

std::string PrintWorkload(const Workload& w) {
  std::string out = "workload " + w.name + "(";
  for (size_t i = 0; i < w.params.size(); ++i) {
    out += (i ? ", " : "") + w.params[i].first + " = " + std::to_string(w.params[i].second);
  }
  out += ") {\n";
  for (const ir::Buffer& b : w.inputs) {
    if (!b) continue;
    out += "  " + b->name + " = input " + (b->constant ? "const " : "") + wl::DTypeName(b->dtype) + "[" + ShapeText(b->shape) + "]\n";
  }
  ExprPrinter printer;
  for (const ComputeStage& s : w.stages) {
    if (!s.output) continue;
    out += "  " + s.output->name + "[";
    for (size_t i = 0; i < s.axes.size(); ++i) {
      out += (i ? ", " : "") + (s.axes[i].defined() ? s.axes[i].name() : std::string("?")) + ": " +
             (i < s.output->shape.size() ? std::to_string(s.output->shape[i]) : std::string("?"));
    }
    out += "] = ";
    if (s.reduce != ReduceKind::kNone) {
      out += std::string(ReduceKindName(s.reduce)) + "(";
      for (size_t i = 0; i < s.reduce_axes.size(); ++i) {
        out += (i ? ", " : "") + (s.reduce_axes[i].defined() ? s.reduce_axes[i].name() : std::string("?")) +
               ": " + (i < s.reduce_extents.size() ? std::to_string(s.reduce_extents[i]) : std::string("?"));
      }
      out += ") ";
    }
    out += printer.Print(s.body, std::nullopt).text + "\n";
  }
  if (!w.outputs.empty()) {
    out += "  output ";
    for (size_t i = 0; i < w.outputs.size(); ++i) {
      out += (i ? ", " : "") + (w.outputs[i] ? w.outputs[i]->name : std::string("?"));
    }
    out += "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace tunefarm
