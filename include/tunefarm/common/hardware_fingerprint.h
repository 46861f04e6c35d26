// What the hardware that ran a measurement was: the fingerprint the tuning
// log keeps with a target (database::Target, database/record.h), the one a
// fleet worker registers with (tunefarm.v1.HardwareFingerprint, fleet.proto)
// and the one computed for this machine (HostFingerprint,
// compiler/target_fingerprint.h). A plain value type in common/ so that all of
// them name one struct: the database includes no compiler header and the
// worker no database header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tunefarm {

// Two targets with equal fingerprints ran on interchangeable devices.
struct HardwareFingerprint {
  std::string isa;                    // "x86_64", "aarch64", "cuda"
  std::vector<std::string> features;  // "+avx512f", "neon", ...: sorted and unique where the log keeps them
                                      // (database::CanonicalizeFingerprint)
  std::string arch;                   // CPU model ("znver4") or GPU SM architecture ("sm_90")
  int64_t cores = 0;                  // core count, or SM count for a GPU
  std::string toolchain;              // "llvm-16 lowering-r1", "cuda-12.4", ...

  bool operator==(const HardwareFingerprint&) const = default;
};

// The toolchain a test device (`tunefarm worker --device test`) reports in its
// fingerprint: it builds nothing. Records that carry it are synthetic.
inline constexpr std::string_view kTestDeviceToolchain = "none (test device)";

// What the arch of a device measured under emulation ends with
// ("cortex-a72-emulated", "generic-emulated"): a board worker under qemu-user
// puts it there (worker/board_fingerprint.h, kEmulatedSuffix), so that an
// emulated device's fingerprint never equals a real one's. Records that carry
// such a fingerprint are emulated (database/record.h).
inline constexpr std::string_view kEmulatedArchSuffix = "-emulated";
inline bool IsEmulatedArch(std::string_view arch) {
  return arch.size() > kEmulatedArchSuffix.size() && arch.ends_with(kEmulatedArchSuffix);
}
inline bool IsEmulatedFingerprint(const HardwareFingerprint& fingerprint) { return IsEmulatedArch(fingerprint.arch); }
// The arch without kEmulatedArchSuffix: the real device an emulated one stands in for.
inline std::string_view RealArch(std::string_view arch) {
  return IsEmulatedArch(arch) ? arch.substr(0, arch.size() - kEmulatedArchSuffix.size()) : arch;
}

}  // namespace tunefarm
