// Private to the LLVM code generator (compiler/codegen_llvm*.cpp and target.cpp).
//
// CodeGenLLVM translates one lowered PrimFunc into an llvm::Module. Its
// implementation is split by concept:
//   codegen_llvm_module.cpp    module/function setup, params, packed entry, types, helpers
//   codegen_llvm_expr.cpp      scalar and widened expressions, loads, casts, calls
//   codegen_llvm_stmt.cpp      statements, serial/unrolled loops, allocations, ifs
//   codegen_llvm_vector.cpp    vectorized loops: legality check and lane-widened bodies
//   codegen_llvm_dot.cpp       int8 dot products (pragma_dot_product) as AArch64 sdot/udot
//   codegen_llvm_parallel.cpp  parallel loops outlined into tunefarm_parallel_for bodies
//   codegen_llvm_sequence.cpp  entries that call other entries of the module in order
//   codegen_llvm_math*.cpp     inline exp, log, pow, sigmoid, tanh, erf (codegen_llvm_math.h)
//   codegen_llvm_jit.cpp       in-process compilation with ORC LLJIT
//   codegen_llvm_emit.cpp      target machines, the optimisation pipeline, object/asm/IR text
//
// Error handling: emission never throws and never returns null; the first
// error is kept in status_ (Fail) and emission continues on poison values, so
// callers check status() once at the end.
//
// Widened (vector) mode: inside a vectorized loop of L lanes every emitted
// value is either a scalar (uniform across lanes) or an <L x T> vector
// (varying). Binary operations splat the scalar side on demand, so loop
// invariant work stays scalar. mask_ (an <L x i1> or null) is the set of live
// lanes under varying conditions; loads and stores honour it.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::codegen {

// Registers the LLVM targets this process can generate code for (idempotent, thread-safe).
void InitializeLLVMTargets();

// The attributes every generated function carries for target t: its CPU and
// features, and, for SVE of a fixed length (Target::sve_bits), the vscale
// range that lets LLVM keep fixed-length vectors in SVE registers of that
// length (as clang's -msve-vector-bits does).
void AddTargetAttributes(llvm::Function* fn, const Target& t);

// Target machine for t; InvalidArgument naming the triple when LLVM lacks it.
Result<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const Target& t, int opt_level);

// A lowered, generated and optimised module with the machine it was built for.
struct CompiledModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string entry_name;  // the PrimFunc's name; the packed entry is entry_name + "_packed"
};
Result<CompiledModule> LowerAndGenerate(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options);
// Several PrimFuncs and the sequence entries calling them in one module
// (EmitCombinedObject); entry_name is `module_name`.
Result<CompiledModule> LowerAndGenerateAll(const std::vector<ir::PrimFunc>& funcs,
                                           const std::vector<SequenceEntry>& sequences,
                                           const std::string& module_name, const Target& t,
                                           const CodegenOptions& options);
// Machine code (object or assembly) for a module.
Result<std::string> EmitMachineCode(CompiledModule& m, llvm::CodeGenFileType type);

