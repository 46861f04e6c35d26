// Node constructors (Make) and the small helpers of ir.h.
//
// Make functions check the type invariants of each node with assert-free
// checks that throw nothing: a violated invariant is a bug in the caller, so
// it aborts with a message naming the node (InternalCheck).
#include "tunefarm/compiler/ir/ir.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tunefarm::ir {

namespace {

[[noreturn]] void InternalError(const std::string& what) {
  std::fprintf(stderr, "tunefarm internal error: %s\n", what.c_str());
  std::abort();
}

void InternalCheck(bool ok, const char* node, const std::string& what) {
  if (!ok) InternalError(std::string(node) + "::Make: " + what);
}

// Literal promotion for the operator sugar: an immediate adopts the type of
// the other operand, so `i + 1` works for i32 and i64 alike and `x * 2.0`
// for f16/f32/f64.
void MatchImmediateTypes(Expr& a, Expr& b) {
  if (a.dtype() == b.dtype()) return;
  auto retype = [](const Expr& imm, DataType t) -> Expr {
    if (const auto* i = imm.as<IntImm>()) return MakeConst(t, double(i->value));
    if (const auto* f = imm.as<FloatImm>()) return MakeConst(t, f->value);
    return imm;
  };
  if (a.as<IntImm>() || a.as<FloatImm>()) {
    a = retype(a, b.dtype());
  } else if (b.as<IntImm>() || b.as<FloatImm>()) {
    b = retype(b, a.dtype());
  }
}

}  // namespace

const char* IRNodeKindName(IRNodeKind kind) {
  switch (kind) {
#define TF_KIND_NAME(name) \
  case IRNodeKind::k##name: return #name;
    TF_EXPR_NODES(TF_KIND_NAME) TF_STMT_NODES(TF_KIND_NAME)
#undef TF_KIND_NAME
  }
  return "?";
}

const char* MemoryScopeName(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kGlobal: return "global";
    case MemoryScope::kShared: return "shared";
    case MemoryScope::kLocal: return "local";
  }
  return "?";
}

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "thread_binding";
  }
  return "?";
}

namespace {
struct CallOpInfo { CallOp op; const char* name; int arity; };
constexpr CallOpInfo kCallOps[] = {
    {CallOp::kExp, "exp", 1},     {CallOp::kLog, "log", 1},         {CallOp::kSqrt, "sqrt", 1},
    {CallOp::kRsqrt, "rsqrt", 1}, {CallOp::kTanh, "tanh", 1},       {CallOp::kSigmoid, "sigmoid", 1},
    {CallOp::kAbs, "abs", 1},     {CallOp::kPow, "pow", 2},         {CallOp::kFloor, "floor", 1},
    {CallOp::kCeil, "ceil", 1},   {CallOp::kErf, "erf", 1},
};
}  // namespace

const char* CallOpName(CallOp op) {
  for (const auto& info : kCallOps) if (info.op == op) return info.name;
  return "?";
}
int CallOpArity(CallOp op) {
  for (const auto& info : kCallOps) if (info.op == op) return info.arity;
  return 1;
}
bool ParseCallOp(const std::string& name, CallOp* op) {
  for (const auto& info : kCallOps) {
    if (name == info.name) {
      *op = info.op;
      return true;
    }
  }
  return false;
}

Expr::Expr(int64_t v) : node_(std::make_shared<IntImm>(DataType::Index(), v)) {}
Expr::Expr(int v) : node_(std::make_shared<IntImm>(DataType::Index(), v)) {}
Expr::Expr(double v) : node_(std::make_shared<FloatImm>(DataType::Float(32), v)) {}

