// What the driver says about a CUDA device (cuda_device.h).
#include "tunefarm/worker/cuda_device.h"

#include <charconv>

#include "cuda_driver.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"

namespace tunefarm {

using cuda_driver::Api;
using cuda_driver::CUdevice;

std::string CudaDeviceInfo::Arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }

std::string CudaDeviceInfo::TargetText() const { return "cuda -arch=" + Arch(); }

std::string CudaDeviceInfo::DriverText() const {
  return "CUDA " + std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

Result<int> ParseCudaDeviceIndex(std::string_view device) {
  if (device == "cuda") return 0;
  constexpr std::string_view kPrefix = "cuda:";
  if (device.substr(0, kPrefix.size()) == kPrefix) {
    std::string_view digits = device.substr(kPrefix.size());
    int index = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && index >= 0) return index;
  }
  return Status::InvalidArgument("device '" + std::string(device) +
                                 "' is not a CUDA device name (expected cuda or cuda:N, N the GPU's index)");
}

namespace {

Status Attribute(const Api& cu, CUdevice device, int attribute, int64_t& out) {
  int value = 0;
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDeviceGetAttribute(&value, attribute, device),
                              ("cuDeviceGetAttribute(" + std::to_string(attribute) + ")").c_str()));
  out = value;
  return Status::OK();
}

Status Attribute(const Api& cu, CUdevice device, int attribute, int& out) {
  int64_t value = 0;
  TF_RETURN_IF_ERROR(Attribute(cu, device, attribute, value));
  out = int(value);
  return Status::OK();
}

Result<CudaDeviceInfo> Query(const Api& cu, int index) {
  int count = 0;
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0) return Status::FailedPrecondition("no CUDA device: the NVIDIA driver reports no GPU");
  if (index < 0 || index >= count) {
    return Status::FailedPrecondition("no CUDA device cuda:" + std::to_string(index) + ": the driver reports " +
                                      std::to_string(count) + " GPU(s), cuda:0 to cuda:" + std::to_string(count - 1));
  }
  CudaDeviceInfo info;
  info.index = index;
  CUdevice device = 0;
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDeviceGet(&device, index), "cuDeviceGet"));
  char name[256] = {};
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDeviceGetName(name, int(sizeof(name)) - 1, device), "cuDeviceGetName"));
  info.name = name;
  size_t memory = 0;
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem"));
  info.total_memory_bytes = int64_t(memory);
  TF_RETURN_IF_ERROR(cu.Check(cu.cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion"));
  namespace d = cuda_driver;
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrComputeCapabilityMajor, info.cc_major));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrComputeCapabilityMinor, info.cc_minor));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMultiprocessorCount, info.sm_count));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrClockRate, info.clock_khz));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMemoryClockRate, info.memory_clock_khz));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrGlobalMemoryBusWidth, info.memory_bus_bits));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrL2CacheSize, info.l2_bytes));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxThreadsPerBlock, info.max_threads_per_block));
  for (int axis = 0; axis < 3; ++axis) {
    TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxBlockDimX + axis, info.max_block[size_t(axis)]));
    TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxGridDimX + axis, info.max_grid[size_t(axis)]));
  }
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxSharedMemoryPerBlock, info.max_shared_per_block));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxSharedMemoryPerBlockOptin, info.max_shared_per_block_optin));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxRegistersPerBlock, info.max_registers_per_block));
  TF_RETURN_IF_ERROR(Attribute(cu, device, d::kAttrMaxRegistersPerMultiprocessor, info.max_registers_per_sm));
  return info;
}

// Feature values may not contain commas (the log's rule); spaces become '_'
// so a feature reads as one word.
std::string FeatureText(std::string text) {
  for (char& c : text) {
    if (c == ',' || c == ' ') c = '_';
  }
  return text;
}

}  // namespace

Result<CudaDeviceInfo> QueryCudaDevice(int index) {
  TF_ASSIGN_OR_RETURN(const Api* cu, cuda_driver::Driver());
  auto info = Query(*cu, index);
  if (!info.ok() && info.status().code() != StatusCode::kFailedPrecondition) {
    return Status::FailedPrecondition("querying CUDA device cuda:" + std::to_string(index) + ": " +
                                      info.status().message());
  }
  return info;
}

Result<CudaDeviceInfo> FindCudaDeviceForArch(std::string_view arch) {
  TF_ASSIGN_OR_RETURN(const Api* cu, cuda_driver::Driver());
  int count = 0;
  TF_RETURN_IF_ERROR(cu->Check(cu->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  std::string found;
  for (int index = 0; index < count; ++index) {
    TF_ASSIGN_OR_RETURN(CudaDeviceInfo info, QueryCudaDevice(index));
    if (info.Arch() == arch) return info;
    found += (found.empty() ? "" : ", ") + ("cuda:" + std::to_string(index)) + " " + info.name + " (" + info.Arch() + ")";
  }
  return Status::FailedPrecondition("no CUDA device of architecture " + std::string(arch) + " here (" +
                                    (found.empty() ? std::string("the driver reports no GPU") : "found " + found) + ")");
}

std::string CudaToolchain() { return "nvrtc lowering-r" + std::to_string(kLoweringRevision); }

HardwareFingerprint CudaFingerprint(const CudaDeviceInfo& info, std::string toolchain) {
  HardwareFingerprint f;
  f.isa = "cuda";
  f.arch = info.Arch();
  f.cores = info.sm_count;
  f.features = {
      "name=" + FeatureText(info.name),
      "memory_mib=" + std::to_string(info.total_memory_bytes >> 20),
      "sm_clock_mhz=" + std::to_string(info.clock_khz / 1000),
      "memory_clock_mhz=" + std::to_string(info.memory_clock_khz / 1000),
      "l2_kib=" + std::to_string(info.l2_bytes >> 10),
      "driver=" + FeatureText(info.DriverText()),
  };
  f.toolchain = std::move(toolchain);
  return f;
}

}  // namespace tunefarm
