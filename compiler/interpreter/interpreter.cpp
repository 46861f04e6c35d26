// The reference interpreter: a direct tree walk with dtype-exact arithmetic.
//
// Values are kept as int64 (integers, bools) or double (floats); after every
// operation the result is wrapped or rounded to the node's dtype so that i8/i32
// wrap-around and f32/f16 rounding match what compiled code does. Variables
// and buffers live in small scoped stacks searched from the top: scopes are
// shallow, and a linear search beats hashing at these sizes. Errors travel as
// an internal exception that never leaves the interpreter. Loops bound to GPU
// threads and barriers are interpreter_gpu.cpp's.
#include "tunefarm/compiler/interpreter/interpreter.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "interpreter/interpreter_impl.h"
#include "tunefarm/compiler/ir/floor_div.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::interp {

namespace {

using namespace ir;

int64_t WrapInt(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (t.is_uint()) return int64_t(u);
  uint64_t sign = uint64_t(1) << (t.bits - 1);
  return int64_t((u ^ sign) - sign);
}

double RoundFloat(double v, DataType t) {
  if (t.bits == 32) return double(float(v));
  if (t.bits == 16) return double(HalfToFloat(FloatToHalf(float(v))));
  return v;
}

Scalar ReadElement(const char* p, DataType t) {
  Scalar r;
  using C = DataType::Code;
  switch (t.code) {
    case C::kFloat:
      r.f = t.bits == 16 ? HalfToFloat(*reinterpret_cast<const uint16_t*>(p))
            : t.bits == 32 ? double(*reinterpret_cast<const float*>(p))
                           : *reinterpret_cast<const double*>(p);
      return r;
    case C::kBool: r.i = *reinterpret_cast<const uint8_t*>(p) != 0; return r;
    default: {
      int64_t v = 0;
      std::memcpy(&v, p, t.bytes());  // little-endian: low bytes first
      r.i = WrapInt(v, t);
      return r;
    }
  }
}

void WriteElement(char* p, DataType t, Scalar v) {
  if (t.is_float()) {
    if (t.bits == 16) {
      uint16_t h = FloatToHalf(float(v.f));
      std::memcpy(p, &h, 2);
    } else if (t.bits == 32) {
      float f = float(v.f);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v.f, 8);
    }
  } else {
    int64_t x = WrapInt(v.i, t);
    std::memcpy(p, &x, t.bytes());
  }
}

}  // namespace

void Interpreter::Exec(const Stmt& s) {
  switch (s.kind()) {
    case IRNodeKind::kFor: return ExecFor(s.as<For>(), s);
    case IRNodeKind::kStore: return ExecStore(s.as<Store>());
    case IRNodeKind::kAllocate: return ExecAllocate(s.as<Allocate>());
    case IRNodeKind::kLetStmt: {
      const auto* op = s.as<LetStmt>();
      vars_.push_back({op->var.get(), Eval(op->value)});
      Exec(op->body);
      vars_.pop_back();
      return;
    }
    case IRNodeKind::kIfThenElse: {
      const auto* op = s.as<IfThenElse>();
      if (Eval(op->condition).i) {
        Exec(op->then_case);
      } else if (op->else_case.defined()) {
        Exec(op->else_case);
      }
      return;
    }
    case IRNodeKind::kSeqStmt:
      for (const Stmt& c : s.as<SeqStmt>()->seq) Exec(c);
      return;
    case IRNodeKind::kBlock: return ExecBlock(s.as<Block>());
    case IRNodeKind::kEvaluate: Eval(s.as<Evaluate>()->value); return;
    case IRNodeKind::kBarrier: return ExecBarrier(s);
    TF_EXPR_KIND_CASES Fail(Status::Internal(std::string("interpreter: unexpected statement ") + IRNodeKindName(s.kind())));
  }
}

Scalar Interpreter::LookupVar(const Variable* v) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->var == v) return it->value;
  }
  Fail(Status::Internal("interpreter: variable '" + v->name + "' is not bound"));
}

char* Interpreter::LookupBuffer(const BufferNode* b) const {
  for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
    if (it->buffer == b) return it->data;
  }
  Fail(Status::Internal("interpreter: buffer '" + b->name + "' is neither a parameter nor allocated here"));
}

// Flat element offset of a multi-dimensional access, bounds-checked.
int64_t Interpreter::Offset(const BufferNode* b, const std::vector<Expr>& indices, const char* what) {
  int64_t offset = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t i = Eval(indices[d]).i;
    if (i < 0 || i >= b->shape[d]) {
      std::ostringstream os;
      os << "out-of-bounds " << what << " of " << b->name << ": index " << i << " in dimension " << d
         << " is outside [0, " << b->shape[d] << ")";
      Fail(Status::InvalidArgument(os.str()));
    }
    offset = offset * b->shape[d] + i;
  }
  return offset;
}

