// NVRTC: CUDA C to a cubin in process, with ptxas' resource report.
//
// libnvrtc is loaded with dlopen on first use (once, thread-safe), never
// linked: tunefarm builds and runs without CUDA, and says why a CUDA compile
// cannot happen. Searched in order: $CUDA_HOME/lib64, /usr/local/cuda/lib64,
// then the dynamic loader's path; for each, libnvrtc.so, libnvrtc.so.13,
// libnvrtc.so.12.
//
// Thread safety: every function may be called from any thread; each
// compilation has its own NVRTC program.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::cuda {

// What ptxas reports for one __global__ function.
struct CudaKernelResources {
  std::string kernel;
  int registers = 0;          // per thread
  int64_t spill_bytes = 0;    // bytes of spill stores per thread
  int64_t shared_bytes = 0;   // static shared memory per block
  int64_t local_bytes = 0;    // stack frame / local memory per thread
};

struct CompiledCuda {
  std::string cubin;  // the ELF image for the requested arch
  std::string log;    // NVRTC's log (ptxas' report among it)
  std::vector<CudaKernelResources> kernels;  // in the order ptxas reports them
};

// Compiles `source` for `arch` ("sm_80", "sm_90": "sm_" then digits, else
// InvalidArgument). Options: --gpu-architecture=<arch> -default-device
// --std=c++17 --ptxas-options=-v. A source that does not compile is
// InvalidArgument with NVRTC's log; no NVRTC is FailedPrecondition saying
// where it was looked for.
Result<CompiledCuda> CompileCudaSource(const std::string& source, std::string_view arch);

// True when NVRTC can be loaded; otherwise false, with why in *why_not (if
// not null): the paths tried and the loader's errors.
bool NvrtcAvailable(std::string* why_not);

// Parses ptxas' `-v` report (what NVRTC's log holds) into one entry per
// kernel. Lines it does not know are skipped.
std::vector<CudaKernelResources> ParsePtxasReport(std::string_view log);

}  // namespace tunefarm::cuda
