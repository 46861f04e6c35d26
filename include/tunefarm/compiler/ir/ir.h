// The loop IR: expressions, statements, buffers and PrimFunc.
//
// Nodes are plain, immutable structs built with `Make` and shared through
// reference-counted handles (Expr, Stmt). A node never changes after Make;
// passes build new nodes (IRMutator returns its input unchanged, same pointer,
// when nothing under it changed). Identity of variables and buffers is pointer
// identity: two Vars with the same name are different variables.
//
// One X-macro list of node kinds (TF_EXPR_NODES / TF_STMT_NODES) drives the
// kind enum, the visitor and the mutator (ir_visitor.h).
//
// Semantics worth knowing:
//  * Integer Div and Mod are floor division and floor modulo (as TVM's
//    floordiv/floormod); float Div is IEEE division.
//  * Select evaluates only the chosen branch (it guards out-of-bounds loads
//    in padded convolutions).
//  * Loads and Stores take one index per buffer dimension; buffers are
//    row-major and dense.
//  * A Block runs only where its predicate holds (non-divisible splits add
//    one); it binds its iteration variables to their binding expressions, runs
//    `init` when every reduction iteration variable equals 0, then `body`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/dtype.h"

namespace tunefarm::ir {

#define TF_EXPR_NODES(X) \
  X(IntImm)              \
  X(FloatImm)            \
  X(Variable)            \
  X(Add)                 \
  X(Sub)                 \
  X(Mul)                 \
  X(Div)                 \
  X(Mod)                 \
  X(Min)                 \
  X(Max)                 \
  X(EQ)                  \
  X(NE)                  \
  X(LT)                  \
  X(LE)                  \
  X(GT)                  \
  X(GE)                  \
  X(And)                 \
  X(Or)                  \
  X(Not)                 \
  X(Select)              \
  X(Cast)                \
  X(Load)                \
  X(Call)

#define TF_STMT_NODES(X) \
  X(For)                 \
  X(Store)               \
  X(Allocate)            \
  X(LetStmt)             \
  X(IfThenElse)          \
  X(SeqStmt)             \
  X(Block)               \
  X(Evaluate)            \
  X(Barrier)

enum class IRNodeKind : uint8_t {
#define TF_DECLARE_KIND(name) k##name,
  TF_EXPR_NODES(TF_DECLARE_KIND) TF_STMT_NODES(TF_DECLARE_KIND)
#undef TF_DECLARE_KIND
};

const char* IRNodeKindName(IRNodeKind kind);

// Case labels for every expression / statement kind. A pass's switch over
// node kinds has no `default:`: it names each kind it handles, and an
// expression switch lists the statement kinds (TF_STMT_KIND_CASES) where it
// would have had a default, so a new node kind is an error (-Werror=switch)
// in every switch that does not say what to do with it.
#define TF_KIND_CASE(name) case ::tunefarm::ir::IRNodeKind::k##name:
#define TF_EXPR_KIND_CASES TF_EXPR_NODES(TF_KIND_CASE)
#define TF_STMT_KIND_CASES TF_STMT_NODES(TF_KIND_CASE)

struct IRNode {
  explicit IRNode(IRNodeKind k) : kind(k) {}
  virtual ~IRNode() = default;
  const IRNodeKind kind;
};

struct ExprNode : IRNode {
  ExprNode(IRNodeKind k, DataType t) : IRNode(k), dtype(t) {}
  const DataType dtype;
};

struct StmtNode : IRNode {
  using IRNode::IRNode;
};

// Handle to an immutable expression node; may be undefined (null).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  // Convenience: integer and float immediates (i64 and f32).
  Expr(int64_t v);  // NOLINT(implicit)
  Expr(int v);      // NOLINT(implicit)
  Expr(double v);   // NOLINT(implicit)

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  DataType dtype() const { return node_->dtype; }
  IRNodeKind kind() const { return node_->kind; }
  template <typename T>
  const T* as() const {
    return (node_ && node_->kind == T::kKind) ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Expr& other) const { return node_ == other.node_; }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  IRNodeKind kind() const { return node_->kind; }
  template <typename T>
  const T* as() const {
    return (node_ && node_->kind == T::kKind) ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }
  const std::shared_ptr<const StmtNode>& node() const { return node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

// ---------------------------------------------------------------- variables

struct Variable : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kVariable;
  Variable(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};

// A handle to a Variable; converts to Expr. Identity is pointer identity.
class Var {
 public:
  Var() = default;
  explicit Var(std::string name, DataType dtype = DataType::Index());
  explicit Var(std::shared_ptr<const Variable> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const Variable* get() const { return node_.get(); }
  const Variable* operator->() const { return node_.get(); }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  operator Expr() const { return Expr(node_); }  // NOLINT(implicit)
  bool same_as(const Var& other) const { return node_ == other.node_; }
  friend bool operator<(const Var& a, const Var& b) { return a.node_ < b.node_; }
  friend bool operator==(const Var& a, const Var& b) { return a.node_ == b.node_; }

 private:
  std::shared_ptr<const Variable> node_;
};

// ------------------------------------------------------------------ buffers

enum class MemoryScope : uint8_t { kGlobal, kShared, kLocal };
const char* MemoryScopeName(MemoryScope scope);

// A dense, row-major multi-dimensional array. Shapes are concrete.
struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  MemoryScope scope = MemoryScope::kGlobal;
  int64_t alignment = 64;  // bytes
  // A workload input declared `input const`: its value is the same on every
  // call (a layer's weights), so a schedule may re-lay it out once, ahead of
  // the calls, in a separate prepack entry (split_prepack.h).
  bool constant = false;

  int64_t num_elements() const;
  int64_t size_bytes() const { return num_elements() * dtype.bytes(); }
};
using Buffer = std::shared_ptr<const BufferNode>;

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<int64_t> shape,
                  MemoryScope scope = MemoryScope::kGlobal);

// -------------------------------------------------------------- expressions

struct IntImm : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kIntImm;
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
  static Expr Make(DataType t, int64_t value);
};