Var::Var(std::string name, DataType dtype) : node_(std::make_shared<Variable>(std::move(name), dtype)) {}

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape, MemoryScope scope) {
  auto b = std::make_shared<BufferNode>();
  b->name = std::move(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->scope = scope;
  return b;
}

Expr IntImm::Make(DataType t, int64_t value) {
  InternalCheck(t.is_integer() || t.is_bool(), "IntImm", "type " + t.ToString() + " is not an integer");
  return Expr(std::make_shared<IntImm>(t, value));
}

Expr FloatImm::Make(DataType t, double value) {
  InternalCheck(t.is_float(), "FloatImm", "type " + t.ToString() + " is not a float");
  return Expr(std::make_shared<FloatImm>(t, value));
}

template <IRNodeKind K>
Expr BinaryNode<K>::Make(Expr a, Expr b) {
  const char* name = IRNodeKindName(K);
  InternalCheck(a.defined() && b.defined(), name, "undefined operand");
  InternalCheck(a.dtype() == b.dtype(), name,
                "operand types differ: " + a.dtype().ToString() + " vs " + b.dtype().ToString());
  DataType t = a.dtype();
  constexpr bool kIsCompare = K == IRNodeKind::kEQ || K == IRNodeKind::kNE || K == IRNodeKind::kLT ||
                              K == IRNodeKind::kLE || K == IRNodeKind::kGT || K == IRNodeKind::kGE;
  constexpr bool kIsLogic = K == IRNodeKind::kAnd || K == IRNodeKind::kOr;
  if constexpr (kIsCompare) t = DataType::Bool(a.dtype().lanes);
  if constexpr (kIsLogic) InternalCheck(a.dtype().is_bool(), name, "operands must be bool");
  return Expr(std::make_shared<BinaryNode<K>>(t, std::move(a), std::move(b)));
}

template struct BinaryNode<IRNodeKind::kAdd>;
template struct BinaryNode<IRNodeKind::kSub>;
template struct BinaryNode<IRNodeKind::kMul>;
template struct BinaryNode<IRNodeKind::kDiv>;
template struct BinaryNode<IRNodeKind::kMod>;
template struct BinaryNode<IRNodeKind::kMin>;
template struct BinaryNode<IRNodeKind::kMax>;
template struct BinaryNode<IRNodeKind::kEQ>;
template struct BinaryNode<IRNodeKind::kNE>;
template struct BinaryNode<IRNodeKind::kLT>;
template struct BinaryNode<IRNodeKind::kLE>;
template struct BinaryNode<IRNodeKind::kGT>;
template struct BinaryNode<IRNodeKind::kGE>;
template struct BinaryNode<IRNodeKind::kAnd>;
template struct BinaryNode<IRNodeKind::kOr>;

Expr Not::Make(Expr a) {
  InternalCheck(a.defined() && a.dtype().is_bool(), "Not", "operand must be bool");
  return Expr(std::make_shared<Not>(std::move(a)));
}

Expr Select::Make(Expr condition, Expr true_value, Expr false_value) {
  InternalCheck(condition.defined() && condition.dtype().is_bool(), "Select", "condition must be bool");
  InternalCheck(true_value.dtype() == false_value.dtype(), "Select",
                "branch types differ: " + true_value.dtype().ToString() + " vs " +
                    false_value.dtype().ToString());
  return Expr(std::make_shared<Select>(std::move(condition), std::move(true_value), std::move(false_value)));
}

Expr Cast::Make(DataType t, Expr value) {
  InternalCheck(value.defined(), "Cast", "undefined value");
  if (value.dtype() == t) return value;
  return Expr(std::make_shared<Cast>(t, std::move(value)));
}

Expr Load::Make(Buffer buffer, std::vector<Expr> indices) {
  InternalCheck(buffer != nullptr, "Load", "null buffer");
  InternalCheck(indices.size() == buffer->shape.size(), "Load",
                buffer->name + " has " + std::to_string(buffer->shape.size()) + " dimensions, got " +
                    std::to_string(indices.size()) + " indices");
  for (const Expr& i : indices) {
    InternalCheck(i.defined() && i.dtype().is_integer(), "Load", "index into " + buffer->name + " is not an integer");
  }
  return Expr(std::make_shared<Load>(std::move(buffer), std::move(indices)));
}

Expr Call::Make(CallOp op, std::vector<Expr> args) {
  InternalCheck(int(args.size()) == CallOpArity(op), "Call", std::string("wrong arity for ") + CallOpName(op));
  DataType t = args[0].dtype();
  for (const Expr& a : args) InternalCheck(a.dtype() == t, "Call", "argument types differ");
  InternalCheck(t.is_float() || op == CallOp::kAbs, "Call",
                std::string(CallOpName(op)) + " needs a float argument, got " + t.ToString());
  return Expr(std::make_shared<Call>(t, op, std::move(args)));
}

Stmt For::Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
               std::map<std::string, int64_t> annotations) {
  InternalCheck(loop_var.defined() && min.defined() && extent.defined() && body.defined(), "For", "undefined part");
  InternalCheck(min.dtype() == loop_var.dtype() && extent.dtype() == loop_var.dtype(), "For",
                "min/extent type must equal the loop variable's");
  auto n = std::make_shared<For>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->kind = kind;
  n->body = std::move(body);
  n->thread_tag = std::move(thread_tag);
  n->annotations = std::move(annotations);
  return Stmt(n);
}

