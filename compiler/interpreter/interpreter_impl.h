// The reference interpreter's walker, shared by its two source files:
// interpreter.cpp (statements, expressions, dtype-exact arithmetic) and
// interpreter_gpu.cpp (kernels: blocks, their threads, barriers, shared
// memory).
//
// An Interpreter walks one thread of control. At the grid level (the calling
// thread) it runs CPU code and the blockIdx loops of kernels; for each block
// it makes one Interpreter per GPU thread, each starting from a copy of the
// grid level's variables and buffers, with `thread_` set. Errors travel as
// InterpError and never leave the interpreter's files.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::interp {

struct InterpError {
  Status status;
};

union Scalar {
  int64_t i;
  double f;
};

class GpuContext;  // kernels' analysis and the fibers threads run on (interpreter_gpu.cpp)
struct GpuThread;  // one thread of the block being run (interpreter_gpu.cpp)

class Interpreter {
 public:
  Interpreter();
  ~Interpreter();
  Interpreter(Interpreter&&) noexcept;
  Interpreter& operator=(Interpreter&&) noexcept;

  // `data` outlives the walk.
  void BindBuffer(const ir::BufferNode* b, char* data) { buffers_.push_back({b, data}); }
  void Exec(const ir::Stmt& s);

  [[noreturn]] static void Fail(Status s) { throw InterpError{std::move(s)}; }

 private:
  struct VarSlot {
    const ir::Variable* var;
    Scalar value;
  };
  struct BufferSlot {
    const ir::BufferNode* buffer;
    char* data;
  };

  // interpreter.cpp
  Scalar LookupVar(const ir::Variable* v) const;
  char* LookupBuffer(const ir::BufferNode* b) const;
  int64_t Offset(const ir::BufferNode* b, const std::vector<ir::Expr>& indices, const char* what);
  void ExecFor(const ir::For* op, const ir::Stmt& self);
  void ExecSerialFor(const ir::For* op);
  void ExecStore(const ir::Store* op);
  void ExecAllocate(const ir::Allocate* op);
  void ExecBlock(const ir::Block* op);
  Scalar Eval(const ir::Expr& e);
  Scalar EvalCast(const ir::Cast* op);
  Scalar EvalCall(const ir::Call* op);

  // interpreter_gpu.cpp
  // A loop bound to blockIdx / threadIdx / vthread, at the grid level or in a thread.
  void ExecBoundFor(const ir::For* op, const ir::Stmt& self);
  void ExecBarrier(const ir::Stmt& self);
  // The block's one copy of a shared buffer (created, poisoned, on first use).
  char* BlockStorage(const ir::BufferNode* b);
  // Runs `body` once per thread of a block, in phases between barriers.
  void RunBlock(const ir::Stmt& body);
  void RunBlockInPhases(const ir::Stmt& body, std::vector<GpuThread>& threads);
  std::string GridPosition() const;

  std::vector<VarSlot> vars_;
  std::vector<BufferSlot> buffers_;
  std::unique_ptr<GpuContext> gpu_;  // grid level only: made at the first kernel
  GpuThread* thread_ = nullptr;      // set while walking as one thread of a block
};

}  // namespace tunefarm::interp
