// Stage bodies: syntax tree -> typed IR, with the language's type rules and
// the static check of every tensor access.
//
// Map: literal trees (BuildLiteral) -> operators (BuildUnary, BuildBinary)
// -> calls (BuildCall: select, min/max, math, casts) -> accesses (BuildAccess,
// with the range check).
//
// Typing: a *literal tree* is an expression made only of number literals,
// parameters, unary minus, + - * / % and min/max. It has no type of its own:
// it adopts the type of the operand it is combined with (so in `x * 2` with
// f32 x the 2 is an f32 immediate), and alone it is f32 if it holds a float
// literal, i64 otherwise. Everything else must match exactly; a mismatch asks
// for a cast. A cast of a single literal (`i32(5)`, `f16(-0.5)`) builds an
// immediate of that type, which is how the printer writes typed constants.
#include <algorithm>
#include <cfloat>
#include <optional>

#include "workload_ir_util.h"
#include "workload_sema.h"

namespace tunefarm::wl {
namespace {

using ir::DataType;
using ir::Expr;

struct Literal {
  bool is_float = false;
  int64_t i = 0;
  double d = 0.0;
};

bool IsArithOp(Tok op) {
  return op == Tok::kPlus || op == Tok::kMinus || op == Tok::kStar || op == Tok::kSlash ||
         op == Tok::kPercent;
}

const char* OpText(Tok op) {
  switch (op) {
    case Tok::kPlus: return "+";
    case Tok::kMinus: return "-";
    case Tok::kStar: return "*";
    case Tok::kSlash: return "/";
    case Tok::kPercent: return "%";
    case Tok::kLt: return "<";
    case Tok::kLe: return "<=";
    case Tok::kGt: return ">";
    case Tok::kGe: return ">=";
    case Tok::kEq: return "==";
    case Tok::kNe: return "!=";
    case Tok::kAndAnd: return "&&";
    case Tok::kOrOr: return "||";
    case Tok::kBang: return "!";
    default: return "?";
  }
}

bool ParseMathName(std::string_view name, ir::CallOp* op, int* arity) {
  struct Entry {
    std::string_view name;
    ir::CallOp op;
  };
  static constexpr Entry kOps[] = {
      {"exp", ir::CallOp::kExp},     {"log", ir::CallOp::kLog},         {"sqrt", ir::CallOp::kSqrt},
      {"rsqrt", ir::CallOp::kRsqrt}, {"tanh", ir::CallOp::kTanh},       {"sigmoid", ir::CallOp::kSigmoid},
      {"abs", ir::CallOp::kAbs},     {"pow", ir::CallOp::kPow},         {"floor", ir::CallOp::kFloor},
      {"ceil", ir::CallOp::kCeil},   {"erf", ir::CallOp::kErf},
  };
  for (const Entry& e : kOps) {
    if (e.name == name) {
      *op = e.op;
      *arity = e.op == ir::CallOp::kPow ? 2 : 1;
      return true;
    }
  }
  return false;
}

class ExprBuilder {
 public:
  explicit ExprBuilder(const StageScope& scope) : s_(scope) {}

  Result<Expr> Build(const AstExpr& e, std::optional<DataType> hint) {
    if (IsLiteralTree(e)) return BuildLiteral(e, hint ? *hint : DefaultType(e));
    switch (e.kind) {
      case AstExpr::Kind::kName: return BuildName(e);
      case AstExpr::Kind::kAccess: return BuildAccess(e);
      case AstExpr::Kind::kUnary: return BuildUnary(e);
      case AstExpr::Kind::kBinary: return BuildBinary(e);
      case AstExpr::Kind::kCall: return BuildCall(e);
      default: return Error(e.pos, "unexpected expression, expected a value");
    }
  }

 private:
  Status Error(SourcePos pos, const std::string& message) const {
    return ErrorAt(*s_.source, pos, message);
  }
  bool IsParam(std::string_view name) const {
    return s_.axes.find(name) == s_.axes.end() && s_.params->find(name) != s_.params->end();
  }

