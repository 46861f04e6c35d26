// CudaKernelEmitter: expressions, C types and names.
//
// Index arithmetic is i64 in the IR. 64-bit integer multiplies and divides
// cost several instructions on a GPU, so an i64 expression whose every
// subexpression has a known bound inside int32 (loop ranges, BoundOf) is
// printed in int; the rest in long long. Integer Div / Mod are floor forms
// (floor_div.h): plain C division where the dividend is known non-negative
// and the divisor a positive constant, the tf_floordiv / tf_floormod helpers
// otherwise.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "codegen_cuda_internal.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::cuda::detail {

using namespace ir;

namespace {

const char* const kReserved[] = {
    "auto", "bool", "break", "case", "char", "const", "continue", "default", "delete", "do", "double", "else",
    "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "new", "register", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "this", "true", "typedef", "union", "unsigned",
    "void", "volatile", "while", "class", "namespace", "template", "typename", "using", "operator", "private",
    "public", "protected", "virtual", "friend", "asm", "half", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "min", "max", "abs", "float2", "float4", "int2", "int4", "uint2", "uint4", "double2",
    "longlong2", "ulonglong2", "dim3", "main", "signbit", "isnan", "isinf"};

bool FitsInt32Range(const Interval& r) {
  return r.min >= std::numeric_limits<int32_t>::min() && r.max <= std::numeric_limits<int32_t>::max();
}

}  // namespace

NameTable::NameTable() {
  for (const char* r : kReserved) used_.insert(r);
}

std::string NameTable::Fresh(const std::string& hint) {
  std::string base;
  for (char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  // Leading digits and underscores (reserved, or the prelude's tf_ helpers) get a prefix.
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])) || base[0] == '_' ||
      base.rfind("tf_", 0) == 0 || base.size() > 64) {
    base = "v_" + base.substr(0, 64);
  }
  std::string name = base;
  for (int k = 1; used_.count(name) || name.find("__") != std::string::npos; ++k) {
    if (name.find("__") != std::string::npos) base = "v" + std::to_string(k);
    name = base + "_" + std::to_string(k);
  }
  used_.insert(name);
  return name;
}

const std::string& NameTable::NameOf(const void* key, const std::string& hint) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  return names_.emplace(key, Fresh(hint)).first->second;
}

std::string CType(DataType t) {
  if (t.lanes != 1) return "";
  switch (t.code) {
    case DataType::Code::kFloat: return t.bits == 32 ? "float" : t.bits == 64 ? "double" : "";
    case DataType::Code::kInt:
      return t.bits == 8 ? "signed char" : t.bits == 16 ? "short" : t.bits == 32 ? "int" : t.bits == 64 ? "long long" : "";
    case DataType::Code::kUInt:
      return t.bits == 8    ? "unsigned char"
             : t.bits == 16 ? "unsigned short"
             : t.bits == 32 ? "unsigned int"
             : t.bits == 64 ? "unsigned long long"
                            : "";
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kHandle: return "";
  }
  return "";
}

const char* CudaPrelude() {
  return R"(// Floor division and modulo (the divisor's sign), as tunefarm's IR defines them.
static __device__ __forceinline__ int tf_floordiv(int a, int b) {
  int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static __device__ __forceinline__ long long tf_floordiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static __device__ __forceinline__ int tf_floormod(int a, int b) { return a - tf_floordiv(a, b) * b; }
static __device__ __forceinline__ long long tf_floormod(long long a, long long b) { return a - tf_floordiv(a, b) * b; }
)";
}

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
  return Simplify(flat, ranges_);
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

std::string CudaKernelEmitter::EmitIndex(const Expr& e) {
  return EmitExprIn(e, e.dtype() == DataType::Index() && FitsInt32(e));
}

std::string CudaKernelEmitter::EmitLiteral(const Expr& e, bool narrow) {
  DataType t = e.dtype();
  if (const auto* imm = e.as<IntImm>()) {
    int64_t v = imm->value;
    if (t.is_bool()) return v ? "true" : "false";
    if (t.is_uint()) return std::to_string(uint64_t(v)) + (t.bits == 64 ? "ULL" : "U");
    if (t.bits == 64 && !narrow) {
      if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
      return "(" + std::to_string(v) + "LL)";
    }
    if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
    std::string s = v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
  }
  double v = e.as<FloatImm>()->value;
  bool f32 = t.bits == 32;
  if (std::isnan(v)) return f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(v)) {
    std::string inf = f32 ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), f32 ? "%.9g" : "%.17g", f32 ? double(float(v)) : v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "(" + s + (f32 ? "f" : "") + ")";
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
  if (t.lanes != 1 || (t.is_float() && t.bits != 32 && t.bits != 64)) {
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
      std::string ct = (narrow && t == DataType::Index()) ? "int" : CType(t);
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
    return s;
  };
  auto minmax = [&](const auto* op, bool is_min) {
    auto [a, b] = pair(op);
    if (t.is_float()) return std::string(t.bits == 32 ? (is_min ? "fminf(" : "fmaxf(") : (is_min ? "fmin(" : "fmax(")) + a + ", " + b + ")";
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
    if (is_div) return "(" + sa + " / " + sb + ")";
    std::string fl = t.bits == 32 ? "floorf" : "floor";
    return "(" + sa + " - " + fl + "(" + sa + " / " + sb + ") * " + sb + ")";
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
  std::string x = EmitExprIn(op->args[0], narrow);
  if (!t.is_float()) {  // abs on integers
    if (op->op != CallOp::kAbs) Fail(Status::Unimplemented(std::string("cuda codegen: ") + CallOpName(op->op) + " on " + t.ToString()));
    if (t.is_uint()) return x;
    std::string s = t.bits == 64 && !narrow ? "llabs(" + x + ")" : "abs(" + x + ")";
    return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
  }
  bool f32 = t.bits == 32;
  auto fn = [&](const char* name) { return std::string(name) + (f32 ? "f(" : "(") + x + ")"; };
  switch (op->op) {
    case CallOp::kExp: return fn("exp");
    case CallOp::kLog: return fn("log");
    case CallOp::kSqrt: return fn("sqrt");
    case CallOp::kRsqrt: return fn("rsqrt");
    case CallOp::kTanh: return fn("tanh");
    case CallOp::kSigmoid: return f32 ? "(1.0f / (1.0f + expf(-" + x + ")))" : "(1.0 / (1.0 + exp(-" + x + ")))";
    case CallOp::kAbs: return fn("fabs");
    case CallOp::kPow: return std::string(f32 ? "powf(" : "pow(") + x + ", " + EmitExprIn(op->args[1], narrow) + ")";
    case CallOp::kFloor: return fn("floor");
    case CallOp::kCeil: return fn("ceil");
    case CallOp::kErf: return fn("erf");
  }
  return "0";
}

}  // namespace tunefarm::cuda::detail
