// Helpers for the CUDA code generator's tests: lower and generate a GPU
// program, and compile its source with NVRTC for the architectures tunefarm
// targets (skipped, saying why, where NVRTC cannot be loaded).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::testing {

inline Result<cuda::CudaModule> LowerAndGenerate(const ir::PrimFunc& scheduled) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, cuda::LowerForCuda(scheduled));
  return cuda::GenerateCuda(lowered);
}

// How many times `needle` occurs in `text`.
inline int CountOf(std::string_view text, std::string_view needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

#define TF_SKIP_WITHOUT_NVRTC()                                      \
  do {                                                               \
    std::string why_not_;                                            \
    if (!::tunefarm::cuda::NvrtcAvailable(&why_not_)) {              \
      GTEST_SKIP() << "NVRTC is not available: " << why_not_;        \
    }                                                                \
  } while (0)

// Compiles the module for sm_80 and sm_90 and checks ptxas reported every
// launched kernel.
inline ::testing::AssertionResult CompilesForGpus(const cuda::CudaModule& module) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto compiled = cuda::CompileCudaSource(module.source, arch);
    if (!compiled.ok()) {
      return ::testing::AssertionFailure() << arch << ": " << compiled.status().ToString() << "\n" << module.source;
    }
    if (compiled->cubin.size() < 4 || compiled->cubin.compare(1, 3, "ELF") != 0) {
      return ::testing::AssertionFailure() << arch << ": the cubin is not an ELF image";
    }
    for (const cuda::CudaLaunch& launch : module.launches) {
      bool found = false;
      for (const cuda::CudaKernelResources& k : compiled->kernels) {
        if (k.kernel != launch.kernel) continue;
        found = true;
        if (k.registers <= 0) return ::testing::AssertionFailure() << arch << ": no registers for " << k.kernel;
      }
      if (!found) {
        return ::testing::AssertionFailure() << arch << ": ptxas reported no kernel " << launch.kernel << "\n"
                                             << compiled->log;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tunefarm::testing
