// CudaKernelEmitter: expressions.
//
// Index arithmetic is i64 in the IR. 64-bit integer multiplies and divides
// cost several instructions on a GPU, so an i64 expression whose every
// subexpression has a known bound inside int32 (loop ranges, BoundOf) is
// printed in int; the rest in long long. Integer Div / Mod are floor forms
// (floor_div.h): plain C division where the dividend is known non-negative
// and the divisor a positive constant, the tf_floordiv / tf_floormod helpers
// otherwise.
#include <limits>
#include <utility>

#include "codegen_cuda_internal.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::cuda::detail {

using namespace ir;

namespace {

bool FitsInt32Range(const Interval& r) {
  return r.min >= std::numeric_limits<int32_t>::min() && r.max <= std::numeric_limits<int32_t>::max();
}

// e as x / d with x no division: Div(Div(x, a), b) is x / (a * b) (floor
// division by positive constants composes).
std::pair<Expr, int64_t> DivChain(const Expr& e) {
  const auto* div = e.as<Div>();
  const int64_t* c = div ? AsConstInt(div->b) : nullptr;
  if (!c || *c <= 0) return {e, 1};
  auto [x, d] = DivChain(div->a);
  int64_t total = 0;
  if (__builtin_mul_overflow(d, *c, &total)) return {e, 1};
  return {x, total};
}

// Sums that split an index into a quotient and a remainder and put it back
// together -- (x / c) * c + x % c, which a row-major flattening of [x / c,
// x % c] is -- are x again: floor division and modulo make it exact for
// every x. Applied term by term to the linear form, repeatedly, so
// (x / 3136) * 3136 + ((x / 56) % 56) * 56 + x % 56 is x.
Expr RecombineDivMod(const Expr& e) {
  std::vector<std::pair<Expr, int64_t>> terms;
  if (!Linearize(e, 1, [&](const Expr& term, int64_t scale) {
        terms.emplace_back(term, scale);
        return true;
      })) {
    return e;
  }
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < terms.size() && !again; ++i) {
      const auto* mod = terms[i].first.as<Mod>();
      const int64_t* c = mod ? AsConstInt(mod->b) : nullptr;
      if (!c || *c <= 0) continue;
      auto [x, d] = DivChain(mod->a);
      int64_t quotient_scale = 0, divisor = 0;
      if (__builtin_mul_overflow(terms[i].second, *c, &quotient_scale) || __builtin_mul_overflow(d, *c, &divisor)) continue;
      for (size_t j = 0; j < terms.size(); ++j) {
        if (j == i || terms[j].second != quotient_scale || !terms[j].first.as<Div>()) continue;
        auto [y, dy] = DivChain(terms[j].first);
        if (dy != divisor || !ExprEqual(x, y)) continue;
        // x % c * s + (x / c) * c * s = x * s, with x = mod->a.
        terms[i].first = mod->a;
        terms.erase(terms.begin() + std::ptrdiff_t(j));
        again = changed = true;
        break;
      }
    }
  }
  if (!changed) return e;
  Expr sum = IntImm::Make(e.dtype(), 0);
  for (const auto& [term, scale] : terms) sum = Add::Make(sum, Mul::Make(term, IntImm::Make(e.dtype(), scale)));
  return sum;
}

}  // namespace

std::string CudaKernelEmitter::BufferName(const Buffer& b) { return names_->NameOf(b.get(), b->name); }

void CudaKernelEmitter::NoteRead(const Buffer& b) {
  if (!on_chip_.count(b.get())) reads_.insert(b.get());
}

Expr CudaKernelEmitter::FlatIndex(const Buffer& buffer, const std::vector<Expr>& indices) const {
  Expr flat;
  for (size_t d = 0; d < indices.size(); ++d) {
    flat = d == 0 ? indices[d] : Add::Make(Mul::Make(flat, IntImm::Make(DataType::Index(), buffer->shape[d])), indices[d]);
  }
  if (!flat.defined()) return IntImm::Make(DataType::Index(), 0);
  flat = Simplify(flat, ranges_);
  // Each recombination may expose the next (the quotient it rebuilt is
  // another division's remainder): a few rounds reach every level.
  for (int round = 0; round < 4; ++round) {
    Expr next = RecombineDivMod(flat);
    if (next.same_as(flat)) break;
    flat = Simplify(next, ranges_);
  }
  return flat;
}

