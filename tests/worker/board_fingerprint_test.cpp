// ParseArmBoard on the /proc/cpuinfo of real boards, with the HWCAP values
// such a board's kernel hands out: the core types, the -mcpu, the features,
// the target text and the fingerprint.
//
// The cpuinfo blocks are the ones these boards print (Raspberry Pi OS,
// Amazon Linux, L4T, Ubuntu, Armbian), repeated per core; the HWCAP values
// are the bits of each block's Features line, numbered as in the kernel's
// uapi hwcap.h, written out here rather than computed with arm_hwcap so
// that a wrong constant there cannot hide.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "board_fingerprint_test_util.h"
#include "tunefarm/worker/board_fingerprint.h"

namespace tunefarm {
namespace {

using board_test::Blocks;
using board_test::MustParse;
using Strings = std::vector<std::string>;

const Strings kNeonOnly = {"+neon", "-bf16", "-dotprod", "-fullfp16", "-i8mm", "-sve", "-sve2"};
const Strings kArmv82 = {"+dotprod", "+fullfp16", "+neon", "-bf16", "-i8mm", "-sve", "-sve2"};

TEST(BoardFingerprint, RaspberryPi4IsCortexA72WithoutCrypto) {
  // BCM2711: Cortex-A72 r0p3 without the crypto extension. Features: fp asimd evtstrm crc32 cpuid.
  std::string cpuinfo = Blocks(0, 4,
                               "BogoMIPS\t: 108.00\n"
                               "Features\t: fp asimd evtstrm crc32 cpuid\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x0\n"
                               "CPU part\t: 0xd08\n"
                               "CPU revision\t: 3\n") +
                        "Hardware\t: BCM2835\n"
                        "Revision\t: c03111\n"
                        "Serial\t\t: 10000000b3c4d5e6\n"
                        "Model\t\t: Raspberry Pi 4 Model B Rev 1.1\n";
  ArmBoard board = MustParse(cpuinfo, 0x887, 0x0, "6.1.0-rpi7-rpi-v8");
  ASSERT_EQ(board.core_types.size(), 1u);
  const ArmCoreType& core = board.core_types[0];
  EXPECT_EQ(core.implementer, 0x41u);
  EXPECT_EQ(core.part, 0xd08u);
  EXPECT_EQ(core.variant, 0u);
  EXPECT_EQ(core.revision, 3u);
  EXPECT_EQ(core.count, 4);
  EXPECT_EQ(core.name, "Cortex-A72");
  EXPECT_TRUE(core.known);
  EXPECT_EQ(board.mcpu, "cortex-a72");
  EXPECT_TRUE(board.mcpu_known);
  EXPECT_EQ(board.mcpu_note, "");
  EXPECT_EQ(board.features, kNeonOnly);
  EXPECT_EQ(board.cores, 4);
  EXPECT_EQ(board.kernel_release, "6.1.0-rpi7-rpi-v8");
  EXPECT_EQ(board.machine, "aarch64");
  EXPECT_EQ(board.model, "Raspberry Pi 4 Model B Rev 1.1");
  EXPECT_EQ(board.target,
            "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon,-bf16,-dotprod,-fullfp16,-i8mm,-sve,-sve2");
  EXPECT_FALSE(board.emulated);
  EXPECT_EQ(board.emulation_reason, "");
  EXPECT_EQ(DeviceKeySuffix(board), "");
  EXPECT_EQ(DescribeArmBoard(board), "Cortex-A72 r0p3 x4 (mcpu cortex-a72), 4 cores, kernel 6.1.0-rpi7-rpi-v8");
}

TEST(BoardFingerprint, RaspberryPi5IsCortexA76WithDotProduct) {
  // BCM2712: Cortex-A76 r4p1, Armv8.2 with dot product and half precision.
  std::string cpuinfo = Blocks(0, 4,
                               "BogoMIPS\t: 108.00\n"
                               "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
                               "asimdrdm lrcpc dcpop asimddp\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x4\n"
                               "CPU part\t: 0xd0b\n"
                               "CPU revision\t: 1\n") +
                        "Revision\t: c04170\n"
                        "Serial\t\t: 1e2d3c4b5a697887\n"
                        "Model\t\t: Raspberry Pi 5 Model B Rev 1.0\n";
  ArmBoard board = MustParse(cpuinfo, 0x119fff, 0x0, "6.6.31+rpt-rpi-2712");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_EQ(board.core_types[0].name, "Cortex-A76");
  EXPECT_EQ(board.core_types[0].variant, 4u);
  EXPECT_EQ(board.core_types[0].revision, 1u);
  EXPECT_EQ(board.mcpu, "cortex-a76");
  EXPECT_EQ(board.features, kArmv82);
  EXPECT_EQ(board.cores, 4);
  EXPECT_EQ(board.model, "Raspberry Pi 5 Model B Rev 1.0");
  EXPECT_EQ(board.target,
            "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a76 -mattr=+dotprod,+fullfp16,+neon,-bf16,-i8mm,-sve,-sve2");
  EXPECT_FALSE(board.emulated);
}

TEST(BoardFingerprint, Graviton2IsNeoverseN1) {
  // c6g.xlarge: Neoverse-N1 r3p1; ssbs on top of the Pi 5's features.
  std::string cpuinfo = Blocks(0, 4,
                               "BogoMIPS\t: 243.75\n"
                               "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
                               "asimdrdm lrcpc dcpop asimddp ssbs\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x3\n"
                               "CPU part\t: 0xd0c\n"
                               "CPU revision\t: 1\n");
  ArmBoard board = MustParse(cpuinfo, 0x10119fff, 0x0, "5.10.220-209.869.amzn2.aarch64");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_EQ(board.core_types[0].name, "Neoverse-N1");
  EXPECT_EQ(board.mcpu, "neoverse-n1");
  EXPECT_EQ(board.features, kArmv82);
  EXPECT_EQ(board.cores, 4);
  EXPECT_EQ(board.model, "");
  EXPECT_FALSE(board.emulated);
}

TEST(BoardFingerprint, Graviton3IsNeoverseV1WithSve) {
  // c7g.xlarge: Neoverse-V1 r1p1 with SVE, int8 matrix multiply and bf16 (HWCAP2), no SVE2.
  std::string cpuinfo = Blocks(0, 4,
                               "BogoMIPS\t: 2100.00\n"
                               "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
                               "asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat "
                               "ilrcpc flagm paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x1\n"
                               "CPU part\t: 0xd40\n"
                               "CPU revision\t: 1\n");
  ArmBoard board = MustParse(cpuinfo, 0xcfffffff, 0x1f201, "6.1.102-111.182.amzn2023.aarch64");
  EXPECT_EQ(board.mcpu, "neoverse-v1");
  EXPECT_EQ(board.features, (Strings{"+bf16", "+dotprod", "+fullfp16", "+i8mm", "+neon", "+sve", "-sve2"}));
  EXPECT_EQ(board.target, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 "
                          "-mattr=+bf16,+dotprod,+fullfp16,+i8mm,+neon,+sve,-sve2");
  EXPECT_FALSE(board.emulated);
}

TEST(BoardFingerprint, JetsonOrinIsCortexA78AEWhichLlvm16CallsCortexA78) {
  // Jetson AGX Orin (T234): twelve Cortex-A78AE r0p1; L4T's kernel prints a "model name" line too.
  std::string cpuinfo = Blocks(0, 12,
                               "model name\t: ARMv8 Processor rev 1 (v8l)\n"
                               "BogoMIPS\t: 62.50\n"
                               "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
                               "asimdrdm lrcpc dcpop asimddp uscat ilrcpc flagm\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x0\n"
                               "CPU part\t: 0xd42\n"
                               "CPU revision\t: 1\n");
  ArmBoard board = MustParse(cpuinfo, 0xe119fff, 0x0, "5.10.120-tegra");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_EQ(board.core_types[0].name, "Cortex-A78AE");
  EXPECT_EQ(board.core_types[0].count, 12);
  EXPECT_TRUE(board.mcpu_known);
  EXPECT_EQ(board.mcpu, "cortex-a78");
  EXPECT_NE(board.mcpu_note.find("LLVM 16 has no cortex-a78ae"), std::string::npos) << board.mcpu_note;
  EXPECT_EQ(board.features, kArmv82);
  EXPECT_EQ(board.cores, 12);
  EXPECT_FALSE(board.emulated) << board.emulation_reason;  // an ARM "model name" is no foreign field
}

TEST(BoardFingerprint, AmpereAltraIsEightyNeoverseN1) {
  // Altra Q80-30: eighty Neoverse-N1 r3p1.
  std::string cpuinfo = Blocks(0, 80,
                               "BogoMIPS\t: 50.00\n"
                               "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
                               "asimdrdm lrcpc dcpop asimddp ssbs\n"
                               "CPU implementer\t: 0x41\n"
                               "CPU architecture: 8\n"
                               "CPU variant\t: 0x3\n"
                               "CPU part\t: 0xd0c\n"
                               "CPU revision\t: 1\n");
  ArmBoard board = MustParse(cpuinfo, 0x10119fff, 0x0, "5.15.0-91-generic");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_EQ(board.core_types[0].count, 80);
  EXPECT_EQ(board.cores, 80);
  EXPECT_EQ(board.mcpu, "neoverse-n1");
  EXPECT_EQ(board.features, kArmv82);
}

TEST(BoardFingerprint, BigLittleBoardKeepsBothCoreTypesAndIsNamedByTheBigOne) {
  // RK3588 (Rock 5B, Orange Pi 5): four Cortex-A55 r2p0 (cpu0-3), four Cortex-A76 r4p0 (cpu4-7).
  const char* kFeatures =
      "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop "
      "asimddp\n";
  std::string little = std::string("BogoMIPS\t: 48.00\n") + kFeatures +
                       "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\n"
                       "CPU revision\t: 0\n";
  std::string big = std::string("BogoMIPS\t: 48.00\n") + kFeatures +
                    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\n"
                    "CPU revision\t: 0\n";
  ArmBoard board = MustParse(Blocks(0, 4, little) + Blocks(4, 4, big), 0x119fff, 0x0, "5.10.160-rockchip");
  ASSERT_EQ(board.core_types.size(), 2u);
  EXPECT_EQ(board.core_types[0].name, "Cortex-A76");
  EXPECT_EQ(board.core_types[0].count, 4);
  EXPECT_EQ(board.core_types[0].variant, 4u);
  EXPECT_EQ(board.core_types[1].name, "Cortex-A55");
  EXPECT_EQ(board.core_types[1].count, 4);
  EXPECT_EQ(board.core_types[1].variant, 2u);
  EXPECT_EQ(board.mcpu, "cortex-a76");
  EXPECT_EQ(board.cores, 8);
  EXPECT_EQ(board.features, kArmv82);
  EXPECT_EQ(DescribeArmBoard(board),
            "Cortex-A76 r4p0 x4 + Cortex-A55 r2p0 x4 (mcpu cortex-a76), 8 cores, kernel 5.10.160-rockchip");
}

TEST(BoardFingerprint, ThreeClusterPhoneIsNamedByItsPrimeCore) {
  // A Snapdragon 888 style SoC, printed the way the kernel prints it: 4x A55, 3x A78, 1x X1.
  auto core = [](const char* variant, const char* part, const char* revision) {
    return std::string("CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: ") + variant +
           "\nCPU part\t: " + part + "\nCPU revision\t: " + revision + "\n";
  };
  std::string cpuinfo = Blocks(0, 4, core("0x1", "0xd05", "0")) + Blocks(4, 3, core("0x1", "0xd41", "0")) +
                        Blocks(7, 1, core("0x1", "0xd44", "0")) + "Hardware\t: Qualcomm Technologies, Inc SM8350\n";
  ArmBoard board = MustParse(cpuinfo, 0x119fff, 0x0, "5.4.210-qgki");
  ASSERT_EQ(board.core_types.size(), 3u);
  EXPECT_EQ(board.core_types[0].name, "Cortex-X1");
  EXPECT_EQ(board.core_types[1].name, "Cortex-A78");
  EXPECT_EQ(board.core_types[2].name, "Cortex-A55");
  EXPECT_EQ(board.mcpu, "cortex-x1");
  EXPECT_EQ(board.cores, 8);
  EXPECT_EQ(board.model, "Qualcomm Technologies, Inc SM8350");
}

TEST(BoardFingerprint, OldKernelsOneBlockStandsForEveryProcessor) {
  // Kernels before 3.19 listed the processors, then one block for all of them.
  std::string cpuinfo =
      "Processor\t: AArch64 Processor rev 4 (aarch64)\n"
      "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\nprocessor\t: 3\n"
      "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"
      "CPU implementer\t: 0x41\nCPU architecture: AArch64\nCPU variant\t: 0x0\nCPU part\t: 0xd03\n"
      "CPU revision\t: 4\n\nHardware\t: Qualcomm Technologies, Inc MSM8916\n";
  ArmBoard board = MustParse(cpuinfo, 0xff, 0x0, "3.10.49");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_EQ(board.core_types[0].name, "Cortex-A53");
  EXPECT_EQ(board.core_types[0].count, 4);
  EXPECT_EQ(board.cores, 4);
  EXPECT_EQ(board.mcpu, "cortex-a53");
}

TEST(BoardFingerprint, UnknownPartIsGenericAndSaysSo) {
  std::string cpuinfo = Blocks(0, 2,
                               "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                               "CPU part\t: 0xd99\nCPU revision\t: 0\n");
  ArmBoard board = MustParse(cpuinfo, 0x119fff, 0x0, "6.8.0");
  ASSERT_EQ(board.core_types.size(), 1u);
  EXPECT_FALSE(board.core_types[0].known);
  EXPECT_EQ(board.core_types[0].name, "unknown part 0xd99 of implementer 0x41");
  EXPECT_EQ(board.mcpu, "generic");
  EXPECT_FALSE(board.mcpu_known);
  EXPECT_NE(board.mcpu_note.find("0xd99 is not in tunefarm's CPU part table"), std::string::npos) << board.mcpu_note;
  EXPECT_EQ(board.target,
            "llvm -mtriple=aarch64-linux-gnu -mcpu=generic -mattr=+dotprod,+fullfp16,+neon,-bf16,-i8mm,-sve,-sve2");
  EXPECT_FALSE(board.emulated);
}

TEST(BoardFingerprint, BigLittleWithAnUnknownBigCoreIsNamedByTheKnownOneAndSaysSo) {
  std::string cpuinfo = Blocks(0, 2,
                               "CPU implementer\t: 0x41\nCPU variant\t: 0x2\nCPU part\t: 0xd05\nCPU revision\t: 0\n") +
                        Blocks(2, 2,
                               "CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd99\nCPU revision\t: 0\n");
  ArmBoard board = MustParse(cpuinfo, 0x119fff, 0x0, "6.8.0");
  EXPECT_EQ(board.mcpu, "cortex-a55");
  EXPECT_NE(board.mcpu_note.find("biggest known core"), std::string::npos) << board.mcpu_note;
}

TEST(BoardFingerprint, HwcapOfZeroGivesNoFeaturesAndNoMattr) {
  std::string cpuinfo =
      Blocks(0, 1, "CPU implementer\t: 0x41\nCPU variant\t: 0x0\n"
                   "CPU part\t: 0xd08\nCPU revision\t: 3\n");
  ArmBoard board = MustParse(cpuinfo, 0, 0, "6.1.0");
  EXPECT_EQ(board.features, Strings{});
  EXPECT_EQ(board.target, "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
}

TEST(BoardFingerprint, FullFp16NeedsBothHalfPrecisionBits) {
  std::string cpuinfo =
      Blocks(0, 1, "CPU implementer\t: 0x41\nCPU variant\t: 0x0\n"
                   "CPU part\t: 0xd0b\nCPU revision\t: 0\n");
  // asimd + fphp without asimdhp.
  EXPECT_EQ(MustParse(cpuinfo, 0x203, 0, "6.1.0").features,
            (Strings{"+neon", "-bf16", "-dotprod", "-fullfp16", "-i8mm", "-sve", "-sve2"}));
  // SVE2 is in HWCAP2.
  EXPECT_EQ(MustParse(cpuinfo, 0x603, 0x2, "6.1.0").features,
            (Strings{"+fullfp16", "+neon", "+sve2", "-bf16", "-dotprod", "-i8mm", "-sve"}));
}

TEST(BoardFingerprint, FingerprintIsAarch64WithTheMcpuAsArch) {
  std::string cpuinfo =
      Blocks(0, 4, "CPU implementer\t: 0x41\nCPU variant\t: 0x4\n"
                   "CPU part\t: 0xd0b\nCPU revision\t: 1\n");
  ArmBoard board = MustParse(cpuinfo, 0x119fff, 0x0, "6.6.31");
  HardwareFingerprint f = ToHardwareFingerprint(board, "llvm-16 lowering-r1");
  EXPECT_EQ(f.isa, "aarch64");
  EXPECT_EQ(f.arch, "cortex-a76");
  EXPECT_EQ(f.features, kArmv82);
  EXPECT_EQ(f.cores, 4);
  EXPECT_EQ(f.toolchain, "llvm-16 lowering-r1");
}

TEST(BoardFingerprint, PartTableHasEachPartOnceWithAnMcpuAndATier) {
  auto table = ArmPartTable();
  ASSERT_GT(table.size(), 40u);
  for (size_t i = 0; i < table.size(); ++i) {
    SCOPED_TRACE(std::string(table[i].name));
    EXPECT_FALSE(table[i].mcpu.empty());
    EXPECT_GE(table[i].tier, 0);
    EXPECT_LE(table[i].tier, 2);
    EXPECT_LE(table[i].implementer, 0xffu);
    EXPECT_LE(table[i].part, 0xfffu);
    EXPECT_EQ(FindArmPart(table[i].implementer, table[i].part), &table[i]);
    for (size_t j = i + 1; j < table.size(); ++j) {
      EXPECT_FALSE(table[i].implementer == table[j].implementer && table[i].part == table[j].part);
    }
  }
  // The ones tunefarm's ARM fleet is built around.
  EXPECT_EQ(FindArmPart(0x41, 0xd42)->mcpu, "cortex-a78");
  EXPECT_EQ(FindArmPart(0x4e, 0x004)->mcpu, "carmel");
  EXPECT_EQ(FindArmPart(0x61, 0x023)->mcpu, "apple-m1");
  EXPECT_EQ(FindArmPart(0x61, 0x033)->mcpu, "apple-m2");
  EXPECT_EQ(FindArmPart(0x41, 0xd4f)->mcpu, "neoverse-v2");
  EXPECT_EQ(FindArmPart(0x41, 0xd49)->mcpu, "neoverse-n2");
  EXPECT_EQ(FindArmPart(0x41, 0xd48)->mcpu, "cortex-x2");
  EXPECT_EQ(FindArmPart(0x00, 0x051), nullptr);
}

}  // namespace
}  // namespace tunefarm
