// The table of device backends (device_backend.h).
#include "tunefarm/worker/device_backend.h"

#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/worker/fleet_worker.h"
#include "tunefarm/worker/local_measurer.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm {

namespace {

DeviceBackend CpuBackend() {
  DeviceBackend b;
  b.name = "cpu";
  b.summary = "this machine's CPU: candidates built, checked and timed in a runner process";
  b.runs_runner = true;
  b.default_key = [] { return "cpu-" + Target::Host().cpu; };
  // The runner builds for this host only.
  b.targets = [] { return std::vector<std::string>{Target::Host().ToString()}; };
  b.toolchain = [] { return CodegenToolchain(); };
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

DeviceBackend TestBackend() {
  DeviceBackend b;
  b.name = "test";
  b.summary = "the synthetic TEST DEVICE: invented times, nothing compiled or run";
  b.synthetic = true;
  b.takes_test_latency = true;
  b.default_key = [] { return std::string("test"); };
  b.targets = [] { return std::vector<std::string>{}; };  // builds nothing: any target
  b.toolchain = [] { return std::string(kTestDeviceToolchain); };
  b.make_measurer = [](const FleetWorkerOptions& o) -> Result<std::unique_ptr<Measurer>> {
    return std::unique_ptr<Measurer>(std::make_unique<TestDeviceMeasurer>(TestDeviceOptions{o.test_latency_ms}));
  };
  return b;
}

}  // namespace

const std::vector<DeviceBackend>& DeviceBackends() {
  static const std::vector<DeviceBackend> backends = {CpuBackend(), TestBackend()};
  return backends;
}

Result<const DeviceBackend*> FindDeviceBackend(std::string_view name) {
  std::string known;
  for (const DeviceBackend& b : DeviceBackends()) {
    if (b.name == name) return &b;
    known += (known.empty() ? "" : "; ") + b.name + ": " + b.summary;
  }
  return Status::InvalidArgument("unknown device '" + std::string(name) + "' (" + known + ")");
}

}  // namespace tunefarm
