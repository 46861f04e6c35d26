// The board fingerprint against LLVM 16 (through Target, compiler/target.h):
// every -mcpu of the part table and every feature word is one LLVM accepts
// for aarch64, and a board's target text means what the board has. The
// fingerprint code itself links no LLVM; only this test does.
#include <gtest/gtest.h>

#include <string>

#include "board_fingerprint_test_util.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/worker/board_fingerprint.h"

namespace tunefarm {
namespace {

using board_test::Blocks;
using board_test::MustParse;

std::string Core(const char* variant, const char* part, const char* revision) {
  return std::string("CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: ") + variant + "\nCPU part\t: " +
         part + "\nCPU revision\t: " + revision + "\n";
}

TEST(BoardFingerprintLlvm, EveryTableMcpuIsAnAarch64CpuOfLlvm16) {
  for (const ArmPartInfo& info : ArmPartTable()) {
    std::string text = "llvm -mtriple=aarch64-linux-gnu -mcpu=" + std::string(info.mcpu);
    auto target = Target::Parse(text);
    EXPECT_TRUE(target.ok()) << info.name << ": " << target.status().ToString();
  }
}

TEST(BoardFingerprintLlvm, EveryFeatureWordIsKnownToLlvm16) {
  // HWCAP of everything (qemu's "max" CPU) and of nothing but asimd: all "+" and nearly all "-".
  for (uint64_t hwcap : {uint64_t{0xecfffffb}, uint64_t{0x3}}) {
    ArmBoard board = MustParse(Blocks(0, 1, Core("0x0", "0xd08", "3")), hwcap, hwcap == 0x3 ? 0 : 0x7f877fff, "6.1.0");
    ASSERT_EQ(board.features.size(), 7u);
    auto target = Target::Parse(board.target);
    EXPECT_TRUE(target.ok()) << board.target << ": " << target.status().ToString();
  }
}

TEST(BoardFingerprintLlvm, TheTargetTextSaysWhatTheBoardHas) {
  // Graviton3: neoverse-v1 with SVE.
  ArmBoard v1 = MustParse(Blocks(0, 4, Core("0x1", "0xd40", "1")), 0xcfffffff, 0x1f201, "6.1.0");
  auto target = Target::Parse(v1.target);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->cpu, "neoverse-v1");
  EXPECT_EQ(target->DeviceKey() + DeviceKeySuffix(v1), "llvm/aarch64/neoverse-v1");
  EXPECT_TRUE(target->HasFeature("sve"));
  EXPECT_TRUE(target->HasFeature("i8mm"));
  EXPECT_TRUE(target->HasFeature("dotprod"));

  // The same core on a kernel that hides SVE (HWCAP without "sve"): the -mcpu
  // implies SVE, the target text takes it away again.
  ArmBoard hidden = MustParse(Blocks(0, 4, Core("0x1", "0xd40", "1")), 0xcfffffff & ~arm_hwcap::kSve, 0x1f201, "6.1.0");
  target = Target::Parse(hidden.target);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_FALSE(target->HasFeature("sve")) << hidden.target;

  // The same core where the kernel reports a 256-bit SVE length: the target
  // names it, so the tuner builds for exactly that length, and the vector
  // unit the rules size tiles by is 256 bits wide.
  ArmBoardSources sources;
  sources.proc_cpuinfo = Blocks(0, 4, Core("0x1", "0xd40", "1"));
  sources.hwcap = 0xcfffffff;
  sources.hwcap2 = 0x1f201;
  sources.kernel_release = "6.1.0";
  sources.machine = "aarch64";
  sources.sve_vector_bytes = 32;
  auto sized = ParseArmBoard(sources);
  ASSERT_TRUE(sized.ok()) << sized.status().ToString();
  EXPECT_EQ(sized->sve_bits, 256);
  target = Target::Parse(sized->target);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_EQ(target->sve_bits, 256);
  EXPECT_EQ(target->VectorBits(), 256);
  EXPECT_EQ(target->DeviceKey(), "llvm/aarch64/neoverse-v1-sve256");
  EXPECT_NE(DescribeArmBoard(*sized).find("SVE 256-bit"), std::string::npos) << DescribeArmBoard(*sized);
  // A length the kernel could not report is left out; so is one without SVE.
  sources.sve_vector_bytes = 24;
  EXPECT_EQ(ParseArmBoard(sources)->sve_bits, 0);
  sources.sve_vector_bytes = 32;
  sources.hwcap &= ~arm_hwcap::kSve;
  EXPECT_EQ(ParseArmBoard(sources)->sve_bits, 0);
  EXPECT_EQ(ParseArmBoard(sources)->target.find("-sve-bits"), std::string::npos);

  // Raspberry Pi 4: no dot product.
  ArmBoard pi4 = MustParse(Blocks(0, 4, Core("0x0", "0xd08", "3")), 0x887, 0, "6.1.0");
  target = Target::Parse(pi4.target);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_FALSE(target->HasFeature("dotprod"));
  EXPECT_EQ(target->VectorBits(), 128);
}

TEST(BoardFingerprintLlvm, AnEmulatedBoardsDeviceKeyIsNotARealBoards) {
  ArmBoard real = MustParse(Blocks(0, 2, Core("0x0", "0xd08", "3")), 0x887, 0, "6.1.0");
  ArmBoardSources sources;
  sources.proc_cpuinfo = Blocks(0, 2, Core("0x0", "0xd08", "3"));
  sources.hwcap = 0x887;
  sources.machine = "aarch64";
  auto declared = ParseArmBoard(sources, EmulationDeclaration{true, "under qemu"});
  ASSERT_TRUE(declared.ok());
  auto real_target = Target::Parse(real.target);
  auto declared_target = Target::Parse(declared->target);
  ASSERT_TRUE(real_target.ok() && declared_target.ok());
  EXPECT_EQ(real_target->DeviceKey() + DeviceKeySuffix(real), "llvm/aarch64/cortex-a72");
  EXPECT_EQ(declared_target->DeviceKey() + DeviceKeySuffix(*declared), "llvm/aarch64/cortex-a72-emulated");
  EXPECT_NE(ToHardwareFingerprint(real, "t"), ToHardwareFingerprint(*declared, "t"));
}

}  // namespace
}  // namespace tunefarm
