// FindDeviceBackend (device_backend.h): a --device value to its entry in
// the table this build has (device_backend.cpp, or device_backend_lean.cpp
// in the lean board worker); TestDeviceBackend, the entry both tables hold.
#include "tunefarm/worker/device_backend.h"

#include <memory>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/worker/fleet_worker.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm {

Result<const DeviceBackend*> FindDeviceBackend(std::string_view name) {
  std::string known;
  for (const DeviceBackend& b : DeviceBackends()) {
    if (b.name == name) return &b;
    // "cuda:1": the indexed backend "cuda", if the index is a number.
    if (b.indexed && name.size() > b.name.size() + 1 && name.substr(0, b.name.size()) == b.name &&
        name[b.name.size()] == ':' &&
        name.find_first_not_of("0123456789", b.name.size() + 1) == std::string_view::npos) {
      return &b;
    }
    known += (known.empty() ? "" : "; ") + b.name + ": " + b.summary;
  }
  return Status::InvalidArgument("unknown device '" + std::string(name) + "' (" + known + ")");
}

DeviceBackend TestDeviceBackend() {
  DeviceBackend b;
  b.name = "test";
  b.summary = "the synthetic TEST DEVICE: invented times, nothing compiled or run";
  b.synthetic = true;
  b.takes_test_latency = true;
  b.default_key = [](const std::string&) { return std::string("test"); };
  b.targets = [](const std::string&) { return std::vector<std::string>{}; };  // builds nothing: any target
  b.toolchain = [](const std::string&) { return std::string(kTestDeviceToolchain); };
  b.fingerprint = [](const std::string&) {
    return HostFingerprint(Target::Host(), std::string(kTestDeviceToolchain));
  };
  b.make_measurer = [](const FleetWorkerOptions& o) -> Result<std::unique_ptr<Measurer>> {
    return std::unique_ptr<Measurer>(std::make_unique<TestDeviceMeasurer>(TestDeviceOptions{o.test_latency_ms}));
  };
  return b;
}

}  // namespace tunefarm