void Interpreter::ExecFor(const For* op, const Stmt& self) {
  if (op->kind == ForKind::kThreadBinding) return ExecBoundFor(op, self);
  ExecSerialFor(op);
}

void Interpreter::ExecSerialFor(const For* op) {
  int64_t min = Eval(op->min).i, extent = Eval(op->extent).i;
  vars_.push_back({op->loop_var.get(), Scalar{}});
  size_t slot = vars_.size() - 1;
  for (int64_t i = min; i < min + extent; ++i) {
    vars_[slot].value.i = i;
    Exec(op->body);
  }
  vars_.pop_back();
}

void Interpreter::ExecStore(const Store* op) {
  Scalar v = Eval(op->value);
  const BufferNode* b = op->buffer.get();
  int64_t offset = Offset(b, op->indices, "store");
  WriteElement(LookupBuffer(b) + offset * b->dtype.bytes(), b->dtype, v);
}

void Interpreter::ExecAllocate(const Allocate* op) {
  const BufferNode* b = op->buffer.get();
  if (thread_ != nullptr && b->scope != MemoryScope::kLocal) {
    // One copy per GPU block, shared by its threads, wherever the Allocate sits.
    buffers_.push_back({b, BlockStorage(b)});
    Exec(op->body);
    buffers_.pop_back();
    return;
  }
  // Poison fresh memory with NaN-ish bytes so that reading before writing shows up.
  std::vector<char> storage(size_t(b->size_bytes()), char(0x7f));
  buffers_.push_back({b, storage.data()});
  Exec(op->body);
  buffers_.pop_back();
}

void Interpreter::ExecBlock(const Block* op) {
  if (op->predicate.defined() && !Eval(op->predicate).i) return;
  size_t base = vars_.size();
  bool at_reduce_start = true;
  for (const IterVar& iv : op->iter_vars) {
    Scalar v = Eval(iv.binding);
    if (v.i < 0 || v.i >= iv.extent) {
      vars_.resize(base);
      Fail(Status::Internal("interpreter: block " + op->name + " binds " + iv.var.name() + " to " +
                            std::to_string(v.i) + ", outside [0, " + std::to_string(iv.extent) + ")"));
    }
    if (iv.kind == IterKind::kReduce && v.i != 0) at_reduce_start = false;
    vars_.push_back({iv.var.get(), v});
  }
  if (op->init.defined() && at_reduce_start) Exec(op->init);
  Exec(op->body);
  vars_.resize(base);
}

Scalar Interpreter::Eval(const Expr& e) {
  Scalar r;
  DataType t = e.dtype();
  switch (e.kind()) {
    case IRNodeKind::kIntImm: r.i = e.as<IntImm>()->value; return r;
    case IRNodeKind::kFloatImm: r.f = RoundFloat(e.as<FloatImm>()->value, t); return r;
    case IRNodeKind::kVariable: return LookupVar(e.as<Variable>());
#define TF_ARITH(Kind, INT_EXPR, FLOAT_EXPR)                    \
case IRNodeKind::k##Kind: {                                    \
  const auto* op = e.as<Kind>();                               \
  Scalar a = Eval(op->a), b = Eval(op->b);                     \
  if (t.is_float()) {                                          \
    r.f = RoundFloat(FLOAT_EXPR, t);                           \
  } else {                                                     \
    r.i = WrapInt(INT_EXPR, t);                                \
  }                                                            \
  return r;                                                    \
}
    TF_ARITH(Add, int64_t(uint64_t(a.i) + uint64_t(b.i)), a.f + b.f)
    TF_ARITH(Sub, int64_t(uint64_t(a.i) - uint64_t(b.i)), a.f - b.f)
    TF_ARITH(Mul, int64_t(uint64_t(a.i) * uint64_t(b.i)), a.f * b.f)
    TF_ARITH(Min, std::min(a.i, b.i), std::fmin(a.f, b.f))
    TF_ARITH(Max, std::max(a.i, b.i), std::fmax(a.f, b.f))
#undef TF_ARITH
    case IRNodeKind::kDiv:
    case IRNodeKind::kMod: {
      const Expr& ea = e.kind() == IRNodeKind::kDiv ? e.as<Div>()->a : e.as<Mod>()->a;
      const Expr& eb = e.kind() == IRNodeKind::kDiv ? e.as<Div>()->b : e.as<Mod>()->b;
      Scalar a = Eval(ea), b = Eval(eb);
      bool is_div = e.kind() == IRNodeKind::kDiv;
      if (t.is_float()) {
        r.f = RoundFloat(is_div ? a.f / b.f : a.f - std::floor(a.f / b.f) * b.f, t);
        return r;
      }
      if (b.i == 0) Fail(Status::InvalidArgument("integer division by zero in " + ToString(e)));
      r.i = WrapInt(is_div ? FloorDiv(a.i, b.i) : FloorMod(a.i, b.i), t);
      return r;
    }
#define TF_COMPARE(Kind, OP)                                           \
case IRNodeKind::k##Kind: {                                           \
  const auto* op = e.as<Kind>();                                      \
  Scalar a = Eval(op->a), b = Eval(op->b);                            \
  r.i = op->a.dtype().is_float() ? (a.f OP b.f) : (a.i OP b.i);       \
  return r;                                                           \
}
    TF_COMPARE(EQ, ==) TF_COMPARE(NE, !=) TF_COMPARE(LT, <) TF_COMPARE(LE, <=) TF_COMPARE(GT, >)
    TF_COMPARE(GE, >=)
