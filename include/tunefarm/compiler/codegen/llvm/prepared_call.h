// PreparedCall: a compiled kernel bound to its buffers, with its constant
// inputs packed once (split_prepack.h) -- how a caller that runs a kernel
// many times on the same weights calls it (the measurement runner, the
// benchmarks, a user's inference loop through the generated header).
#pragma once

#include <memory>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

class PreparedCall {
 public:
  // `f` is the PrimFunc `kernel` was compiled from, `args` one pointer per
  // param of f. When f has a prepack split and the kernel its entries, runs
  // the prepack entry now, into packed buffers this object owns; Run then
  // calls the prepacked entry. Otherwise Run calls the whole kernel.
  // `kernel` and the buffers behind `args` must outlive this object, and
  // the constant inputs must keep the values they had here (prepare again
  // after changing them).
  static Result<std::unique_ptr<PreparedCall>> Prepare(const JitKernel& kernel, const ir::PrimFunc& f,
                                                       std::vector<void*> args);

  // One call of the kernel (without the packing, when prepacked()).
  Status Run() const;
  bool prepacked() const { return !packed_.empty(); }
  // Bytes of the packed buffers (0 when not prepacked).
  int64_t packed_bytes() const;
  double prepack_seconds() const { return prepack_seconds_; }

 private:
  PreparedCall(const JitKernel& kernel, std::vector<void*> args) : kernel_(kernel), args_(std::move(args)) {}
  const JitKernel& kernel_;
  std::vector<void*> args_;  // f's params, then the packed buffers when prepacked
  std::vector<HostBuffer> packed_;
  double prepack_seconds_ = 0;
};

}  // namespace tunefarm
