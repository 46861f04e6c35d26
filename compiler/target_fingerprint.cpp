// HostFingerprint (target_fingerprint.h).
#include "tunefarm/compiler/target_fingerprint.h"

#include <thread>
#include <utility>

namespace tunefarm {

HardwareFingerprint HostFingerprint(const Target& target, std::string toolchain) {
  HardwareFingerprint f;
  f.isa = target.triple.substr(0, target.triple.find('-'));
  size_t pos = 0;
  while (pos < target.features.size()) {
    size_t end = target.features.find(',', pos);
    if (end == std::string::npos) end = target.features.size();
    if (end > pos) f.features.push_back(target.features.substr(pos, end - pos));
    pos = end + 1;
  }
  f.arch = target.cpu;
  f.cores = int64_t(std::thread::hardware_concurrency());
  f.toolchain = std::move(toolchain);
  return f;
}

}  // namespace tunefarm
