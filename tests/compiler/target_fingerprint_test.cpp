// HostFingerprint (target_fingerprint.h): the fields it takes from a target,
// at odd feature strings and triples. That the tuner's records and a fleet
// worker agree on it is tests/daemon/host_fingerprint_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"

namespace tunefarm {
namespace {

using Strings = std::vector<std::string>;

Target Make(std::string triple, std::string cpu, std::string features) {
  Target t;
  t.kind = "llvm";
  t.triple = std::move(triple);
  t.cpu = std::move(cpu);
  t.features = std::move(features);
  return t;
}

TEST(HostFingerprintTest, TakesTheTriplesArchitectureTheCpuAndTheFeaturesAsWritten) {
  HardwareFingerprint f = HostFingerprint(Make("x86_64-unknown-linux-gnu", "znver4", "+avx512f,-xop,+fma"), "tc-1");
  EXPECT_EQ(f.isa, "x86_64");
  EXPECT_EQ(f.arch, "znver4");
  EXPECT_EQ(f.features, (Strings{"+avx512f", "-xop", "+fma"}));  // not sorted: the log sorts
  EXPECT_EQ(f.cores, int64_t(std::thread::hardware_concurrency()));
  EXPECT_EQ(f.toolchain, "tc-1");
}

TEST(HostFingerprintTest, OddFeatureStringsAndTriples) {
  EXPECT_EQ(HostFingerprint(Make("aarch64-linux-gnu", "neoverse-v1", ""), "t").features, Strings{});
  EXPECT_EQ(HostFingerprint(Make("aarch64-linux-gnu", "generic", ",+sve,,+neon,"), "t").features,
            (Strings{"+sve", "+neon"}));
  EXPECT_EQ(HostFingerprint(Make("aarch64-linux-gnu", "generic", ","), "t").features, Strings{});
  EXPECT_EQ(HostFingerprint(Make("riscv64", "generic", "+m"), "t").isa, "riscv64");  // no '-': all of it
  EXPECT_EQ(HostFingerprint(Make("", "", ""), "t").isa, "");
}

TEST(HostFingerprintTest, TheHostTargetHasAFullFingerprint) {
  HardwareFingerprint f = HostFingerprint(Target::Host(), "tc");
  EXPECT_FALSE(f.isa.empty());
  EXPECT_FALSE(f.arch.empty());
  EXPECT_GT(f.cores, 0);
  for (const std::string& feature : f.features) EXPECT_FALSE(feature.empty());
}

}  // namespace
}  // namespace tunefarm
