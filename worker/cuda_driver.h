// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), never
// linked: a tunefarm built on a machine with the CUDA toolkit still starts,
// builds and measures CPU candidates on a machine without an NVIDIA driver,
// and says so clearly when asked for a GPU.
//
// Only what the CUDA device uses is declared here (types, a few enum values
// copied from the toolkit's cuda.h, and one function pointer per call), so
// no CUDA header is needed to build tunefarm.
//
// Internal to worker/ (the runner and the cuda device backend).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tunefarm/common/status.h"

namespace tunefarm::cuda_driver {

// The driver's types, as cuda.h declares them (64-bit host).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;

// Values from /usr/local/cuda/include/cuda.h (CUDA 13.0), stable across versions.
constexpr CUresult kCudaSuccess = 0;             // CUDA_SUCCESS
constexpr CUresult kCudaErrorNoDevice = 100;     // CUDA_ERROR_NO_DEVICE
// CUdevice_attribute
constexpr int kAttrMaxThreadsPerBlock = 1;       // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
constexpr int kAttrMaxBlockDimX = 2;             // ..._MAX_BLOCK_DIM_X (Y = 3, Z = 4)
constexpr int kAttrMaxGridDimX = 5;              // ..._MAX_GRID_DIM_X (Y = 6, Z = 7)
constexpr int kAttrMaxSharedMemoryPerBlock = 8;  // ..._MAX_SHARED_MEMORY_PER_BLOCK
constexpr int kAttrMaxRegistersPerBlock = 12;    // ..._MAX_REGISTERS_PER_BLOCK
constexpr int kAttrClockRate = 13;               // ..._CLOCK_RATE (kHz)
constexpr int kAttrMultiprocessorCount = 16;     // ..._MULTIPROCESSOR_COUNT
constexpr int kAttrMemoryClockRate = 36;         // ..._MEMORY_CLOCK_RATE (kHz)
constexpr int kAttrGlobalMemoryBusWidth = 37;    // ..._GLOBAL_MEMORY_BUS_WIDTH (bits)
constexpr int kAttrL2CacheSize = 38;             // ..._L2_CACHE_SIZE (bytes)
constexpr int kAttrComputeCapabilityMajor = 75;  // ..._COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;  // ..._COMPUTE_CAPABILITY_MINOR
constexpr int kAttrMaxRegistersPerMultiprocessor = 82;  // ..._MAX_REGISTERS_PER_MULTIPROCESSOR
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;   // ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
// CUfunction_attribute
constexpr int kFuncMaxThreadsPerBlock = 0;       // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
constexpr int kFuncSharedSizeBytes = 1;          // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
constexpr int kFuncLocalSizeBytes = 3;           // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
constexpr int kFuncNumRegs = 4;                  // CU_FUNC_ATTRIBUTE_NUM_REGS
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// CUevent_flags
constexpr unsigned kEventDefault = 0;            // CU_EVENT_DEFAULT

// One pointer per driver call, resolved by its exported name (the _v2 names
// cuda.h maps the plain ones to).
struct Api {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device) = nullptr;  // cuDeviceTotalMem_v2
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;  // cuDevicePrimaryCtxRelease_v2
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x,
                             unsigned block_y, unsigned block_z, unsigned shared_bytes, CUstream stream,
                             void** params, void** extra) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;  // cuMemAlloc_v2
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;                  // cuMemFree_v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;        // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count) = nullptr;  // _v2
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  // cuEventElapsedTime_v2 where the driver has it (CUDA 12.8+), else cuEventElapsedTime.
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;  // cuEventDestroy_v2
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;

  // "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)";
  // "CUDA error 999" for a code the driver does not name.
  std::string Describe(CUresult result) const;
  // OK for kCudaSuccess; else Internal "<call>: <Describe(result)>". The
  // error name is always in the message, so callers and logs can match it.
  Status Check(CUresult result, const char* call) const;
};

// Loads `library` (a file name for the loader's search, or a path), resolves
// every call and runs cuInit(0). FailedPrecondition "no NVIDIA driver
// (<library> not found: <dlerror>)" when it cannot be opened; a missing
// symbol or a failing cuInit (no device, driver/kernel mismatch) is
// FailedPrecondition naming it too. Each call loads anew (tests).
Result<std::unique_ptr<Api>> LoadDriver(const std::string& library);

// The process's driver: LoadDriver("libcuda.so.1") on first use, or the
// library named by $TUNEFARM_LIBCUDA (to test a machine without one), then
// kept (and never unloaded) for the process's life. Thread-safe. A failure is
// remembered: every later call returns the same status.
Result<const Api*> Driver();

}  // namespace tunefarm::cuda_driver
