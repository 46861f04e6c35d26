// FindDeviceBackend (device_backend.h): a --device value to its entry in
// the table this build has (device_backend.cpp, or device_backend_lean.cpp
// in the lean board worker).
#include "tunefarm/worker/device_backend.h"

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

}  // namespace tunefarm
