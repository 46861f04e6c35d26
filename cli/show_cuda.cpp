// `tunefarm show --target cuda ...`: the GPU half of `show`. The stages a
// cuda candidate goes through in a worker (the default GPU program when no
// record is shown, LowerForCuda, GenerateCuda, NVRTC) printed for a person
// to read, so that a tuned GPU kernel can be inspected as a CPU one can.
#include "show_cuda.h"

#include <fmt/core.h>

#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/verify_gpu.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"

namespace tunefarm::cli {

namespace {

std::string Dims(const std::array<int64_t, 3>& d) { return fmt::format("({}, {}, {})", d[0], d[1], d[2]); }

// ptxas' report for each kernel, or why there is none: the source is still
// worth reading on a machine without the CUDA toolkit.
void PrintResources(const cuda::CudaModule& module, const Target& target) {
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) {
    fmt::print("\n# no ptxas report: NVRTC is not available here ({})\n", why_not);
    return;
  }
  auto compiled = cuda::CompileCudaSource(module.source, target.arch);
  if (!compiled.ok()) {
    fmt::print("\n# NVRTC rejected this source for {}: {}\n", target.arch, compiled.status().message());
    return;
  }
  fmt::print("\n# ptxas for {}\n", target.arch);
  for (const cuda::CudaKernelResources& k : compiled->kernels) {
    fmt::print("#   {}: {} registers per thread, {} bytes spilled, {} bytes of static shared memory\n", k.kernel,
               k.registers, k.spill_bytes, k.shared_bytes);
  }
}

}  // namespace

Result<ir::PrimFunc> GpuProgramToShow(const ir::PrimFunc& shown, bool tuned) {
  if (tuned) return shown;
  // What a worker measures for a workload with no record: the default GPU
  // program, not the CPU loop nest (which binds no thread).
  TF_ASSIGN_OR_RETURN(ir::PrimFunc program, DefaultGpuSchedule(shown));
  fmt::print("\n# default GPU program (what a cuda worker runs with no record)\n{}", ir::ToString(program));
  return program;
}

Status PrintCudaStages(const ir::PrimFunc& program, const Target& target, bool lowered, bool llvm_ir, bool source) {
  if (llvm_ir) {
    return Status::InvalidArgument("--llvm: target '" + target.ToString() +
                                   "' is compiled as CUDA C, not LLVM IR; --asm prints its CUDA C");
  }
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered_func, cuda::LowerForCuda(program, GpuLimitsFor(target)));
  if (lowered) fmt::print("\n# after lowering for CUDA\n{}", ir::ToString(lowered_func));
  if (!source) return Status::OK();
  TF_ASSIGN_OR_RETURN(cuda::CudaModule module, cuda::GenerateCuda(lowered_func));
  fmt::print("\n# CUDA C for {}\n{}", target.ToString(), module.source);
  fmt::print("\n# launches, in order\n");
  for (const cuda::CudaLaunch& l : module.launches) {
    fmt::print("#   {}: grid {}, block {}{}\n", l.kernel, Dims(l.grid), Dims(l.block),
               l.dynamic_shared_bytes > 0 ? fmt::format(", {} bytes of dynamic shared memory", l.dynamic_shared_bytes)
                                          : std::string());
  }
  PrintResources(module, target);
  return Status::OK();
}

}  // namespace tunefarm::cli
