// The table of device backends (device_backend.h); the lean board worker
// has its own (device_backend_lean.cpp), both looked up by
// device_backend_lookup.cpp.
#include "tunefarm/worker/device_backend.h"

#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/worker/cuda_device.h"
#include "tunefarm/worker/fleet_worker.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm {

namespace {

DeviceBackend CpuBackend() {
  DeviceBackend b;
  b.name = "cpu";
  b.summary = "this machine's CPU: candidates built, checked and timed in a runner process";
  b.runs_runner = true;
  b.default_key = [](const std::string&) { return "cpu-" + Target::Host().cpu; };
  // The runner builds for this host only.
  b.targets = [](const std::string&) { return std::vector<std::string>{Target::Host().ToString()}; };
  b.toolchain = [](const std::string&) { return CodegenToolchain(); };
  b.fingerprint = [](const std::string&) { return HostFingerprint(Target::Host(), CodegenToolchain()); };
  b.make_measurer = [](const FleetWorkerOptions& o) -> Result<std::unique_ptr<Measurer>> {
    LocalMeasurerOptions local = o.local;
    if (local.runner_path.empty()) {
      TF_ASSIGN_OR_RETURN(local.runner_path, FindRunnerPath());
    }
    local.enable_test_faults = local.enable_test_faults || !o.inject_fault.empty();
    return std::unique_ptr<Measurer>(std::make_unique<LocalMeasurer>(local));
  };
  return b;
}

// The GPU named by a --device value, or why it cannot be used here.
Result<CudaDeviceInfo> CudaDeviceFor(const std::string& device) {
  TF_ASSIGN_OR_RETURN(int index, ParseCudaDeviceIndex(device));
  auto info = QueryCudaDevice(index);
  if (!info.ok()) return Status::FailedPrecondition("device " + device + ": " + info.status().message());
  return info;
}

// The target text of a GPU in its canonical form.
std::string CudaTargetText(const CudaDeviceInfo& info) {
  auto target = Target::Parse(info.TargetText());
  return target.ok() ? target->ToString() : info.TargetText();
}

DeviceBackend CudaBackend() {
  DeviceBackend b;
  b.name = "cuda";
  b.summary =
      "a CUDA GPU of this machine (cuda:N, N its index; cuda is cuda:0): cuda targets compiled with NVRTC, "
      "checked and timed on the GPU by a runner process";
  b.runs_runner = true;
  b.indexed = true;
  b.available = [](const std::string& device) -> Status {
    TF_RETURN_IF_ERROR(CudaDeviceFor(device).status());
    std::string why_not;
    if (!cuda::NvrtcAvailable(&why_not)) {
      return Status::FailedPrecondition("device " + device + ": no NVRTC to compile CUDA candidates: " + why_not);
    }
    return Status::OK();
  };
  // "cuda-sm_90", as "cpu-znver4": the target's DeviceKey ("cuda/sm_90")
  // has a '/', which device keys may not. The fingerprint names the part.
  b.default_key = [](const std::string& device) -> std::string {
    auto info = CudaDeviceFor(device);
    return info.ok() ? "cuda-" + info->Arch() : "";
  };
  b.targets = [](const std::string& device) {
    auto info = CudaDeviceFor(device);
    return info.ok() ? std::vector<std::string>{CudaTargetText(*info)} : std::vector<std::string>{};
  };
  b.toolchain = [](const std::string&) { return CudaToolchain(); };
  b.fingerprint = [](const std::string& device) {
    auto info = CudaDeviceFor(device);
    if (info.ok()) return CudaFingerprint(*info, CudaToolchain());
    HardwareFingerprint none;  // available() failed first; never registered
    none.isa = "cuda";
    none.toolchain = CudaToolchain();
    return none;
  };
  b.make_measurer = [](const FleetWorkerOptions& o) -> Result<std::unique_ptr<Measurer>> {
    TF_ASSIGN_OR_RETURN(CudaDeviceInfo info, CudaDeviceFor(o.device));
    LocalMeasurerOptions local = o.local;
    local.device = "cuda:" + std::to_string(info.index);
    if (local.runner_path.empty()) {
      TF_ASSIGN_OR_RETURN(local.runner_path, FindRunnerPath());
    }
    local.enable_test_faults = local.enable_test_faults || !o.inject_fault.empty();
    return std::unique_ptr<Measurer>(std::make_unique<LocalMeasurer>(local));
  };
  return b;
}

}  // namespace

const std::vector<DeviceBackend>& DeviceBackends() {
  static const std::vector<DeviceBackend> backends = {CpuBackend(), CudaBackend(), TestDeviceBackend()};
  return backends;
}

}  // namespace tunefarm
