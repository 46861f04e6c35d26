// Whether a compiled CUDA module fits a GPU (cuda_fit.h).
#include "tunefarm/worker/cuda_fit.h"

#include <map>

namespace tunefarm {

std::string CudaModuleDoesNotFit(const cuda::CudaModule& module, const std::vector<cuda::CudaKernelResources>& kernels,
                                 const CudaDeviceInfo& device) {
  std::map<std::string, const cuda::CudaKernelResources*> resources;
  for (const cuda::CudaKernelResources& r : kernels) resources[r.kernel] = &r;
  for (const cuda::CudaLaunch& launch : module.launches) {
    const std::string who = "kernel " + launch.kernel + ": ";
    const int64_t threads = launch.threads_per_block();
    if (threads < 1) return who + "a launch with no threads";
    if (threads > device.max_threads_per_block) {
      return who + std::to_string(threads) + " threads per block, more than the device's " +
             std::to_string(device.max_threads_per_block);
    }
    static const char* kAxes[] = {"x", "y", "z"};
    for (size_t axis = 0; axis < 3; ++axis) {
      if (launch.block[axis] > device.max_block[axis] || launch.block[axis] < 1) {
        return who + "block extent " + std::to_string(launch.block[axis]) + " along " + kAxes[axis] +
               " (the device allows 1 to " + std::to_string(device.max_block[axis]) + ")";
      }
      if (launch.grid[axis] > device.max_grid[axis] || launch.grid[axis] < 1) {
        return who + "grid extent " + std::to_string(launch.grid[axis]) + " along " + kAxes[axis] +
               " (the device allows 1 to " + std::to_string(device.max_grid[axis]) + ")";
      }
    }
    // Without ptxas' report for it (a log format this parser does not know),
    // the checks below are skipped; loading still checks threads against
    // the kernel's registers (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
    auto found = resources.find(launch.kernel);
    if (found == resources.end()) continue;
    const cuda::CudaKernelResources& r = *found->second;
    if (r.spill_bytes > 0) {
      return who + "spills " + std::to_string(r.spill_bytes) + " bytes of registers to local memory (" +
             std::to_string(r.registers) + " registers per thread)";
    }
    // Static shared memory fits the default 48 KiB; dynamic shared memory may
    // use the opt-in limit (CudaProgram::Load raises the kernel's maximum).
    const int64_t shared = r.shared_bytes + launch.dynamic_shared_bytes;
    const int64_t shared_limit =
        launch.dynamic_shared_bytes > 0 ? device.max_shared_per_block_optin : device.max_shared_per_block;
    if (shared > shared_limit) {
      return who + std::to_string(shared) + " bytes of shared memory per block, more than the device's " +
             std::to_string(shared_limit);
    }
    if (int64_t(r.registers) * threads > device.max_registers_per_block) {
      return who + std::to_string(r.registers) + " registers x " + std::to_string(threads) +
             " threads per block, more than the device's " + std::to_string(device.max_registers_per_block) +
             " registers per block";
    }
  }
  return "";
}

}  // namespace tunefarm
