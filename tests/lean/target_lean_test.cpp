// Target without LLVM (compiler/target_lean.cpp): the lean worker reads the
// targets the daemon sends and the board offers from their text alone. The
// full build's target_test.cpp checks the same texts against LLVM.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include "tunefarm/compiler/target.h"

namespace tunefarm {
namespace {

std::string Machine() {
  struct utsname u {};
  return ::uname(&u) == 0 ? u.machine : "";
}

TEST(LeanTargetTest, NormalizesTriplesAsLlvmDoes) {
  auto arm = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon,-sve");
  ASSERT_TRUE(arm.ok()) << arm.status().ToString();
  EXPECT_EQ(arm->triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(arm->cpu, "cortex-a72");
  EXPECT_EQ(arm->features, "+neon,-sve");
  EXPECT_EQ(arm->DeviceKey(), "llvm/aarch64/cortex-a72");
  EXPECT_EQ(arm->ToString(), "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=cortex-a72 -mattr=+neon,-sve");
  auto again = Target::Parse(arm->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *arm);
  auto pc = Target::Parse("llvm -mtriple=x86_64-pc-linux-gnu");
  ASSERT_TRUE(pc.ok());
  EXPECT_EQ(pc->triple, "x86_64-pc-linux-gnu");
  EXPECT_EQ(pc->cpu, "generic");
}

TEST(LeanTargetTest, RefusesWhatItCannotLoadOrRead) {
  auto riscv = Target::Parse("llvm -mtriple=riscv64-linux-gnu");
  ASSERT_FALSE(riscv.ok());
  EXPECT_NE(riscv.status().message().find("unknown triple 'riscv64-unknown-linux-gnu'"), std::string::npos)
      << riscv.status().message();
  auto cpu = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mcpu=Cortex A72");
  EXPECT_FALSE(cpu.ok());
  auto bad_cpu = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex$a72");
  ASSERT_FALSE(bad_cpu.ok());
  EXPECT_NE(bad_cpu.status().message().find("unknown CPU"), std::string::npos) << bad_cpu.status().message();
  auto feature = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+ne/on");
  ASSERT_FALSE(feature.ok());
  EXPECT_NE(feature.status().message().find("unknown feature '+ne/on'"), std::string::npos)
      << feature.status().message();
  EXPECT_FALSE(Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=neon").ok());
}

TEST(LeanTargetTest, HostIsThisMachineWithAGenericCpu) {
  const Target& host = Target::Host();
  EXPECT_EQ(host.kind, "llvm");
  EXPECT_EQ(host.triple, Machine() + "-unknown-linux-gnu");
  EXPECT_EQ(host.cpu, "generic");
  EXPECT_TRUE(host.is_host());
  auto plain = Target::Parse("llvm");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(*plain, host);
  // Another vendor or environment spelling of this machine is still the host.
  auto spelled = Target::Parse("llvm -mtriple=" + Machine() + "-linux-gnu -mcpu=some-cpu");
  ASSERT_TRUE(spelled.ok()) << spelled.status().ToString();
  EXPECT_TRUE(spelled->is_host());
  const std::string other = Machine() == "aarch64" ? "x86_64" : "aarch64";
  auto foreign = Target::Parse("llvm -mtriple=" + other + "-linux-gnu");
  ASSERT_TRUE(foreign.ok());
  EXPECT_FALSE(foreign->is_host());
  EXPECT_FALSE(Target::Parse("cuda -arch=sm_90")->is_host());
}

TEST(LeanTargetTest, VectorUnitAndFeaturesComeFromTheText) {
  auto neon = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+dotprod,-i8mm");
  ASSERT_TRUE(neon.ok());
  EXPECT_EQ(neon->VectorBits(), 128);
  EXPECT_EQ(neon->VectorRegisters(), 32);
  EXPECT_TRUE(neon->HasFeature("dotprod"));
  EXPECT_FALSE(neon->HasFeature("i8mm"));
  EXPECT_FALSE(neon->HasFeature("sve"));
  auto avx512 = Target::Parse("llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avx512f");
  ASSERT_TRUE(avx512.ok());
  EXPECT_EQ(avx512->VectorBits(), 512);
  EXPECT_EQ(avx512->VectorRegisters(), 32);
  auto avx2 = Target::Parse("llvm -mtriple=x86_64-linux-gnu -mattr=+avx512f,+avx2,-avx512f");
  ASSERT_TRUE(avx2.ok());
  EXPECT_EQ(avx2->VectorBits(), 256);
  EXPECT_EQ(avx2->VectorRegisters(), 16);
  EXPECT_EQ(Target::Parse("llvm -mtriple=x86_64-linux-gnu")->VectorBits(), 128);
}

}  // namespace
}  // namespace tunefarm
