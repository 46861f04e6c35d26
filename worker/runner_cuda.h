// The runner's CUDA GPU (device "cuda:N"): the device's primary context, the
// programs loaded on it with their buffers, launches and event timing.
//
// Threads: CudaGpu is opened and used on the runner's main thread (the one
// that measures); build threads only read its `info()` (immutable after
// Open) to check candidates against the device's limits.
//
// A CUDA error during a launch, a copy or a synchronisation can leave the
// context unusable (illegal address, launch failure: "sticky" errors), so
// every such error marks the GPU broken: the runner answers the candidate
// and exits, and LocalMeasurer measures the rest in a fresh runner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/cuda/cuda_module.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/measure/measure.h"
#include "tunefarm/worker/cuda_device.h"
#include "tunefarm/worker/cuda_fit.h"

namespace tunefarm::runner {

// A CUDA program ready to load: the generated module and its compiled code.
struct CudaBuild {
  cuda::CudaModule module;
  cuda::CompiledCuda compiled;
};

// Why `build` cannot run on `device` (cuda_fit.h); empty: it fits.
inline std::string CudaBuildDoesNotFit(const CudaBuild& build, const CudaDeviceInfo& device) {
  return CudaModuleDoesNotFit(build.module, build.compiled.kernels, device);
}

// Bytes of the scratch buffer written between timed groups with flush_cache:
// larger than the L2 of any GPU we target (50 MiB on H100, 60 on B200).
constexpr int64_t kCudaFlushBytes = int64_t(256) << 20;

class CudaGpu {
 public:
  // Loads the driver, retains device `index`'s primary context and makes it
  // current on this thread. FailedPrecondition naming why when there is no
  // driver or no such device.
  static Result<std::unique_ptr<CudaGpu>> Open(int index);
  ~CudaGpu();
  CudaGpu(const CudaGpu&) = delete;
  CudaGpu& operator=(const CudaGpu&) = delete;

  const CudaDeviceInfo& info() const { return info_; }
  const cuda_driver::Api& api() const { return cu_; }

  // Check(result, call) that marks the GPU broken on failure.
  Status Check(cuda_driver::CUresult result, const char* call);
  bool broken() const { return !broken_reason_.empty(); }
  const std::string& broken_reason() const { return broken_reason_; }

  // Writes kCudaFlushBytes of device memory (allocated on first use), queued
  // on the default stream before whatever is recorded next.
  Status FlushCache();

 private:
  CudaGpu(const cuda_driver::Api& cu, CudaDeviceInfo info, cuda_driver::CUdevice device, cuda_driver::CUcontext ctx)
      : cu_(cu), info_(std::move(info)), device_(device), context_(ctx) {}

  const cuda_driver::Api& cu_;
  CudaDeviceInfo info_;
  cuda_driver::CUdevice device_;
  cuda_driver::CUcontext context_;
  cuda_driver::CUdeviceptr scratch_ = 0;
  unsigned char flush_value_ = 0;
  std::string broken_reason_;
};

// One CudaBuild loaded on the GPU with every buffer of its module allocated
// (a zero-element buffer is a null pointer). Owns the module, the buffers
// and two timing events; frees them on destruction. Main thread only.
class CudaProgram {
 public:
  // Loading errors (a cubin the driver refuses, a kernel missing from it, a
  // kernel whose registers leave too few threads per block) are returned
  // without marking the GPU broken; the caller reports them as compile
  // errors. Out of memory is returned as is.
  static Result<std::unique_ptr<CudaProgram>> Load(CudaGpu& gpu, const CudaBuild& build);
  ~CudaProgram();
  CudaProgram(const CudaProgram&) = delete;
  CudaProgram& operator=(const CudaProgram&) = delete;

  const cuda::CudaModule& module() const { return module_; }
  Status Upload(int buffer, const void* data, int64_t bytes);
  Status Download(int buffer, void* data, int64_t bytes);
  Status Fill(int buffer, unsigned char byte);
  // Every launch in order, on the default stream, then a synchronisation:
  // seconds on the GPU (events around the launches).
  Result<double> RunOnce();
  // The timing recipe (measure/timing.h) with event-timed groups, the first
  // run (RunOnce) already done; seconds per run, one per group.
  Result<std::vector<double>> Time(const MeasureOptions& options, double first_run_seconds);

 private:
  explicit CudaProgram(CudaGpu& gpu) : gpu_(gpu) {}
  Status Enqueue();
  Result<double> TimeLaunches(int64_t number);

  CudaGpu& gpu_;
  cuda::CudaModule module_;
  cuda_driver::CUmodule handle_ = nullptr;
  std::vector<cuda_driver::CUfunction> functions_;  // one per launch
  std::vector<cuda_driver::CUdeviceptr> pointers_;  // one per module buffer
  cuda_driver::CUevent start_ = nullptr, end_ = nullptr;
};

}  // namespace tunefarm::runner
