// PreparedCall: the prepack entry once, then the prepacked entry per call.
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"

#include <chrono>

#include "tunefarm/compiler/lower/split_prepack.h"

namespace tunefarm {

Result<std::unique_ptr<PreparedCall>> PreparedCall::Prepare(const JitKernel& kernel, const ir::PrimFunc& f,
                                                           std::vector<void*> args) {
  if (args.size() != f.params.size()) {
    return Status::InvalidArgument("kernel '" + f.name + "' takes " + std::to_string(f.params.size()) +
                                   " buffers, got " + std::to_string(args.size()));
  }
  std::unique_ptr<PreparedCall> call(new PreparedCall(kernel, args));
  std::optional<PrepackSplit> split = SplitPrepack(f);
  if (!split) return call;
  if (!kernel.has_prepack()) {
    return Status::Internal("kernel '" + f.name + "' has no prepack entries, but its PrimFunc packs a constant input "
                            "ahead: it was compiled from another PrimFunc");
  }
  std::vector<void*> prepack_args;
  for (size_t i : split->constant_params) prepack_args.push_back(args[i]);
  for (const ir::Buffer& b : split->packed) {
    call->packed_.push_back(HostBuffer::Like(b));
    prepack_args.push_back(call->packed_.back().data());
    call->args_.push_back(call->packed_.back().data());
  }
  auto start = std::chrono::steady_clock::now();
  TF_RETURN_IF_ERROR(kernel.RunPrepack(prepack_args));
  call->prepack_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return call;
}

Status PreparedCall::Run() const { return prepacked() ? kernel_.RunPrepacked(args_) : kernel_.Run(args_); }

int64_t PreparedCall::packed_bytes() const {
  int64_t bytes = 0;
  for (const HostBuffer& b : packed_) bytes += b.size_bytes();
  return bytes;
}

}  // namespace tunefarm
