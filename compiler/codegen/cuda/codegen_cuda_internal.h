// CudaKernelEmitter: prints one root loop nest as the body of one CUDA
// kernel. Private to compiler/codegen/cuda/.
//
// GenerateCuda (codegen_cuda.cpp) walks the root of the function and makes
// one emitter per kernel; the emitter scans the nest's thread bindings
// (ScanBindings), then prints statements (codegen_cuda_stmt.cpp),
// expressions (codegen_cuda_expr.cpp) and vectorized loops
// (codegen_cuda_vector.cpp). Errors are recorded once (Fail) and stop the
// printing; the caller reads status().
#pragma once

#include <array>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::cuda::detail {

// C identifiers, unique within one module: every variable and buffer gets one
// name, made from its IR name, that collides with nothing the source uses.
class NameTable {
 public:
  NameTable();
  // The name of `key` (a Variable or BufferNode), made on first use.
  const std::string& NameOf(const void* key, const std::string& hint);
  // A fresh name that no other key has (kernel names, temporaries).
  std::string Fresh(const std::string& hint);

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
};

// C type of a storage element (f16: its bits, unsigned short); empty for
// types CUDA C here does not express (vectors, f8).
std::string CType(ir::DataType t);
// C type of a value of type t: CType, but float for f16 (computed in float).
std::string ValueCType(ir::DataType t);

// The source's helpers (floor division), ahead of the kernels.
const char* CudaPrelude();

class CudaKernelEmitter {
 public:
  explicit CudaKernelEmitter(NameTable* names) : names_(names) {}

  // Prints the kernel body of `root` (a loop bound to blockIdx.*).
  void Run(const ir::Stmt& root);

  const Status& status() const { return status_; }
  std::string body() const { return out_.str(); }
  // The kernel's shared arrays, each at a 16-byte aligned offset.
  struct SharedArray {
    std::string type, name;
    int64_t count = 0, offset = 0;
  };
  const std::vector<SharedArray>& shared_arrays() const { return shared_arrays_; }
  int64_t shared_bytes() const { return shared_bytes_; }
  std::array<int64_t, 3> grid() const { return {extents_.at("blockIdx.x"), extents_.at("blockIdx.y"), extents_.at("blockIdx.z")}; }
  std::array<int64_t, 3> block() const {
    return {extents_.at("threadIdx.x"), extents_.at("threadIdx.y"), extents_.at("threadIdx.z")};
  }
  // Global buffers the kernel reads / writes.
  const std::set<const ir::BufferNode*>& reads() const { return reads_; }
  const std::set<const ir::BufferNode*>& writes() const { return writes_; }

 private:
  // ---- codegen_cuda_stmt.cpp
  void ScanBindings(const ir::Stmt& s, std::map<std::string, int64_t>& enclosing);
  void EmitStmt(const ir::Stmt& s);
  void EmitFor(const ir::For* op);
  void EmitBoundLoop(const ir::For* op);
  void EmitAllocate(const ir::Allocate* op);
  void EmitStore(const ir::Store* op);
  // Declares a loop or let variable of integer type `t` with range `range`
  // (if known); returns its C name.
  std::string DeclareVar(const ir::Var& v, std::optional<ir::Interval> range);

  // ---- codegen_cuda_vector.cpp
  // A vectorized loop as vector loads/stores; false (nothing printed) when it
  // must stay a scalar loop.
  bool TryEmitVectorLoop(const ir::For* op);

  // ---- codegen_cuda_expr.cpp
 public:
  std::string EmitExpr(const ir::Expr& e);
  // `value` (printed from `value_type`) as what a store into `buffer` writes.
  std::string StoreValue(const ir::Buffer& buffer, ir::DataType value_type, const std::string& value);
  // An index or bound: in int where it provably fits, without widening.
  std::string EmitIndex(const ir::Expr& e);
  // The row-major flat index of `indices` into `buffer`, simplified.
  ir::Expr FlatIndex(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) const;

 private:
  std::string EmitExprIn(const ir::Expr& e, bool narrow);
  std::string EmitBinary(const ir::Expr& e, bool narrow);
  std::string EmitDivMod(const ir::Expr& a, const ir::Expr& b, ir::DataType t, bool is_div, bool narrow);
  std::string EmitCall(const ir::Call* op, bool narrow);
  std::string EmitFloatCall(const ir::Call* op, bool f32);
  std::string EmitLiteral(const ir::Expr& e, bool narrow);
  std::string EmitVar(const ir::Variable* v, bool narrow);
  // Every i64 subexpression of e has a known bound inside int32.
  bool FitsInt32(const ir::Expr& e) const;
  std::string BufferName(const ir::Buffer& b);
  void NoteRead(const ir::Buffer& b);

 public:
  void Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  void Line(const std::string& text);

 private:
  NameTable* names_;
  Status status_;
  std::ostringstream out_;
  int indent_ = 1;
  std::map<std::string, int64_t> extents_;  // launch extent per tag
  std::vector<SharedArray> shared_arrays_;
  int64_t shared_bytes_ = 0;
  std::set<const ir::BufferNode*> reads_, writes_;
  std::set<const ir::BufferNode*> on_chip_;          // shared / local buffers allocated in the kernel
  std::map<const ir::Variable*, bool> var_is_int_;  // C type of i64 vars: int (true) or long long
  ir::RangeMap ranges_;
  std::map<std::string, int64_t> bound_;  // tags bound by the loops enclosing what is printed
  int thread_loops_ = 0;                   // threadIdx loops enclosing what is printed
  // Inside a vectorized loop's lane k: the loop var is k; some loads are
  // components of vectors loaded ahead.
  std::map<const ir::Variable*, int64_t> lane_value_;
  std::map<const ir::Load*, std::string> load_subst_;
};

}  // namespace tunefarm::cuda::detail
