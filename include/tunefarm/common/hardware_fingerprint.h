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

}  // namespace tunefarm