Stmt Store::Make(Buffer buffer, Expr value, std::vector<Expr> indices) {
  InternalCheck(buffer != nullptr && value.defined(), "Store", "undefined part");
  InternalCheck(indices.size() == buffer->shape.size(), "Store",
                buffer->name + " has " + std::to_string(buffer->shape.size()) + " dimensions, got " +
                    std::to_string(indices.size()) + " indices");
  InternalCheck(value.dtype().element_of() == buffer->dtype, "Store",
                "storing " + value.dtype().ToString() + " into " + buffer->dtype.ToString() + " buffer " +
                    buffer->name);
  auto n = std::make_shared<Store>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return Stmt(n);
}

Stmt Allocate::Make(Buffer buffer, Stmt body) {
  InternalCheck(buffer != nullptr && body.defined(), "Allocate", "undefined part");
  auto n = std::make_shared<Allocate>();
  n->buffer = std::move(buffer);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt LetStmt::Make(Var var, Expr value, Stmt body) {
  InternalCheck(var.defined() && value.defined() && body.defined(), "LetStmt", "undefined part");
  InternalCheck(var.dtype() == value.dtype(), "LetStmt", "value type differs from " + var.name() + "'s");
  auto n = std::make_shared<LetStmt>();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt IfThenElse::Make(Expr condition, Stmt then_case, Stmt else_case) {
  InternalCheck(condition.defined() && condition.dtype().is_bool() && then_case.defined(), "IfThenElse",
                "condition must be bool and then_case defined");
  auto n = std::make_shared<IfThenElse>();
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(n);
}

Stmt SeqStmt::Make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  for (Stmt& s : seq) {
    if (!s.defined()) continue;
    if (const auto* inner = s.as<SeqStmt>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  InternalCheck(!flat.empty(), "SeqStmt", "empty sequence");
  if (flat.size() == 1) return flat[0];
  auto n = std::make_shared<SeqStmt>();
  n->seq = std::move(flat);
  return Stmt(n);
}

Stmt Block::Make(std::string name, std::vector<IterVar> iter_vars, Stmt init, Stmt body, Expr predicate) {
  InternalCheck(body.defined(), "Block", "undefined body");
  for (const IterVar& iv : iter_vars) {
    InternalCheck(iv.var.defined() && iv.binding.defined() && iv.extent > 0, "Block",
                  "iter var of block " + name + " is incomplete");
  }
  auto n = std::make_shared<Block>();
  n->name = std::move(name);
  n->iter_vars = std::move(iter_vars);
  n->init = std::move(init);
  n->body = std::move(body);
  InternalCheck(!predicate.defined() || predicate.dtype().is_bool(), "Block", "predicate must be bool");
  n->predicate = std::move(predicate);
  return Stmt(n);
}

Stmt Evaluate::Make(Expr value) {
  InternalCheck(value.defined(), "Evaluate", "undefined value");
  auto n = std::make_shared<Evaluate>();
  n->value = std::move(value);
  return Stmt(n);
}

Stmt Barrier::Make() { return Stmt(std::make_shared<Barrier>()); }

Expr operator+(Expr a, Expr b) { MatchImmediateTypes(a, b); return Add::Make(a, b); }
Expr operator-(Expr a, Expr b) { MatchImmediateTypes(a, b); return Sub::Make(a, b); }
Expr operator*(Expr a, Expr b) { MatchImmediateTypes(a, b); return Mul::Make(a, b); }
Expr operator/(Expr a, Expr b) { MatchImmediateTypes(a, b); return Div::Make(a, b); }
Expr operator%(Expr a, Expr b) { MatchImmediateTypes(a, b); return Mod::Make(a, b); }
Expr min(Expr a, Expr b) { MatchImmediateTypes(a, b); return Min::Make(a, b); }
Expr max(Expr a, Expr b) { MatchImmediateTypes(a, b); return Max::Make(a, b); }

Expr MakeConst(DataType t, double v) {
  if (t.is_float()) return FloatImm::Make(t, v);
  return IntImm::Make(t, static_cast<int64_t>(v));
}

Expr MinValue(DataType t) {
  if (t.is_float()) return FloatImm::Make(t, -std::numeric_limits<double>::infinity());
  if (t.is_uint() || t.is_bool()) return IntImm::Make(t, 0);
  return IntImm::Make(t, t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1)));
}

Expr MaxValue(DataType t) {
  if (t.is_float()) return FloatImm::Make(t, std::numeric_limits<double>::infinity());
  if (t.is_bool()) return IntImm::Make(t, 1);
  if (t.is_uint()) {
    return IntImm::Make(t, t.bits >= 64 ? -1 : int64_t((uint64_t(1) << t.bits) - 1));
  }
  return IntImm::Make(t, t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1);
}

const int64_t* AsConstInt(const Expr& e) {
  const auto* imm = e.as<IntImm>();
  return imm ? &imm->value : nullptr;
}

bool IsZeroConst(const Expr& e) {
  if (const auto* i = e.as<IntImm>()) return i->value == 0;
  if (const auto* f = e.as<FloatImm>()) return f->value == 0.0;
  return false;
}

std::vector<Expr> Conjuncts(const Expr& e) {
  if (const auto* a = e.as<And>()) {
    std::vector<Expr> terms = Conjuncts(a->a);
    std::vector<Expr> right = Conjuncts(a->b);
    terms.insert(terms.end(), right.begin(), right.end());
    return terms;
  }
  return {e};
}

bool ExprEqual(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || !(a.dtype() == b.dtype())) return false;
  using K = IRNodeKind;
  switch (a.kind()) {
    case K::kIntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case K::kFloatImm: return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
    case K::kVariable: return false;  // the same variable was same_as above
#define TF_BINARY_EQUAL(name) \
    case K::k##name: return ExprEqual(a.as<name>()->a, b.as<name>()->a) && ExprEqual(a.as<name>()->b, b.as<name>()->b);
    TF_BINARY_EQUAL(Add) TF_BINARY_EQUAL(Sub) TF_BINARY_EQUAL(Mul) TF_BINARY_EQUAL(Div) TF_BINARY_EQUAL(Mod)
    TF_BINARY_EQUAL(Min) TF_BINARY_EQUAL(Max) TF_BINARY_EQUAL(EQ) TF_BINARY_EQUAL(NE) TF_BINARY_EQUAL(LT)
    TF_BINARY_EQUAL(LE) TF_BINARY_EQUAL(GT) TF_BINARY_EQUAL(GE) TF_BINARY_EQUAL(And) TF_BINARY_EQUAL(Or)
#undef TF_BINARY_EQUAL
    case K::kNot: return ExprEqual(a.as<Not>()->a, b.as<Not>()->a);
    case K::kSelect: {
      const auto* x = a.as<Select>();
      const auto* y = b.as<Select>();
      return ExprEqual(x->condition, y->condition) && ExprEqual(x->true_value, y->true_value) &&
             ExprEqual(x->false_value, y->false_value);
    }
    case K::kCast: return ExprEqual(a.as<Cast>()->value, b.as<Cast>()->value);
    case K::kLoad: {
      const auto* x = a.as<Load>();
      const auto* y = b.as<Load>();
      if (x->buffer != y->buffer || x->indices.size() != y->indices.size()) return false;
      for (size_t i = 0; i < x->indices.size(); ++i) {
        if (!ExprEqual(x->indices[i], y->indices[i])) return false;
      }
      return true;
    }
    case K::kCall: {
      const auto* x = a.as<Call>();
      const auto* y = b.as<Call>();
      if (x->op != y->op || x->args.size() != y->args.size()) return false;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (!ExprEqual(x->args[i], y->args[i])) return false;
      }
      return true;
    }
    default: return false;
  }
}

}  // namespace tunefarm::ir