struct FloatImm : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kFloatImm;
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  const double value;
  static Expr Make(DataType t, double value);
};

// Binary nodes share one layout. Arithmetic nodes have the operands' type;
// comparisons have type bool. Operands must have equal types (Make checks).
template <IRNodeKind K>
struct BinaryNode : ExprNode {
  static constexpr IRNodeKind kKind = K;
  BinaryNode(DataType t, Expr a_, Expr b_) : ExprNode(kKind, t), a(std::move(a_)), b(std::move(b_)) {}
  const Expr a, b;
  static Expr Make(Expr a, Expr b);
};

// Aliases, not subclasses: Make builds BinaryNode<K> objects, and as<Add>()
// must name exactly that type.
#define TF_BINARY(name) using name = BinaryNode<IRNodeKind::k##name>;
TF_BINARY(Add) TF_BINARY(Sub) TF_BINARY(Mul) TF_BINARY(Div) TF_BINARY(Mod)
TF_BINARY(Min) TF_BINARY(Max)
TF_BINARY(EQ) TF_BINARY(NE) TF_BINARY(LT) TF_BINARY(LE) TF_BINARY(GT) TF_BINARY(GE)
TF_BINARY(And) TF_BINARY(Or)
#undef TF_BINARY

struct Not : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kNot;
  explicit Not(Expr a_) : ExprNode(kKind, DataType::Bool()), a(std::move(a_)) {}
  const Expr a;
  static Expr Make(Expr a);
};

struct Select : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kSelect;
  Select(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()), condition(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr condition, true_value, false_value;
  static Expr Make(Expr condition, Expr true_value, Expr false_value);
};

struct Cast : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kCast;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
  static Expr Make(DataType t, Expr value);  // returns value itself when types are equal
};

struct Load : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kLoad;
  Load(Buffer b, std::vector<Expr> idx) : ExprNode(kKind, b->dtype), buffer(std::move(b)), indices(std::move(idx)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  static Expr Make(Buffer buffer, std::vector<Expr> indices);
};

// Pure math intrinsics on floats (abs also on ints).
enum class CallOp : uint8_t { kExp, kLog, kSqrt, kRsqrt, kTanh, kSigmoid, kAbs, kPow, kFloor, kCeil, kErf };
const char* CallOpName(CallOp op);
// Number of arguments the op takes (pow: 2, the rest: 1).
int CallOpArity(CallOp op);
bool ParseCallOp(const std::string& name, CallOp* op);

struct Call : ExprNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kCall;
  Call(DataType t, CallOp o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  const CallOp op;
  const std::vector<Expr> args;
  static Expr Make(CallOp op, std::vector<Expr> args);
};

// --------------------------------------------------------------- statements

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
const char* ForKindName(ForKind kind);