  // ------------------------------------------------------------ literals

  bool IsLiteralTree(const AstExpr& e) const {
    switch (e.kind) {
      case AstExpr::Kind::kInt:
      case AstExpr::Kind::kFloat: return true;
      case AstExpr::Kind::kName: return IsParam(e.text);
      case AstExpr::Kind::kUnary: return e.op == Tok::kMinus && IsLiteralTree(*e.args[0]);
      case AstExpr::Kind::kBinary:
        return IsArithOp(e.op) && IsLiteralTree(*e.args[0]) && IsLiteralTree(*e.args[1]);
      case AstExpr::Kind::kCall:
        return (e.text == "min" || e.text == "max") && e.args.size() == 2 &&
               IsLiteralTree(*e.args[0]) && IsLiteralTree(*e.args[1]);
      default: return false;
    }
  }
  bool IsSingleLiteral(const AstExpr& e) const {
    if (e.kind == AstExpr::Kind::kUnary) return e.op == Tok::kMinus && IsSingleLiteral(*e.args[0]);
    return e.kind == AstExpr::Kind::kInt || e.kind == AstExpr::Kind::kFloat ||
           (e.kind == AstExpr::Kind::kName && IsParam(e.text));
  }
  bool HasFloatLiteral(const AstExpr& e) const {
    if (e.kind == AstExpr::Kind::kFloat) return true;
    for (const AstExprPtr& a : e.args) {
      if (HasFloatLiteral(*a)) return true;
    }
    return false;
  }
  DataType DefaultType(const AstExpr& e) const {
    return HasFloatLiteral(e) ? DataType::Float(32) : DataType::Int(64);
  }
  Literal SingleValue(const AstExpr& e) const {
    if (e.kind == AstExpr::Kind::kUnary) {
      Literal v = SingleValue(*e.args[0]);
      v.i = -v.i;  // literals and parameters are >= 0 here, so this cannot overflow
      v.d = -v.d;
      return v;
    }
    if (e.kind == AstExpr::Kind::kFloat) return {true, 0, e.float_value};
    if (e.kind == AstExpr::Kind::kName) return {false, s_.params->find(e.text)->second, 0.0};
    return {false, e.int_value, 0.0};
  }

