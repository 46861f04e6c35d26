// Target parsing, canonical text, host detection, device keys and vector widths.
#include <gtest/gtest.h>

#include "tunefarm/compiler/target.h"

namespace tunefarm {
namespace {

Target MustParse(const std::string& text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().ToString();
  return t.ok() ? *t : Target{};
}

void ExpectRoundTrip(const Target& t) {
  auto again = Target::Parse(t.ToString());
  ASSERT_TRUE(again.ok()) << t.ToString() << ": " << again.status().ToString();
  EXPECT_EQ(*again, t) << t.ToString() << " vs " << again->ToString();
}

void ExpectInvalid(const std::string& text, const std::string& names) {
  auto t = Target::Parse(text);
  ASSERT_FALSE(t.ok()) << text << " parsed as " << t->ToString();
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find(names), std::string::npos) << t.status().message();
}

TEST(TargetTest, HostIsDetectedWithARealCpuAndFeatures) {
  Target host = Target::Host();
  EXPECT_EQ(host.kind, "llvm");
  EXPECT_FALSE(host.triple.empty());
  EXPECT_TRUE(host.is_host());
#if defined(__x86_64__)
  // LLVM 16 calls Zen 5 "generic"; we map it to the nearest CPU it knows.
  EXPECT_NE(host.cpu, "generic");
  EXPECT_NE(host.triple.find("x86_64"), std::string::npos);
  if (__builtin_cpu_supports("avx512f")) EXPECT_EQ(host.VectorBits(), 512) << host.ToString();
#endif
  EXPECT_EQ(MustParse("llvm"), host);
  EXPECT_EQ(MustParse("llvm -mcpu=native"), host);
  ExpectRoundTrip(host);
}

TEST(TargetTest, ParsesCrossTargets) {
  Target arm = MustParse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  EXPECT_EQ(arm.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(arm.cpu, "generic");
  EXPECT_EQ(arm.features, "+neon");
  EXPECT_EQ(arm.DeviceKey(), "llvm/aarch64/generic");
  EXPECT_EQ(arm.VectorBits(), 128);
  EXPECT_FALSE(arm.is_host());
  ExpectRoundTrip(arm);

  Target zen = MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  EXPECT_EQ(zen.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(zen.cpu, "znver4");
  EXPECT_EQ(zen.DeviceKey(), "llvm/x86_64/znver4");
  EXPECT_EQ(zen.VectorBits(), 512);
  ExpectRoundTrip(zen);

  EXPECT_EQ(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell").VectorBits(), 256);
  EXPECT_EQ(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64").VectorBits(), 128);
  EXPECT_EQ(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64 -mattr=+avx512f").VectorBits(), 512);
  EXPECT_EQ(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -mattr=-avx512f").VectorBits(), 256);

  // The vector register file the CPU sketch rules size register tiles by.
  EXPECT_EQ(arm.VectorRegisters(), 32);
  EXPECT_EQ(zen.VectorRegisters(), 32);
  EXPECT_EQ(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell").VectorRegisters(), 16);
  EXPECT_EQ(MustParse("cuda -arch=sm_90").VectorRegisters(), 0);
  // Features, from the CPU's own or -mattr: the int8 dot products.
  EXPECT_FALSE(arm.HasFeature("dotprod"));
  EXPECT_TRUE(MustParse("llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod").HasFeature("dotprod"));
  EXPECT_TRUE(MustParse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").HasFeature("dotprod"));
  EXPECT_FALSE(MustParse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").HasFeature("i8mm"));
  EXPECT_TRUE(MustParse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1").HasFeature("i8mm"));
  EXPECT_TRUE(zen.HasFeature("avx512vnni"));
  EXPECT_FALSE(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell").HasFeature("avx512vnni"));
  EXPECT_FALSE(MustParse("cuda -arch=sm_90").HasFeature("dotprod"));

  Target threads = MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -num-threads=4");
  EXPECT_EQ(threads.num_threads, 4);
  ExpectRoundTrip(threads);
}

TEST(TargetTest, SveOfAFixedLengthIsPartOfTheTarget) {
  Target v1 = MustParse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -sve-bits=256");
  EXPECT_EQ(v1.sve_bits, 256);
  EXPECT_EQ(v1.VectorBits(), 256);  // the CPU sketch rules' lanes: 8 f32
  EXPECT_EQ(v1.VectorRegisters(), 32);
  EXPECT_EQ(v1.DeviceKey(), "llvm/aarch64/neoverse-v1-sve256");
  EXPECT_EQ(v1.ToString(), "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-v1 -sve-bits=256");
  ExpectRoundTrip(v1);
  Target generic = MustParse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve -sve-bits=512 -num-threads=2");
  EXPECT_EQ(generic.VectorBits(), 512);
  EXPECT_EQ(generic.DeviceKey(), "llvm/aarch64/generic-sve512");
  ExpectRoundTrip(generic);
  // Without a length, SVE code is NEON-width; a key never mixes the two.
  Target agnostic = MustParse("llvm -mtriple=aarch64-linux-gnu -mattr=+sve");
  EXPECT_EQ(agnostic.sve_bits, 0);
  EXPECT_EQ(agnostic.VectorBits(), 128);
  EXPECT_NE(agnostic.DeviceKey(), generic.DeviceKey());
  // This x86 machine runs no SVE code, of any length.
  EXPECT_FALSE(v1.is_host());
}

TEST(TargetTest, SveLengthIsRefusedWhereItCannotBe) {
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mattr=+sve -sve-bits=100", "a multiple of 128 from 128 to 2048");
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mattr=+sve -sve-bits=4096", "-sve-bits=4096");
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mattr=+sve -sve-bits=wide", "-sve-bits=wide");
  // A length needs SVE: NEON-only CPUs and features, and x86, are refused by name.
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -sve-bits=256",
                "an SVE length needs an AArch64 target with SVE");
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-sve -sve-bits=256", "'-sve-bits=256'");
  ExpectInvalid("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -sve-bits=256", "needs an AArch64 target");
  ExpectInvalid("cuda -arch=sm_90 -sve-bits=256", "unknown option '-sve-bits'");
}

TEST(TargetTest, ParsesCuda) {
  Target cuda = MustParse("cuda -arch=sm_90");
  EXPECT_EQ(cuda.kind, "cuda");
  EXPECT_EQ(cuda.arch, "sm_90");
  EXPECT_EQ(cuda.DeviceKey(), "cuda/sm_90");
  EXPECT_EQ(cuda.ToString(), "cuda -arch=sm_90");
  EXPECT_FALSE(cuda.is_host());
  ExpectRoundTrip(cuda);
}

TEST(TargetTest, RejectsBadTokensByName) {
  ExpectInvalid("", "empty");
  ExpectInvalid("opencl", "opencl");
  ExpectInvalid("llvm -mcpu=notacpu", "notacpu");
  ExpectInvalid("llvm -mtriple=aarch64-linux-gnu -mcpu=znver4", "znver4");
  ExpectInvalid("llvm -mattr=+notafeature", "+notafeature");
  ExpectInvalid("llvm -mattr=avx2", "avx2");
  ExpectInvalid("llvm -frobnicate=1", "-frobnicate");
  ExpectInvalid("llvm -mcpu", "-mcpu");
  ExpectInvalid("llvm -arch=sm_90", "-arch");
  ExpectInvalid("cuda", "-arch");
  ExpectInvalid("cuda -arch=90", "-arch=90");
  ExpectInvalid("llvm -num-threads=lots", "lots");
}

TEST(TargetTest, UnknownTripleIsRefusedByName) {
  // Nothing could compile for it: refused at parse time, not in every worker's compiler.
  ExpectInvalid("llvm -mtriple=banana", "unknown triple 'banana' in 'llvm -mtriple=banana'");
  ExpectInvalid("llvm -mtriple=nosucharch-unknown-linux-gnu", "'nosucharch-unknown-linux-gnu'");
  EXPECT_TRUE(Target::Parse("llvm -mtriple=riscv64-linux-gnu").ok());
}

TEST(TargetTest, ParseTargetFieldNamesTheFieldAndBoundsTheValue) {
  auto banana = ParseTargetField("target", "llvm -mtriple=banana");
  ASSERT_FALSE(banana.ok());
  EXPECT_EQ(banana.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(banana.status().message().rfind("target: unknown triple 'banana' in 'llvm -mtriple=banana'", 0), 0u)
      << banana.status().message();
  // The same message under another field name: the CLI's flag.
  auto flag = ParseTargetField("--target", "llvm -mtriple=banana");
  ASSERT_FALSE(flag.ok());
  EXPECT_EQ(flag.status().message(), "--target: " + banana.status().message().substr(8));

  auto cuda = ParseTargetField("target", "cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  EXPECT_EQ(cuda->arch, "sm_90");
  auto no_arch = ParseTargetField("--target", "cuda -arch=hopper");
  ASSERT_FALSE(no_arch.ok());
  EXPECT_EQ(no_arch.status().message().rfind("--target: ", 0), 0u) << no_arch.status().message();
  EXPECT_NE(no_arch.status().message().find("sm_"), std::string::npos) << no_arch.status().message();

  // A huge value is refused without being echoed whole.
  auto huge = ParseTargetField("target", "llvm -mcpu=" + std::string(10000, 'z'));
  ASSERT_FALSE(huge.ok());
  EXPECT_LT(huge.status().message().size(), 300u) << huge.status().message();
  EXPECT_NE(huge.status().message().find("(10011 bytes)"), std::string::npos) << huge.status().message();
  auto long_cpu = ParseTargetField("target", "llvm -mcpu=" + std::string(3000, 'z'));
  ASSERT_FALSE(long_cpu.ok());
  EXPECT_LT(long_cpu.status().message().size(), 400u) << long_cpu.status().message();

  auto ok = ParseTargetField("target", "llvm -mtriple=aarch64-linux-gnu");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->triple, "aarch64-unknown-linux-gnu");
}

}  // namespace
}  // namespace tunefarm