struct For : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kFor;
  For() : StmtNode(kKind) {}
  Var loop_var;
  Expr min;
  Expr extent;
  ForKind kind = ForKind::kSerial;
  std::string thread_tag;  // "blockIdx.x", "threadIdx.y", ... when kind == kThreadBinding
  std::map<std::string, int64_t> annotations;  // e.g. "pragma_auto_unroll_max_step"
  Stmt body;
  static Stmt Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                   std::string thread_tag = "", std::map<std::string, int64_t> annotations = {});
};

struct Store : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kStore;
  Store() : StmtNode(kKind) {}
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  static Stmt Make(Buffer buffer, Expr value, std::vector<Expr> indices);
};

// Allocates `buffer` (its scope says where) for the duration of `body`.
struct Allocate : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kAllocate;
  Allocate() : StmtNode(kKind) {}
  Buffer buffer;
  Stmt body;
  static Stmt Make(Buffer buffer, Stmt body);
};

struct LetStmt : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kLetStmt;
  LetStmt() : StmtNode(kKind) {}
  Var var;
  Expr value;
  Stmt body;
  static Stmt Make(Var var, Expr value, Stmt body);
};

struct IfThenElse : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kIfThenElse;
  IfThenElse() : StmtNode(kKind) {}
  Expr condition;
  Stmt then_case;
  Stmt else_case;  // may be undefined
  static Stmt Make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

struct SeqStmt : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kSeqStmt;
  SeqStmt() : StmtNode(kKind) {}
  std::vector<Stmt> seq;
  // Flattens nested SeqStmts; a single statement is returned as itself.
  static Stmt Make(std::vector<Stmt> seq);
};

enum class IterKind : uint8_t { kSpatial, kReduce };

struct IterVar {
  Var var;          // the block's own variable, used in init and body
  int64_t extent;   // var ranges over [0, extent)
  IterKind kind;
  Expr binding;     // value of var in terms of the enclosing loop variables
};

// A named unit of computation (one stage of a workload). Schedules address
// blocks by name. See the file comment for its semantics.
struct Block : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kBlock;
  Block() : StmtNode(kKind) {}
  std::string name;
  std::vector<IterVar> iter_vars;
  Stmt init;  // may be undefined; runs when all reduce iter vars are 0
  Stmt body;
  Expr predicate;  // may be undefined (always true); over enclosing loop variables
  static Stmt Make(std::string name, std::vector<IterVar> iter_vars, Stmt init, Stmt body,
                   Expr predicate = Expr());
};

struct Evaluate : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kEvaluate;
  Evaluate() : StmtNode(kKind) {}
  Expr value;
  static Stmt Make(Expr value);
};

// A barrier among the threads of one GPU thread block (__syncthreads): every
// thread of the block reaches it before any goes past it, and shared-memory
// writes before it are visible to every thread of the block after it. Only
// meaningful inside a kernel (under blockIdx / threadIdx loops); the GPU
// lowering inserts it (lower/insert_gpu_barriers.h), the interpreter runs the
// block's threads in phases between barriers, and CUDA C emits
// __syncthreads(). Must not sit under a branch or loop that depends on the
// thread index (VerifyGpuBindings says where).
struct Barrier : StmtNode {
  static constexpr IRNodeKind kKind = IRNodeKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
  static Stmt Make();
};

// ----------------------------------------------------------------- PrimFunc

// One kernel: `params` are its buffer arguments in call order (the workload's
// inputs, then its outputs); `body` may allocate further buffers.
struct PrimFunc {
  std::string name;
  std::vector<Buffer> params;
  size_t num_inputs = 0;
  Stmt body;
};

// ------------------------------------------------------- operator sugar (i64/f32 promotion of literals)

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);

// Makes an immediate of type t (int or float) holding v.
Expr MakeConst(DataType t, double v);
// Lowest/highest finite value of t, as an immediate (init values of max/min reductions).
Expr MinValue(DataType t);
Expr MaxValue(DataType t);
// Returns the integer value if e is an IntImm.
const int64_t* AsConstInt(const Expr& e);
// True if e is the integer or float immediate 0.
bool IsZeroConst(const Expr& e);
// The terms of a conjunction a && b && ..., left to right; e alone if it is no And.
std::vector<Expr> Conjuncts(const Expr& e);
// Structural equality of scalar expressions: the same node kinds, types and
// immediates, with variables and buffers compared by identity (two distinct
// variables of one name differ). Nodes other than immediates, variables,
// arithmetic, comparisons, logic, Select, Cast, Load and Call are never equal.
bool ExprEqual(const Expr& a, const Expr& b);

}  // namespace tunefarm::ir