bool CudaKernelEmitter::FitsInt32(const Expr& e) const {
  bool fits = true;
  std::function<void(const Expr&)> check = [&](const Expr& x) {
    if (!fits || !x.defined()) return;
    if (x.dtype() == DataType::Index()) {
      if (const auto* v = x.as<Variable>(); v && lane_value_.count(v)) return;
      auto r = BoundOf(x, ranges_);
      if (!r || !FitsInt32Range(*r)) {
        fits = false;
        return;
      }
    }
    // Only the integer arithmetic BoundOf follows can be narrowed.
    if (const auto* op = x.as<Add>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Sub>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Mul>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Div>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Mod>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Min>()) return check(op->a), check(op->b);
    if (const auto* op = x.as<Max>()) return check(op->a), check(op->b);
    if (x.as<IntImm>() || x.as<Variable>()) return;
    fits = false;
  };
  check(e);
  return fits;
}

std::string CudaKernelEmitter::EmitExpr(const Expr& e) { return EmitExprIn(e, false); }

std::string CudaKernelEmitter::StoreValue(const Buffer& buffer, DataType value_type, const std::string& value) {
  DataType t = buffer->dtype;
  if (t.is_float() && t.bits == 16) return "tf_f2h(" + value + ")";
  return value_type == t ? value : "((" + CType(t) + ")" + value + ")";
}

std::string CudaKernelEmitter::EmitIndex(const Expr& e) {
  return EmitExprIn(e, e.dtype() == DataType::Index() && FitsInt32(e));
}

std::string CudaKernelEmitter::EmitVar(const Variable* v, bool narrow) {
  if (auto it = lane_value_.find(v); it != lane_value_.end()) {
    return EmitLiteral(IntImm::Make(v->dtype, it->second), narrow);
  }
  const std::string& name = names_->NameOf(v, v->name);
  if (v->dtype != DataType::Index()) return name;
  auto it = var_is_int_.find(v);
  bool is_int = it != var_is_int_.end() && it->second;
  if (narrow && !is_int) return "((int)" + name + ")";
  if (!narrow && is_int) return "((long long)" + name + ")";
  return name;
}

