// A CUDA GPU as the worker sees it: its name on the command line
// ("cuda:N"), what the driver says about it (limits the runner checks
// candidates against, and the hardware fingerprint its records carry), and
// the target text candidates for it name ("cuda -arch=sm_90").
//
// The driver is loaded at run time (worker/cuda_driver.h): every query here
// fails with a clear FailedPrecondition on a machine without an NVIDIA
// driver or without that device, and never crashes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/common/status.h"

namespace tunefarm {

struct CudaDeviceInfo {
  int index = 0;                      // the driver's ordinal (cuda:N)
  std::string name;                   // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;     // compute capability
  int sm_count = 0;
  int64_t total_memory_bytes = 0;
  int driver_version = 0;             // cuDriverGetVersion: 12040 is CUDA 12.4
  int clock_khz = 0;                  // SM clock
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int64_t l2_bytes = 0;
  int max_threads_per_block = 0;
  std::array<int64_t, 3> max_block = {0, 0, 0};
  std::array<int64_t, 3> max_grid = {0, 0, 0};
  int64_t max_shared_per_block = 0;        // without opting in (48 KiB)
  int64_t max_shared_per_block_optin = 0;  // with cuFuncSetAttribute (227 KiB on sm_90)
  int64_t max_registers_per_block = 0;
  int64_t max_registers_per_sm = 0;

  // "sm_90"
  std::string Arch() const;
  // "cuda -arch=sm_90": the target candidates for this device name.
  std::string TargetText() const;
  // "CUDA 12.4" from driver_version.
  std::string DriverText() const;
};

// The device index of a --device value: "cuda" is 0, "cuda:N" is N.
// InvalidArgument for anything else ("cuda:x", "cuda:-1", "gpu").
Result<int> ParseCudaDeviceIndex(std::string_view device);

// Asks the driver about device `index`. FailedPrecondition when there is no
// driver ("no NVIDIA driver (libcuda.so.1 not found: ...)"), no device, or
// no device of that index (naming how many there are).
Result<CudaDeviceInfo> QueryCudaDevice(int index);

// For `tunefarm tune --target "cuda -arch=sm_90"` on this machine: the first
// GPU whose architecture is `arch` (its index is the local measurer's
// device, "cuda:N"). FailedPrecondition when there is no driver or no GPU of
// that architecture (naming the GPUs there are).
Result<CudaDeviceInfo> FindCudaDeviceForArch(std::string_view arch);

// The toolchain named in CUDA records' fingerprints: tunefarm's lowering
// (its revision, compiler/codegen/llvm/toolchain.h) printed as CUDA C and
// compiled by NVRTC: "nvrtc lowering-r1".
std::string CudaToolchain();

// The fingerprint records measured on this device carry: isa "cuda", arch
// "sm_90", cores = SM count, features describing the exact part ("name=...",
// "memory_mib=...", "sm_clock_mhz=...", "memory_clock_mhz=...", "driver=...",
// "l2_kib=..."), toolchain as given.
HardwareFingerprint CudaFingerprint(const CudaDeviceInfo& info, std::string toolchain);

}  // namespace tunefarm