// Error codes generated functions return (0 is success).
inline constexpr int32_t kErrorOutOfMemory = kKernelErrorOutOfMemory;

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::LLVMContext& ctx, llvm::Module& module, const Target& target, const CodegenOptions& options);
  // Emits `name` and `name_packed` for a lowered PrimFunc.
  Status Generate(const ir::PrimFunc& f);

 private:
  // ---- per-function state (saved and restored around outlined parallel bodies)
  struct FunctionState {
    llvm::Function* function = nullptr;
    llvm::BasicBlock* entry = nullptr;        // static allocas go here
    std::vector<llvm::Value*> heap_buffers;   // live tunefarm_alloc results, freed on error exit
  };

  // module_.cpp
  llvm::Type* LLVMType(ir::DataType t);          // value type (bool -> i1)
  llvm::Type* StorageType(ir::DataType t);       // element type in memory (bool -> i8)
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool internal);
  void StartFunction(llvm::Function* fn);
  llvm::Value* Fail(Status s, llvm::Type* type = nullptr);
  llvm::Value* Splat(llvm::Value* v, int lanes);
  // Makes a and b the same shape (splatting the scalar one) for a binary op.
  void MatchLanes(llvm::Value*& a, llvm::Value*& b);
  llvm::Value* ConstI64(int64_t v);
  llvm::Value* ToI64(llvm::Value* v, bool is_signed);
  llvm::Function* RuntimeFunction(const std::string& name);
  llvm::Function* LibmFunction(const std::string& name, llvm::Type* type);
  llvm::MDNode* LoopMetadata(const std::vector<llvm::Metadata*>& properties);
  llvm::Metadata* LoopProperty(const std::string& name, std::optional<int> value = std::nullopt);
  // If rc (i32) is non-zero: free live heap buffers and return rc from the current function.
  void ReturnOnError(llvm::Value* rc);

  // expr.cpp
  llvm::Value* EmitExpr(const ir::Expr& e);
  llvm::Value* EmitBinary(const ir::ExprNode* op, const ir::Expr& a, const ir::Expr& b);
  llvm::Value* EmitDivMod(bool is_div, ir::DataType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* EmitCompare(ir::IRNodeKind kind, const ir::Expr& a, const ir::Expr& b);
  llvm::Value* EmitSelect(const ir::Select* op);
  llvm::Value* EmitCast(ir::DataType to, ir::DataType from, llvm::Value* v);
  llvm::Value* EmitLoad(const ir::Load* op);
  llvm::Value* EmitCall(const ir::Call* op);
  llvm::Value* EmitLibmCall(const std::string& f32_name, const std::string& f64_name, ir::DataType t,
                            llvm::Value* x);
  // Row-major flat element offset (i64, scalar or vector) and the element pointer(s).
  llvm::Value* FlatIndex(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);
  llvm::Value* BufferPointer(const ir::Buffer& buffer);

  // stmt.cpp
  void EmitStmt(const ir::Stmt& s);
  void EmitFor(const ir::For* op);
  void EmitStore(const ir::Store* op);
  void EmitAllocate(const ir::Allocate* op);
  void EmitIfThenElse(const ir::IfThenElse* op);
  // A serial loop var in [begin, end) (values of the var's type) with optional loop metadata.
  void EmitSerialLoop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, const ir::Stmt& body,
                      llvm::MDNode* loop_md);
  // Branches on a scalar i1, emitting then/else (else may be undefined).
  void EmitBranch(llvm::Value* cond, const ir::Stmt& then_case, const ir::Stmt& else_case);

  // vector.cpp
  // Empty when the body can be widened to `lanes` lanes, else the reason it cannot.
  std::string VectorizeBlocker(const ir::For* op, int64_t lanes);
  void EmitVectorizedFor(const ir::For* op, int64_t lanes);
  // Stride of a (flat) index expression in the vectorized loop var: 0 uniform,
  // nullopt not affine with a constant stride.
  std::optional<int64_t> Stride(const ir::Expr& e);
  std::optional<int64_t> FlatStride(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);
  llvm::Value* VectorLoad(const ir::Load* op, llvm::Value* ptr, llvm::Value* flat);
  llvm::Value* DeinterleavedLoad(llvm::Type* elem, llvm::Value* base, llvm::Value* flat, int stride, llvm::Align align);
  void VectorStore(const ir::Store* op, llvm::Value* value, llvm::Value* ptr, llvm::Value* flat);
  // The live-lane mask for a region under `cond` (a scalar cond is splat): mask_ & cond.
  llvm::Value* CombineMask(llvm::Value* cond);
  // Emits `emit` only if some lane of mask_ is live (for uniform loads/stores under a mask).
  llvm::Value* IfAnyLane(llvm::Type* type, const std::function<llvm::Value*()>& emit);

  // dot.cpp: a vectorized loop of 4 lanes around a pragma_dot_product loop.
  struct DotProduct {
    const ir::For* lanes = nullptr;  // the vectorized loop
    const ir::For* steps = nullptr;  // the annotated reduction loop inside it
    const ir::Store* store = nullptr;
    const ir::Load* a = nullptr;
    const ir::Load* b = nullptr;
    bool is_signed = true;   // i8 operands (sdot), else u8 (udot)
    int64_t acc_stride = 0;  // flat stride of the accumulator in the lane, non-zero
  };
  // Empty when `op` (whose body carries the annotation) is emitted as dot
  // products on this target, filling `dot`; else why it is not.
  std::string MatchDotProduct(const ir::For* op, DotProduct* dot);
  void EmitDotProduct(const DotProduct& dot);
  llvm::Value* DotOperand(const DotProduct& dot, const ir::Load* load, llvm::Value* lane0, llvm::Value* step0);
  // Binds the two loop variables to lane0 + lane and step0 + step (scalars).
  void BindDotStep(const DotProduct& dot, llvm::Value* lane0, llvm::Value* step0, int64_t lane, int64_t step);

  // parallel.cpp
  void EmitParallelFor(const ir::For* op);

  llvm::LLVMContext& ctx_;
  llvm::Module& module_;
  const Target target_;
  const bool inline_math_;  // CodegenOptions::inline_math
  llvm::IRBuilder<> builder_;
  Status status_;
  std::string func_name_;
  int outlined_count_ = 0;
  FunctionState fn_;
  std::unordered_map<const ir::Variable*, llvm::Value*> vars_;
  std::unordered_map<const ir::BufferNode*, llvm::Value*> buffers_;
  // The caller's buffers (the params of the function being generated): only
  // element-aligned, unlike the buffers the kernel allocates.
  std::unordered_set<const ir::BufferNode*> param_buffers_;

  // Widened mode (lanes_ == 0: scalar code).
  int lanes_ = 0;
  llvm::Value* mask_ = nullptr;
  std::unordered_map<const ir::Variable*, std::optional<int64_t>> strides_;  // varying vars only
};

// codegen_llvm_sequence.cpp: emits `sequence` into `module`, whose entries
// (external functions named in `entries`) are generated already.
// InvalidArgument when a call names no entry or passes the wrong number of
// slots.
Status GenerateSequence(llvm::Module& module, const SequenceEntry& sequence, const std::set<std::string>& entries,
                        const Target& target);

// True if the body of `op` is a loop annotated pragma_dot_product (codegen_llvm_dot.cpp).
bool HasDotProductAnnotation(const ir::For* op);

// True if e contains a Load, or an integer Div/Mod whose divisor is not a non-zero
// constant: evaluating it on a branch Select did not choose could fault.
bool MayFault(const ir::Expr& e);

}  // namespace tunefarm::codegen
