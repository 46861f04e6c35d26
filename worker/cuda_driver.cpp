// Loading the CUDA driver at run time (cuda_driver.h).
#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tunefarm::cuda_driver {

namespace {

constexpr const char* kDefaultLibrary = "libcuda.so.1";

// Resolves `name` (or, when the driver lacks it, `fallback`) into `slot`.
template <typename F>
Status Resolve(void* handle, const std::string& library, F& slot, const char* name, const char* fallback = nullptr) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr && fallback != nullptr) symbol = ::dlsym(handle, fallback);
  if (symbol == nullptr) {
    return Status::FailedPrecondition("the NVIDIA driver " + library + " lacks " + name +
                                      " (a driver too old for tunefarm's CUDA device?)");
  }
  slot = reinterpret_cast<F>(symbol);
  return Status::OK();
}

}  // namespace

std::string Api::Describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != kCudaSuccess || name == nullptr) {
    return "CUDA error " + std::to_string(result);
  }
  std::string out = name;
  if (cuGetErrorString != nullptr && cuGetErrorString(result, &text) == kCudaSuccess && text != nullptr) {
    out += std::string(" (") + text + ")";
  }
  return out;
}

Status Api::Check(CUresult result, const char* call) const {
  if (result == kCudaSuccess) return Status::OK();
  return Status::Internal(std::string(call) + ": " + Describe(result));
}

Result<std::unique_ptr<Api>> LoadDriver(const std::string& library) {
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace (NVRTC
  // and LLVM's JIT share this process).
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Status::FailedPrecondition("no NVIDIA driver (" + library + " not found: " +
                                      std::string(why != nullptr ? why : "dlopen failed") + ")");
  }
  // The handle is never closed: function pointers into it are kept for the
  // process's life, and unloading a GPU driver is not worth the risk.
  auto api = std::make_unique<Api>();
  Api& a = *api;
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuGetErrorName, "cuGetErrorName"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuGetErrorString, "cuGetErrorString"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuInit, "cuInit"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDriverGetVersion, "cuDriverGetVersion"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDeviceGetCount, "cuDeviceGetCount"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDeviceGet, "cuDeviceGet"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDeviceGetName, "cuDeviceGetName"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDeviceGetAttribute, "cuDeviceGetAttribute"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDeviceTotalMem, "cuDeviceTotalMem_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuCtxSetCurrent, "cuCtxSetCurrent"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuCtxSynchronize, "cuCtxSynchronize"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuStreamSynchronize, "cuStreamSynchronize"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuModuleLoadData, "cuModuleLoadData"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuModuleGetFunction, "cuModuleGetFunction"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuModuleUnload, "cuModuleUnload"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuFuncGetAttribute, "cuFuncGetAttribute"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuFuncSetAttribute, "cuFuncSetAttribute"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuLaunchKernel, "cuLaunchKernel"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuMemAlloc, "cuMemAlloc_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuMemFree, "cuMemFree_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuMemcpyDtoH, "cuMemcpyDtoH_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuMemsetD8, "cuMemsetD8_v2"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuEventCreate, "cuEventCreate"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuEventRecord, "cuEventRecord"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuEventSynchronize, "cuEventSynchronize"));
  TF_RETURN_IF_ERROR(
      Resolve(handle, library, a.cuEventElapsedTime, "cuEventElapsedTime_v2", /*fallback=*/"cuEventElapsedTime"));
  TF_RETURN_IF_ERROR(Resolve(handle, library, a.cuEventDestroy, "cuEventDestroy_v2"));

  CUresult init = a.cuInit(0);
  if (init != kCudaSuccess) {
    return Status::FailedPrecondition("the NVIDIA driver " + library + " did not start: cuInit: " + a.Describe(init));
  }
  return api;
}

Result<const Api*> Driver() {
  static std::once_flag once;
  static Result<std::unique_ptr<Api>>* loaded = nullptr;
  std::call_once(once, [] {
    const char* override_library = std::getenv("TUNEFARM_LIBCUDA");
    std::string library = override_library != nullptr && *override_library ? override_library : kDefaultLibrary;
    // Leaked on purpose: the driver outlives every static destructor that
    // might still release a context.
    loaded = new Result<std::unique_ptr<Api>>(LoadDriver(library));
  });
  if (!loaded->ok()) return loaded->status();
  return static_cast<const Api*>(loaded->value().get());
}

}  // namespace tunefarm::cuda_driver