std::string CudaKernelEmitter::EmitExprIn(const Expr& e, bool narrow) {
  if (!e.defined()) {
    Fail(Status::Internal("cuda codegen: undefined expression"));
    return "0";
  }
  DataType t = e.dtype();
  if (t.lanes != 1 || (t.is_float() && t.bits != 16 && t.bits != 32 && t.bits != 64)) {
    Fail(Status::Unimplemented("cuda codegen: type " + t.ToString() + " is not supported (in " + ToString(e) + ")"));
    return "0";
  }
  // An i64 expression provably inside int32 is printed in int, and widened
  // where its context is 64-bit.
  if (!narrow && t == DataType::Index() && !e.as<IntImm>() && !e.as<Variable>() && FitsInt32(e)) {
    return "((long long)" + EmitExprIn(e, true) + ")";
  }
  switch (e.kind()) {
    case IRNodeKind::kIntImm:
    case IRNodeKind::kFloatImm: return EmitLiteral(e, narrow);
    case IRNodeKind::kVariable: return EmitVar(e.as<Variable>(), narrow);
    case IRNodeKind::kAdd:
    case IRNodeKind::kSub:
    case IRNodeKind::kMul:
    case IRNodeKind::kMin:
    case IRNodeKind::kMax:
    case IRNodeKind::kEQ:
    case IRNodeKind::kNE:
    case IRNodeKind::kLT:
    case IRNodeKind::kLE:
    case IRNodeKind::kGT:
    case IRNodeKind::kGE:
    case IRNodeKind::kAnd:
    case IRNodeKind::kOr: return EmitBinary(e, narrow);
    case IRNodeKind::kDiv: return EmitDivMod(e.as<Div>()->a, e.as<Div>()->b, t, true, narrow);
    case IRNodeKind::kMod: return EmitDivMod(e.as<Mod>()->a, e.as<Mod>()->b, t, false, narrow);
    case IRNodeKind::kNot: return "(!" + EmitExprIn(e.as<Not>()->a, narrow) + ")";
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      return "(" + EmitExpr(op->condition) + " ? " + EmitExprIn(op->true_value, narrow) + " : " +
             EmitExprIn(op->false_value, narrow) + ")";
    }
    case IRNodeKind::kCast: {
      const auto* op = e.as<Cast>();
      std::string v = EmitExpr(op->value);
      if (t.is_bool()) return "(" + v + " != 0)";
      if (t.is_float() && t.bits == 16) return "tf_round_h((float)" + v + ")";
      std::string ct = (narrow && t == DataType::Index()) ? "int" : ValueCType(t);
      if (ct.empty() || CType(op->value.dtype()).empty()) {
        Fail(Status::Unimplemented("cuda codegen: cast " + op->value.dtype().ToString() + " -> " + t.ToString() +
                                   " is not supported"));
      }
      return "((" + ct + ")" + v + ")";
    }
    case IRNodeKind::kLoad: {
      const auto* op = e.as<Load>();
      if (auto it = load_subst_.find(op); it != load_subst_.end()) return it->second;
      NoteRead(op->buffer);
      std::string s = BufferName(op->buffer) + "[" + EmitIndex(FlatIndex(op->buffer, op->indices)) + "]";
      if (t.is_float() && t.bits == 16) return "tf_h2f(" + s + ")";
      return (narrow && t == DataType::Index()) ? "((int)" + s + ")" : s;
    }
    case IRNodeKind::kCall: return EmitCall(e.as<Call>(), narrow);
    TF_STMT_KIND_CASES break;  // not expressions
  }
  Fail(Status::Internal(std::string("cuda codegen: unexpected expression node ") + IRNodeKindName(e.kind())));
  return "0";
}

std::string CudaKernelEmitter::EmitBinary(const Expr& e, bool narrow) {
  DataType t = e.dtype();
  auto pair = [&](const auto* op) {
    // Comparison operands have their own type: compared in int when both fit.
    bool operands_narrow = op->a.dtype() == t ? narrow
                                              : op->a.dtype() == DataType::Index() && FitsInt32(op->a) && FitsInt32(op->b);
    return std::make_pair(EmitExprIn(op->a, operands_narrow), EmitExprIn(op->b, operands_narrow));
  };
  auto infix = [&](const auto* op, const char* sym) {
    auto [a, b] = pair(op);
    std::string s = "(" + a + " " + sym + " " + b + ")";
    // Narrow integer types wrap as the IR's (and C's promotion to int would not).
    if ((t.is_integer()) && t.bits < 32) s = "((" + CType(t) + ")" + s + ")";
    if (t.is_float() && t.bits == 16) s = "tf_round_h" + s;
    return s;
  };
  auto minmax = [&](const auto* op, bool is_min) {
    auto [a, b] = pair(op);
    if (t.is_float()) return std::string(t.bits != 64 ? (is_min ? "fminf(" : "fmaxf(") : (is_min ? "fmin(" : "fmax(")) + a + ", " + b + ")";
    std::string ct = (narrow && t == DataType::Index()) ? "int" : CType(t);
    if (t.bits < 32) ct = t.is_uint() ? "unsigned int" : "int";
    std::string s = std::string(is_min ? "min(" : "max(") + "(" + ct + ")" + a + ", (" + ct + ")" + b + ")";
    return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
  };
  switch (e.kind()) {
    case IRNodeKind::kAdd: return infix(e.as<Add>(), "+");
    case IRNodeKind::kSub: return infix(e.as<Sub>(), "-");
    case IRNodeKind::kMul: return infix(e.as<Mul>(), "*");
    case IRNodeKind::kMin: return minmax(e.as<Min>(), true);
    case IRNodeKind::kMax: return minmax(e.as<Max>(), false);
    case IRNodeKind::kEQ: return infix(e.as<EQ>(), "==");
    case IRNodeKind::kNE: return infix(e.as<NE>(), "!=");
    case IRNodeKind::kLT: return infix(e.as<LT>(), "<");
    case IRNodeKind::kLE: return infix(e.as<LE>(), "<=");
    case IRNodeKind::kGT: return infix(e.as<GT>(), ">");
    case IRNodeKind::kGE: return infix(e.as<GE>(), ">=");
    case IRNodeKind::kAnd: return infix(e.as<And>(), "&&");
    case IRNodeKind::kOr: return infix(e.as<Or>(), "||");
    case IRNodeKind::kIntImm:
    case IRNodeKind::kFloatImm:
    case IRNodeKind::kVariable:
    case IRNodeKind::kDiv:
    case IRNodeKind::kMod:
    case IRNodeKind::kNot:
    case IRNodeKind::kSelect:
    case IRNodeKind::kCast:
    case IRNodeKind::kLoad:
    case IRNodeKind::kCall:
    TF_STMT_KIND_CASES break;
  }
  Fail(Status::Internal(std::string("cuda codegen: not a binary node ") + IRNodeKindName(e.kind())));
  return "0";
}

