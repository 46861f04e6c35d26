// Private to the LLVM code generator (compiler/codegen_llvm*.cpp and target.cpp).
//
// CodeGenLLVM translates one lowered PrimFunc into an llvm::Module. Its
// implementation is split by concept:
//   codegen_llvm_module.cpp    module/function setup, params, packed entry, types, helpers
//   codegen_llvm_expr.cpp      scalar and widened expressions, loads, casts, calls
//   codegen_llvm_stmt.cpp      statements, serial/unrolled loops, allocations, ifs
//   codegen_llvm_vector.cpp    vectorized loops: legality check and lane-widened bodies
//   codegen_llvm_dot.cpp       int8 dot products (pragma_dot_product) as AArch64 sdot/udot
//   codegen_llvm_mmla.cpp      int8 2x2 tiles (pragma_matrix_multiply_accumulate) as AArch64 smmla/ummla
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
  // The masked memory intrinsics, always at a power-of-two width: a vector of
  // another width (9 lanes, a span of 18) is padded with disabled lanes and
  // the result cut back. `mask` may be null (every lane on).
  llvm::Value* MaskedLoad(llvm::Type* vec_type, llvm::Value* ptr, llvm::Align align, llvm::Value* mask,
                          llvm::Value* passthru);
  llvm::Value* MaskedGather(llvm::Type* vec_type, llvm::Value* ptrs, llvm::Align align, llvm::Value* mask,
                            llvm::Value* passthru);
  void MaskedStore(llvm::Value* value, llvm::Value* ptr, llvm::Align align, llvm::Value* mask);
  void MaskedScatter(llvm::Value* value, llvm::Value* ptrs, llvm::Align align, llvm::Value* mask);
  // `v` (a vector) with lanes appended up to `lanes`, each a lane of zero.
  llvm::Value* PadLanes(llvm::Value* v, unsigned lanes);
  // The first `lanes` lanes of `v`.
  llvm::Value* CutLanes(llvm::Value* v, unsigned lanes);
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
  // The 16 operand bytes an int8 instruction reads from `load` in a nest of
  // `rows` x `steps` (rows * steps == 16) iterations: byte steps * r + k is
  // the load's byte at row r and step k (row_var and step_var offset by r
  // and k from where bind(0, 0) puts them). bind(r, k) binds the nest's
  // variables; one load when the bytes are in order, loads and a shuffle
  // for constant strides, else a load per byte.
  llvm::Value* Int8Operand(const ir::Load* load, const ir::Variable* row_var, int64_t rows, const ir::Variable* step_var,
                           int64_t steps, const std::function<void(int64_t, int64_t)>& bind);

  // mmla.cpp: 2 rows x 2 columns of loops around a pragma_matrix_multiply_accumulate loop.
  struct MatrixMultiply {
    const ir::For* rows = nullptr;   // the outer loop of 2
    const ir::For* cols = nullptr;   // the loop of 2 inside it
    const ir::For* steps = nullptr;  // the annotated reduction loop of 8 inside that
    const ir::Store* store = nullptr;
    const ir::Load* row_operand = nullptr;  // varies with rows, not with cols
    const ir::Load* col_operand = nullptr;  // varies with cols, not with rows
    bool is_signed = true;   // i8 operands (smmla), else u8 (ummla)
    int64_t acc_row_stride = 0;  // flat strides of the accumulator; the 4 elements distinct
    int64_t acc_col_stride = 0;
  };
  // Empty when `op` (the rows loop: its body's body carries the annotation)
  // is emitted as one smmla/ummla per iteration of the outer loops, filling
  // `mm`; else why it is not (kept for the annotated loop's metadata).
  std::string MatchMatrixMultiply(const ir::For* op, MatrixMultiply* mm);
  void EmitMatrixMultiply(const MatrixMultiply& mm);
  // Loop metadata property naming why the annotated loop `op` is generic.
  llvm::Metadata* MatrixMultiplyFallback(const ir::For* op);

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
  // Why an annotated matrix-multiply loop (by address) is generic, from
  // MatchMatrixMultiply on the rows loop around it; read when it is emitted.
  std::unordered_map<const ir::For*, std::string> mmla_blockers_;
};

// codegen_llvm_sequence.cpp: emits `sequence` into `module`, whose entries
// (external functions named in `entries`) are generated already.
// InvalidArgument when a call names no entry or passes the wrong number of
// slots.
Status GenerateSequence(llvm::Module& module, const SequenceEntry& sequence, const std::set<std::string>& entries,
                        const Target& target);

// True if the body of `op` is a loop annotated pragma_dot_product (codegen_llvm_dot.cpp).
bool HasDotProductAnnotation(const ir::For* op);
// True if the body of the body of `op` is a loop annotated
// pragma_matrix_multiply_accumulate (codegen_llvm_mmla.cpp).
bool HasMatrixMultiplyAnnotation(const ir::For* op);

// codegen_llvm_dot.cpp, shared with codegen_llvm_mmla.cpp: the body of an
// int8 reduction step, acc[idx] = acc[idx] + i32(a[..]) * i32(b[..]), with
// acc i32 and read where it is stored at an index without `step` or loads,
// a and b both i8 or both u8, read at indices without loads, not from acc.
struct Int8MultiplyAdd {
  const ir::Store* store = nullptr;
  const ir::Load* a = nullptr;
  const ir::Load* b = nullptr;
  bool is_signed = true;
};
// Empty when `body` is one, filling `out`; else why not.
std::string MatchInt8MultiplyAdd(const ir::Stmt& body, const ir::Variable* step, Int8MultiplyAdd* out);
bool HasLoad(const ir::Expr& e);
bool IndicesUse(const std::vector<ir::Expr>& indices, const ir::Variable* v);

// True if e contains a Load, or an integer Div/Mod whose divisor is not a non-zero
// constant: evaluating it on a branch Select did not choose could fault.
bool MayFault(const ir::Expr& e);

}  // namespace tunefarm::codegen
