// Whether a compiled CUDA module can run on a GPU, decided before anything
// runs: what would fail to launch (too many threads, shared memory or
// registers for a block, a grid too large) or run slowly for a reason the
// tuner should not explore (spilled registers). The runner rejects such a
// candidate as a compile_error naming the reason, as TVM rejects programs
// that fail its GPU verification.
#pragma once

#include <string>
#include <vector>

#include "tunefarm/compiler/codegen/cuda/cuda_module.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/worker/cuda_device.h"

namespace tunefarm {

// Why `module`, compiled with `kernels` (ptxas' report), cannot run on
// `device`, naming the kernel: spills (spill_bytes > 0), threads per block
// beyond the device's maximum (in total or along an axis), a grid extent
// beyond the device's, static plus dynamic shared memory beyond a block's
// limit (the opt-in limit when the launch uses dynamic shared memory),
// registers × threads beyond a block's register file. The checks that need
// ptxas' report are skipped for a kernel it does not list. Empty: it fits.
std::string CudaModuleDoesNotFit(const cuda::CudaModule& module, const std::vector<cuda::CudaKernelResources>& kernels,
                                 const CudaDeviceInfo& device);

}  // namespace tunefarm
