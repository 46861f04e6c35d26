// The CUDA code generator as the registry's generator for target kind `cuda`.
#include "codegen/cuda/codegen_cuda_generator.h"

#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"

namespace tunefarm {
namespace {

class CudaCodeGenerator final : public CodeGenerator {
 public:
  std::string_view kind() const override { return "cuda"; }

  // The cubin for t.arch. CodegenOptions are CPU options (prepack entries,
  // inline math): CUDA C calls CUDA's own math functions.
  Result<std::string> EmitObject(const ir::PrimFunc& f, const Target& t, const CodegenOptions&) const override {
    if (t.kind != "cuda") {
      return Status::InvalidArgument("cuda code generator: target " + t.ToString() + " is not a cuda target");
    }
    TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, cuda::LowerForCuda(f));
    TF_ASSIGN_OR_RETURN(cuda::CudaModule module, cuda::GenerateCuda(lowered));
    TF_ASSIGN_OR_RETURN(cuda::CompiledCuda compiled, cuda::CompileCudaSource(module.source, t.arch));
    return std::move(compiled.cubin);
  }

  bool can_jit() const override { return false; }

  Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc&, const Target& t,
                                                const CodegenOptions&) const override {
    return Status::Unimplemented("cuda code generator: " + t.ToString() +
                                 " kernels run on a CUDA device, not in this process");
  }
};

}  // namespace

std::unique_ptr<CodeGenerator> MakeCudaCodeGenerator() { return std::make_unique<CudaCodeGenerator>(); }

}  // namespace tunefarm