  Result<Expr> MakeImmediate(const Literal& v, DataType t, SourcePos pos) const {
    std::string shown = v.is_float ? std::to_string(v.d) : std::to_string(v.i);
    if (t.is_bool()) {
      return Error(pos, "number " + shown + " where a bool is expected, expected a comparison such as x > 0");
    }
    if (t.is_float()) {
      double d = v.is_float ? v.d : static_cast<double>(v.i);
      double limit = t.bits == 16 ? 65504.0 : t.bits == 32 ? double(FLT_MAX) : DBL_MAX;
      if (d > limit || d < -limit) {
        return Error(pos, "literal " + shown + " does not fit in " + DTypeName(t) +
                              ", expected a value of magnitude at most " + std::to_string(limit));
      }
      return ir::FloatImm::Make(t, d);
    }
    if (v.is_float) {
      return Error(pos, "float literal where an " + DTypeName(t) +
                            " value is expected, expected an integer literal or a cast");
    }
    int64_t lo, hi;
    if (t.is_uint()) {
      lo = 0;
      hi = t.bits >= 63 ? INT64_MAX : (int64_t{1} << t.bits) - 1;
    } else {
      lo = t.bits >= 64 ? INT64_MIN : -(int64_t{1} << (t.bits - 1));
      hi = t.bits >= 64 ? INT64_MAX : (int64_t{1} << (t.bits - 1)) - 1;
    }
    if (v.i < lo || v.i > hi) {
      return Error(pos, "integer literal " + shown + " does not fit in " + DTypeName(t) +
                            ", expected a value in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    }
    return ir::IntImm::Make(t, v.i);
  }

  Result<Expr> BuildLiteral(const AstExpr& e, DataType t) {
    if (IsSingleLiteral(e)) return MakeImmediate(SingleValue(e), t, e.start);
    if (e.kind == AstExpr::Kind::kUnary) {
      TF_ASSIGN_OR_RETURN(Expr x, BuildLiteral(*e.args[0], t));
      return Negate(x, e.pos);
    }
    TF_ASSIGN_OR_RETURN(Expr a, BuildLiteral(*e.args[0], t));
    TF_ASSIGN_OR_RETURN(Expr b, BuildLiteral(*e.args[1], t));
    if (e.kind == AstExpr::Kind::kCall) return e.text == "min" ? ir::Min::Make(a, b) : ir::Max::Make(a, b);
    return MakeArith(e.op, a, b, e.pos);
  }

  // ----------------------------------------------------------- operators

  static std::string CastHint(DataType a, DataType b) {
    DataType target = b.is_float() && !a.is_float() ? b : a;
    return DTypeName(target) + "(...)";
  }

  Status CheckSameType(const char* what, const Expr& a, const Expr& b, SourcePos pos) const {
    if (a.dtype() == b.dtype()) return Status::OK();
    return Error(pos, std::string("type mismatch: ") + DTypeName(a.dtype()) + " " + what + " " +
                          DTypeName(b.dtype()) +
                          ", expected operands of one type; insert a cast such as " +
                          CastHint(a.dtype(), b.dtype()));
  }

  Result<Expr> Negate(const Expr& x, SourcePos pos) {
    DataType t = x.dtype();
    if (t.is_bool() || t.is_uint()) {
      return Error(pos, "unary '-' of a " + DTypeName(t) + " value, expected a signed integer or float");
    }
    Expr zero = t.is_float() ? ir::FloatImm::Make(t, 0.0) : ir::IntImm::Make(t, 0);
    return ir::Sub::Make(zero, x);
  }

  Result<Expr> MakeArith(Tok op, const Expr& a, const Expr& b, SourcePos pos) {
    DataType t = a.dtype();
    if (t.is_bool()) {
      return Error(pos, std::string("'") + OpText(op) + "' of bool values, expected numbers");
    }
    if (op == Tok::kPercent && t.is_float()) {
      return Error(pos, "'%' of " + DTypeName(t) + " values, expected integer operands");
    }
    if ((op == Tok::kSlash || op == Tok::kPercent) && t.is_integer()) {
      const auto* imm = b.as<ir::IntImm>();
      if (imm && imm->value == 0) return Error(pos, "integer division by zero, expected a non-zero divisor");
    }
    switch (op) {
      case Tok::kPlus: return ir::Add::Make(a, b);
      case Tok::kMinus: return ir::Sub::Make(a, b);
      case Tok::kStar: return ir::Mul::Make(a, b);
      case Tok::kSlash: return ir::Div::Make(a, b);
      default: return ir::Mod::Make(a, b);
    }
  }

  // Builds two operands that must end up with one type: a literal tree adopts
  // the other operand's type; two literal trees take `hint` or their default.
  Status BuildPair(const AstExpr& a, const AstExpr& b, std::optional<DataType> hint, Expr* xa, Expr* xb) {
    bool la = IsLiteralTree(a), lb = IsLiteralTree(b);
    if (la && lb) {
      DataType t = hint ? *hint
                        : (HasFloatLiteral(a) || HasFloatLiteral(b) ? DataType::Float(32) : DataType::Int(64));
      TF_ASSIGN_OR_RETURN(*xa, BuildLiteral(a, t));
      TF_ASSIGN_OR_RETURN(*xb, BuildLiteral(b, t));
    } else if (la) {
      TF_ASSIGN_OR_RETURN(*xb, Build(b, std::nullopt));
      TF_ASSIGN_OR_RETURN(*xa, BuildLiteral(a, xb->dtype()));
    } else {
      TF_ASSIGN_OR_RETURN(*xa, Build(a, std::nullopt));
      if (lb) {
        TF_ASSIGN_OR_RETURN(*xb, BuildLiteral(b, xa->dtype()));
      } else {
        TF_ASSIGN_OR_RETURN(*xb, Build(b, std::nullopt));
      }
    }
    return Status::OK();
  }

  Result<Expr> BuildUnary(const AstExpr& e) {
    TF_ASSIGN_OR_RETURN(Expr x, Build(*e.args[0], std::nullopt));
    if (e.op == Tok::kMinus) return Negate(x, e.pos);
    if (!x.dtype().is_bool()) {
      return Error(e.pos, "'!' of a " + DTypeName(x.dtype()) + " value, expected a bool operand");
    }
    return ir::Not::Make(x);
  }

  Result<Expr> BuildBinary(const AstExpr& e) {
    if (e.op == Tok::kAndAnd || e.op == Tok::kOrOr) {
      TF_ASSIGN_OR_RETURN(Expr a, Build(*e.args[0], std::nullopt));
      TF_ASSIGN_OR_RETURN(Expr b, Build(*e.args[1], std::nullopt));
      if (!a.dtype().is_bool() || !b.dtype().is_bool()) {
        return Error(e.pos, std::string("'") + OpText(e.op) + "' of " + DTypeName(a.dtype()) +
                                " and " + DTypeName(b.dtype()) + ", expected bool operands (comparisons)");
      }
      return e.op == Tok::kAndAnd ? ir::And::Make(a, b) : ir::Or::Make(a, b);
    }
    Expr a, b;
    TF_RETURN_IF_ERROR(BuildPair(*e.args[0], *e.args[1], std::nullopt, &a, &b));
    TF_RETURN_IF_ERROR(CheckSameType(OpText(e.op), a, b, e.pos));
    if (IsArithOp(e.op)) return MakeArith(e.op, a, b, e.pos);
    if (a.dtype().is_bool() && e.op != Tok::kEq && e.op != Tok::kNe) {
      return Error(e.pos, std::string("'") + OpText(e.op) + "' of bool values, expected numbers");
    }
    switch (e.op) {
      case Tok::kLt: return ir::LT::Make(a, b);
      case Tok::kLe: return ir::LE::Make(a, b);
      case Tok::kGt: return ir::GT::Make(a, b);
      case Tok::kGe: return ir::GE::Make(a, b);
      case Tok::kEq: return ir::EQ::Make(a, b);
      default: return ir::NE::Make(a, b);
    }
  }

  Result<Expr> BuildName(const AstExpr& e) {
    auto axis = s_.axes.find(e.text);
    if (axis != s_.axes.end()) return Expr(axis->second);
    if (s_.tensors->find(e.text) != s_.tensors->end()) {
      return Error(e.pos, "tensor '" + std::string(e.text) + "' used without indices, expected " +
                              std::string(e.text) + "[...]");
    }
    std::string known;
    for (const auto& [name, var] : s_.axes) known += (known.empty() ? "" : ", ") + name;
    return Error(e.pos, "unknown name '" + std::string(e.text) +
                            "', expected an axis of this stage (" + known + ") or a parameter");
  }

  // -------------------------------------------------------------- calls

  Status CheckArity(const AstExpr& e, size_t n) const {
    if (e.args.size() == n) return Status::OK();
    return Error(e.pos, "'" + std::string(e.text) + "' takes " + std::to_string(n) + " argument" +
                            (n == 1 ? "" : "s") + ", expected " + std::to_string(n) + " but got " +
                            std::to_string(e.args.size()));
  }

  Result<Expr> BuildSelect(const AstExpr& e) {
    TF_RETURN_IF_ERROR(CheckArity(e, 3));
    TF_ASSIGN_OR_RETURN(Expr cond, Build(*e.args[0], std::nullopt));
    if (!cond.dtype().is_bool()) {
      return Error(e.args[0]->start, "select condition has type " + DTypeName(cond.dtype()) +
                                         ", expected a bool (a comparison)");
    }
    const AstExpr& ta = *e.args[1];
    const AstExpr& fa = *e.args[2];
    bool lt = IsLiteralTree(ta), lf = IsLiteralTree(fa);
    Expr t, f;
    auto branch = [&](const AstExpr& a, bool holds, std::optional<DataType> hint) -> Result<Expr> {
      facts_.push_back({cond, holds});
      Result<Expr> r = Build(a, hint);
      facts_.pop_back();
      return r;
    };
    if (lt && !lf) {
      TF_ASSIGN_OR_RETURN(f, branch(fa, false, std::nullopt));
      TF_ASSIGN_OR_RETURN(t, branch(ta, true, f.dtype()));
    } else {
      std::optional<DataType> hint;
      if (lt && lf) hint = HasFloatLiteral(ta) || HasFloatLiteral(fa) ? DataType::Float(32) : DataType::Int(64);
      TF_ASSIGN_OR_RETURN(t, branch(ta, true, hint));
      TF_ASSIGN_OR_RETURN(f, branch(fa, false, lf ? std::optional<DataType>(t.dtype()) : std::nullopt));
    }
    TF_RETURN_IF_ERROR(CheckSameType(",", t, f, e.pos));
    return ir::Select::Make(cond, t, f);
  }

  Result<Expr> BuildCall(const AstExpr& e) {
    std::string_view name = e.text;
    if (name == "select") return BuildSelect(e);
    if (name == "min" || name == "max") {
      TF_RETURN_IF_ERROR(CheckArity(e, 2));
      Expr a, b;
      TF_RETURN_IF_ERROR(BuildPair(*e.args[0], *e.args[1], std::nullopt, &a, &b));
      TF_RETURN_IF_ERROR(CheckSameType(",", a, b, e.pos));
      if (a.dtype().is_bool()) return Error(e.pos, "'" + std::string(name) + "' of bool values, expected numbers");
      return name == "min" ? ir::Min::Make(a, b) : ir::Max::Make(a, b);
    }
    ir::CallOp op;
    int arity = 0;
    if (ParseMathName(name, &op, &arity)) {
      TF_RETURN_IF_ERROR(CheckArity(e, static_cast<size_t>(arity)));
      std::vector<Expr> args(static_cast<size_t>(arity));
      if (arity == 2) {
        TF_RETURN_IF_ERROR(BuildPair(*e.args[0], *e.args[1], std::nullopt, &args[0], &args[1]));
        TF_RETURN_IF_ERROR(CheckSameType(",", args[0], args[1], e.pos));
      } else {
        TF_ASSIGN_OR_RETURN(args[0], Build(*e.args[0], std::nullopt));
      }
      DataType t = args[0].dtype();
      bool ok = t.is_float() || (op == ir::CallOp::kAbs && t.is_int());
      if (!ok) {
        return Error(e.pos, "'" + std::string(name) + "' of a " + DTypeName(t) +
                                " value, expected a float argument; insert a cast such as f32(...)");
      }
      return ir::Call::Make(op, std::move(args));
    }
    if (std::optional<DataType> t = ParseDTypeName(name)) {
      TF_RETURN_IF_ERROR(CheckArity(e, 1));
      const AstExpr& arg = *e.args[0];
      if (IsSingleLiteral(arg)) return MakeImmediate(SingleValue(arg), *t, arg.start);
      TF_ASSIGN_OR_RETURN(Expr x, Build(arg, std::nullopt));
      return ir::Cast::Make(*t, x);
    }
    if (s_.tensors->find(name) != s_.tensors->end()) {
      return Error(e.pos, "'" + std::string(name) + "' is a tensor, expected " + std::string(name) +
                              "[...] to read it");
    }
    return Error(e.pos, "unknown function '" + std::string(name) +
                            "', expected select, min, max, a math function (exp log sqrt rsqrt tanh "
                            "sigmoid abs pow floor ceil erf) or a cast (f32, i32, ...)");
  }

  // ------------------------------------------------------------ accesses

  Result<Expr> BuildAccess(const AstExpr& e) {
    std::string name(e.text);
    auto it = s_.tensors->find(name);
    if (it == s_.tensors->end()) {
      if (s_.axes.count(name) || s_.params->count(name)) {
        return Error(e.pos, "'" + name + "' is not a tensor, expected a tensor name before '['");
      }
      return Error(e.pos, "unknown tensor '" + name + "', expected an input or a stage defined above");
    }
    const ir::Buffer& buffer = it->second.buffer;
    if (!buffer) {
      return Error(e.pos, "tensor '" + name + "' is read before it is defined (at " +
                              std::to_string(it->second.pos.line) + ":" +
                              std::to_string(it->second.pos.col) +
                              "), expected a tensor defined above this stage");
    }
    if (e.args.size() != buffer->shape.size()) {
      return Error(e.pos, "'" + name + "' has " + std::to_string(buffer->shape.size()) +
                              " dimensions but is read with " + std::to_string(e.args.size()) +
                              " indices, expected " + std::to_string(buffer->shape.size()));
    }
    std::vector<Expr> indices;
    for (size_t d = 0; d < e.args.size(); ++d) {
      const AstExpr& arg = *e.args[d];
      TF_ASSIGN_OR_RETURN(Expr index, Build(arg, DataType::Index()));
      if (!index.dtype().is_integer()) {
        return Error(arg.start, "index " + std::to_string(d) + " of '" + name + "' has type " +
                                    DTypeName(index.dtype()) + ", expected an integer expression");
      }
      if (!(index.dtype() == DataType::Index())) index = ir::Cast::Make(DataType::Index(), index);
      TF_RETURN_IF_ERROR(CheckInRange(index, name, d, buffer->shape[d], arg.start));
      indices.push_back(index);
    }
    return ir::Load::Make(buffer, std::move(indices));
  }

  // An unguarded index must be provably in range; a guarded one (inside a
  // select whose condition mentions the index's variables) must merely be
  // possibly in range.
  Status CheckInRange(const Expr& index, const std::string& name, size_t d, int64_t extent, SourcePos pos) {
    std::optional<ir::Interval> r = BoundOf(index, s_.ranges, facts_);
    std::string where = "index " + std::to_string(d) + " of '" + name + "'";
    std::string valid = "[0, " + std::to_string(extent - 1) + "]";
    if (r && (r->min > r->max || (r->min >= 0 && r->max < extent))) return Status::OK();
    if (r && (r->max < 0 || r->min >= extent)) {
      return Error(pos, where + " is always out of range: it takes values in [" + std::to_string(r->min) +
                            ", " + std::to_string(r->max) + "], expected " + valid);
    }
    std::vector<const ir::Variable*> index_vars;
    CollectVars(index, &index_vars);
    for (const Fact& f : facts_) {
      if (MentionsAny(f.cond, index_vars)) return Status::OK();
    }
    if (!r) {
      return Error(pos, where + " cannot be bounded, expected an index provably in " + valid +
                            " or an access guarded by select(...)");
    }
    return Error(pos, where + " can be out of range: it takes values in [" + std::to_string(r->min) +
                          ", " + std::to_string(r->max) + "], expected " + valid +
                          "; guard the access with select(...)");
  }

  const StageScope& s_;
  std::vector<Fact> facts_;  // conditions of the enclosing select branches
};

int IrDepth(const Expr& e) {
  int depth = 0;
  for (const Expr& c : ExprChildren(e)) depth = std::max(depth, IrDepth(c));
  return depth + 1;
}

}  // namespace

Result<ir::Expr> BuildStageBody(const AstExpr& body, const StageScope& scope) {
  ExprBuilder builder(scope);
  TF_ASSIGN_OR_RETURN(Expr e, builder.Build(body, std::nullopt));
  // The IR can be a little deeper than the text (index casts), and its
  // canonical print a little deeper again (typed literals): keeping the IR
  // a few levels under the text limit guarantees that PrintWorkload's output
  // parses back.
  if (IrDepth(e) > kMaxDepth - 4) {
    return ErrorAt(*scope.source, body.start,
                   "expression nested too deeply (more than " + std::to_string(kMaxDepth - 4) +
                       " levels once built), expected a simpler expression or intermediate stages");
  }
  return e;
}

}  // namespace tunefarm::wl