#undef TF_COMPARE
    case IRNodeKind::kAnd: {
      const auto* op = e.as<And>();
      r.i = Eval(op->a).i && Eval(op->b).i;
      return r;
    }
    case IRNodeKind::kOr: {
      const auto* op = e.as<Or>();
      r.i = Eval(op->a).i || Eval(op->b).i;
      return r;
    }
    case IRNodeKind::kNot: r.i = !Eval(e.as<Not>()->a).i; return r;
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      return Eval(op->condition).i ? Eval(op->true_value) : Eval(op->false_value);
    }
    case IRNodeKind::kCast: return EvalCast(e.as<Cast>());
    case IRNodeKind::kLoad: {
      const auto* op = e.as<Load>();
      const BufferNode* b = op->buffer.get();
      int64_t offset = Offset(b, op->indices, "load");
      return ReadElement(LookupBuffer(b) + offset * b->dtype.bytes(), b->dtype);
    }
    case IRNodeKind::kCall: return EvalCall(e.as<Call>());
    TF_STMT_KIND_CASES break;  // not expressions
  }
  Fail(Status::Internal(std::string("interpreter: unexpected expression ") + IRNodeKindName(e.kind())));
}

Scalar Interpreter::EvalCast(const Cast* op) {
  Scalar v = Eval(op->value), r;
  DataType from = op->value.dtype(), to = op->dtype;
  if (to.is_float()) {
    r.f = RoundFloat(from.is_float() ? v.f : (from.is_uint() ? double(uint64_t(v.i)) : double(v.i)), to);
  } else if (to.is_bool()) {
    r.i = from.is_float() ? (v.f != 0) : (v.i != 0);
  } else if (from.is_float()) {
    // Float to int truncates toward zero; out-of-range values saturate here
    // (compiled code leaves them undefined, so tests avoid them).
    double x = std::trunc(v.f);
    if (std::isnan(x)) x = 0;
    x = std::fmax(std::fmin(x, 9.2e18), -9.2e18);
    r.i = WrapInt(int64_t(x), to);
  } else {
    r.i = WrapInt(v.i, to);
  }
  return r;
}

Scalar Interpreter::EvalCall(const Call* op) {
  DataType t = op->dtype;
  Scalar a = Eval(op->args[0]), r;
  if (!t.is_float()) {  // abs on integers
    r.i = WrapInt(a.i < 0 ? -a.i : a.i, t);
    return r;
  }
  double x = a.f, y = 0;
  switch (op->op) {
    case CallOp::kExp: y = std::exp(x); break;
    case CallOp::kLog: y = std::log(x); break;
    case CallOp::kSqrt: y = std::sqrt(x); break;
    case CallOp::kRsqrt: y = 1.0 / std::sqrt(x); break;
    case CallOp::kTanh: y = std::tanh(x); break;
    case CallOp::kSigmoid: y = 1.0 / (1.0 + std::exp(-x)); break;
    case CallOp::kAbs: y = std::fabs(x); break;
    case CallOp::kPow: y = std::pow(x, Eval(op->args[1]).f); break;
    case CallOp::kFloor: y = std::floor(x); break;
    case CallOp::kCeil: y = std::ceil(x); break;
    case CallOp::kErf: y = std::erf(x); break;
  }
  r.f = RoundFloat(y, t);
  return r;
}

}  // namespace tunefarm::interp

namespace tunefarm {

Status Interpret(const ir::PrimFunc& f, const std::vector<HostBuffer*>& args) {
  if (args.size() != f.params.size()) {
    return Status::InvalidArgument(f.name + " takes " + std::to_string(f.params.size()) + " buffers, got " +
                                   std::to_string(args.size()));
  }
  interp::Interpreter interp;
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Buffer& p = f.params[i];
    if (args[i] == nullptr || args[i]->dtype() != p->dtype || args[i]->shape() != p->shape) {
      return Status::InvalidArgument("argument " + std::to_string(i) + " of " + f.name +
                                     " does not match parameter " + p->name + " (" + p->dtype.ToString() +
                                     ")");
    }
    interp.BindBuffer(p.get(), static_cast<char*>(args[i]->data()));
  }
  try {
    interp.Exec(f.body);
  } catch (const interp::InterpError& e) {
    return e.status;
  }
  return Status::OK();
}

}  // namespace tunefarm