std::string CudaKernelEmitter::EmitDivMod(const Expr& a, const Expr& b, DataType t, bool is_div, bool narrow) {
  std::string sa = EmitExprIn(a, narrow), sb = EmitExprIn(b, narrow);
  if (t.is_float()) {
    std::string r = is_div ? "(" + sa + " / " + sb + ")"
                           : "(" + sa + " - " + (t.bits != 64 ? "floorf" : "floor") + "(" + sa + " / " + sb + ") * " + sb + ")";
    return t.bits == 16 ? "tf_round_h" + r : r;
  }
  std::string s;
  const int64_t* cb = AsConstInt(b);
  auto ra = BoundOf(a, ranges_);
  bool plain = t.is_uint() || (cb && *cb > 0 && ra && ra->min >= 0);
  if (plain) {
    s = "(" + sa + (is_div ? " / " : " % ") + sb + ")";
  } else {
    s = std::string(is_div ? "tf_floordiv(" : "tf_floormod(") + sa + ", " + sb + ")";
  }
  return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
}

std::string CudaKernelEmitter::EmitCall(const Call* op, bool narrow) {
  DataType t = op->dtype;
  if (!t.is_float()) {  // abs on integers
    std::string x = EmitExprIn(op->args[0], narrow);
    if (op->op != CallOp::kAbs) Fail(Status::Unimplemented(std::string("cuda codegen: ") + CallOpName(op->op) + " on " + t.ToString()));
    if (t.is_uint()) return x;
    std::string s = t.bits == 64 && !narrow ? "llabs(" + x + ")" : "abs(" + x + ")";
    return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
  }
  // f16: the float function, rounded to half.
  if (t.bits == 16) return "tf_round_h(" + EmitFloatCall(op, true) + ")";
  return EmitFloatCall(op, t.bits == 32);
}

std::string CudaKernelEmitter::EmitFloatCall(const Call* op, bool f32) {
  std::string x = EmitExpr(op->args[0]);
  auto fn = [&](const char* name) { return std::string(name) + (f32 ? "f(" : "(") + x + ")"; };
  switch (op->op) {
    case CallOp::kExp: return fn("exp");
    case CallOp::kLog: return fn("log");
    case CallOp::kSqrt: return fn("sqrt");
    case CallOp::kRsqrt: return fn("rsqrt");
    case CallOp::kTanh: return fn("tanh");
    case CallOp::kSigmoid: return f32 ? "(1.0f / (1.0f + expf(-" + x + ")))" : "(1.0 / (1.0 + exp(-" + x + ")))";
    case CallOp::kAbs: return fn("fabs");
    case CallOp::kPow: return std::string(f32 ? "powf(" : "pow(") + x + ", " + EmitExpr(op->args[1]) + ")";
    case CallOp::kFloor: return fn("floor");
    case CallOp::kCeil: return fn("ceil");
    case CallOp::kErf: return fn("erf");
  }
  return "0";
}

}  // namespace tunefarm::cuda::detail
