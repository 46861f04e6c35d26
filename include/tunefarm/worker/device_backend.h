// Device backends: what `tunefarm worker --device NAME` measures with.
//
// One entry per device kind, all in one table (worker/device_backend.cpp):
// the CPU (LocalMeasurer and its runner process), a CUDA GPU ("cuda:N",
// LocalMeasurer whose runner drives GPU N) and the synthetic test device. A new kind of device -- a CUDA GPU, a board's lean runner --
// is a new entry in that table, not an edit of the worker's `if`s: the
// worker asks its backend for the measurer, the default device key, the
// targets it builds for, the toolchain it reports and whether its times are
// invented.
//
// A backend may take an index after a colon ("cuda:1"): its functions get
// the whole --device value.
//
// Entries are immutable and live for the whole process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/common/status.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

struct FleetWorkerOptions;

struct DeviceBackend {
  std::string name;     // the --device value: "cpu", "test", "cuda" (also "cuda:N")
  std::string summary;  // one line for --help and for the unknown-device message
  // Invents its times instead of measuring them: its worker registers as
  // synthetic and marks every result so (the log never ranks or serves them).
  bool synthetic = false;
  // Runs candidates in a runner process that TEST ONLY faults can be injected
  // into (FleetWorkerOptions::inject_fault).
  bool runs_runner = false;
  // Takes a per-candidate latency (FleetWorkerOptions::test_latency_ms).
  bool takes_test_latency = false;
  // Takes an index after its name ("cuda:1").
  bool indexed = false;
  // Each function below takes the whole --device value ("cuda:1").
  // Whether the device is here: FailedPrecondition saying why not (no GPU
  // driver, no such GPU), checked before anything else uses it; null: always.
  std::function<Status(const std::string& device)> available;
  // The device key a worker registers under when none is given ("cpu-znver4").
  std::function<std::string(const std::string& device)> default_key;
  // Targets it builds for, as Register.targets lists them; empty: it builds
  // nothing and takes candidates of any target.
  std::function<std::vector<std::string>(const std::string& device)> targets;
  // The code generator named in its hardware fingerprint's toolchain.
  std::function<std::string(const std::string& device)> toolchain;
  // The hardware its records were measured on (toolchain included).
  std::function<HardwareFingerprint(const std::string& device)> fingerprint;
  // Its measurer for a worker with these options (already checked).
  std::function<Result<std::unique_ptr<Measurer>>(const FleetWorkerOptions&)> make_measurer;
};

// The backend of device `name` ("cpu", "cuda:0"); InvalidArgument naming it
// and every known device when there is none.
Result<const DeviceBackend*> FindDeviceBackend(std::string_view name);

// Every registered backend, in the order --help lists them.
const std::vector<DeviceBackend>& DeviceBackends();

// The synthetic test device's entry (`--device test`), in every build's table.
DeviceBackend TestDeviceBackend();

}  // namespace tunefarm
