// Private to compiler/: the CUDA code generator as a CodeGenerator
// (codegen.h), which the registry (codegen/codegen_registry.cpp) serves
// target kind `cuda` with.
#pragma once

#include <memory>

#include "tunefarm/compiler/codegen/codegen.h"

namespace tunefarm {

// A new generator for kind `cuda`: EmitObject lowers (LowerForCuda),
// generates CUDA C (GenerateCuda) and compiles it with NVRTC for the
// target's arch, returning the cubin. No JIT: kernels run on a CUDA device
// (the worker's), which also needs GenerateCuda's launches.
std::unique_ptr<CodeGenerator> MakeCudaCodeGenerator();

}  // namespace tunefarm
