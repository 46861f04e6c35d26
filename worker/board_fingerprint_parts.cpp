// The CPU part table of board_fingerprint.h: MIDR_EL1 implementer and part
// numbers as the Linux kernel's arch/arm64/include/asm/cputype.h defines
// them, with the -mcpu LLVM 16 knows for each (`llc -march=aarch64
// -mcpu=help`; BoardFingerprintLlvm tests check every entry with
// Target::Parse). LLVM's own host detection (getHostCPUNameForARM in
// llvm/lib/TargetParser/Host.cpp) agrees where it names the part.
//
// A core LLVM 16 predates gets the newest LLVM 16 core of its line whose
// implied features it has (Cortex-A720 -> cortex-a715): the features the
// kernel reports are added explicitly, so only scheduling is approximate,
// and the note says so. A core without such a stand-in is left out: it is
// "generic", which board_fingerprint.cpp says in mcpu_note.
#include <algorithm>

#include "tunefarm/worker/board_fingerprint.h"

namespace tunefarm {

namespace {

constexpr uint32_t kArm = 0x41;
constexpr uint32_t kBroadcom = 0x42;
constexpr uint32_t kCavium = 0x43;
constexpr uint32_t kFujitsu = 0x46;
constexpr uint32_t kHiSilicon = 0x48;
constexpr uint32_t kNvidia = 0x4e;
constexpr uint32_t kQualcomm = 0x51;
constexpr uint32_t kApple = 0x61;
constexpr uint32_t kAmpere = 0xc0;

// Tiers: which core of a big.LITTLE board names it (the highest tier).
constexpr int kLittle = 0;
constexpr int kBig = 1;
constexpr int kPrime = 2;

const ArmPartInfo kParts[] = {
    // Arm Ltd.: Cortex-A efficiency cores.
    {kArm, 0xd02, "Cortex-A34", "cortex-a34", kLittle, ""},
    {kArm, 0xd04, "Cortex-A35", "cortex-a35", kLittle, ""},
    {kArm, 0xd03, "Cortex-A53", "cortex-a53", kLittle, ""},
    {kArm, 0xd05, "Cortex-A55", "cortex-a55", kLittle, ""},
    {kArm, 0xd46, "Cortex-A510", "cortex-a510", kLittle, ""},
    {kArm, 0xd80, "Cortex-A520", "cortex-a510", kLittle,
     "LLVM 16 has no cortex-a520; cortex-a510, its predecessor, stands in"},
    {kArm, 0xd4a, "Neoverse-E1", "neoverse-e1", kLittle, ""},
    // Performance cores.
    {kArm, 0xd07, "Cortex-A57", "cortex-a57", kBig, ""},
    {kArm, 0xd08, "Cortex-A72", "cortex-a72", kBig, ""},
    {kArm, 0xd09, "Cortex-A73", "cortex-a73", kBig, ""},
    {kArm, 0xd0a, "Cortex-A75", "cortex-a75", kBig, ""},
    {kArm, 0xd0b, "Cortex-A76", "cortex-a76", kBig, ""},
    {kArm, 0xd0e, "Cortex-A76AE", "cortex-a76ae", kBig, ""},
    {kArm, 0xd0d, "Cortex-A77", "cortex-a77", kBig, ""},
    {kArm, 0xd41, "Cortex-A78", "cortex-a78", kBig, ""},
    {kArm, 0xd42, "Cortex-A78AE", "cortex-a78", kBig,
     "LLVM 16 has no cortex-a78ae; cortex-a78, the same core without the safety features, stands in"},
    {kArm, 0xd4b, "Cortex-A78C", "cortex-a78c", kBig, ""},
    {kArm, 0xd47, "Cortex-A710", "cortex-a710", kBig, ""},
    {kArm, 0xd4d, "Cortex-A715", "cortex-a715", kBig, ""},
    {kArm, 0xd81, "Cortex-A720", "cortex-a715", kBig,
     "LLVM 16 has no cortex-a720; cortex-a715, its predecessor, stands in"},
    {kArm, 0xd0c, "Neoverse-N1", "neoverse-n1", kBig, ""},
    {kArm, 0xd49, "Neoverse-N2", "neoverse-n2", kBig, ""},
    {kArm, 0xd8e, "Neoverse-N3", "neoverse-n2", kBig,
     "LLVM 16 has no neoverse-n3; neoverse-n2, its predecessor, stands in"},
    // Prime cores.
    {kArm, 0xd44, "Cortex-X1", "cortex-x1", kPrime, ""},
    {kArm, 0xd4c, "Cortex-X1C", "cortex-x1c", kPrime, ""},
    {kArm, 0xd48, "Cortex-X2", "cortex-x2", kPrime, ""},
    {kArm, 0xd4e, "Cortex-X3", "cortex-x3", kPrime, ""},
    {kArm, 0xd82, "Cortex-X4", "cortex-x3", kPrime,
     "LLVM 16 has no cortex-x4; cortex-x3, its predecessor, stands in"},
    {kArm, 0xd40, "Neoverse-V1", "neoverse-v1", kPrime, ""},
    {kArm, 0xd4f, "Neoverse-V2", "neoverse-v2", kPrime, ""},
    {kArm, 0xd84, "Neoverse-V3", "neoverse-v2", kPrime,
     "LLVM 16 has no neoverse-v3; neoverse-v2, its predecessor, stands in"},

    // Apple (Asahi Linux): M1 and M2, efficiency and performance clusters.
    {kApple, 0x022, "Apple M1 Icestorm", "apple-m1", kLittle, ""},
    {kApple, 0x023, "Apple M1 Firestorm", "apple-m1", kBig, ""},
    {kApple, 0x024, "Apple M1 Pro Icestorm", "apple-m1", kLittle, ""},
    {kApple, 0x025, "Apple M1 Pro Firestorm", "apple-m1", kBig, ""},
    {kApple, 0x028, "Apple M1 Max Icestorm", "apple-m1", kLittle, ""},
    {kApple, 0x029, "Apple M1 Max Firestorm", "apple-m1", kBig, ""},
    {kApple, 0x032, "Apple M2 Blizzard", "apple-m2", kLittle, ""},
    {kApple, 0x033, "Apple M2 Avalanche", "apple-m2", kBig, ""},
    {kApple, 0x034, "Apple M2 Pro Blizzard", "apple-m2", kLittle, ""},
    {kApple, 0x035, "Apple M2 Pro Avalanche", "apple-m2", kBig, ""},
    {kApple, 0x038, "Apple M2 Max Blizzard", "apple-m2", kLittle, ""},
    {kApple, 0x039, "Apple M2 Max Avalanche", "apple-m2", kBig, ""},

    // NVIDIA: Carmel (Jetson Xavier). Jetson Orin's cores are Arm's Cortex-A78AE.
    {kNvidia, 0x004, "NVIDIA Carmel", "carmel", kBig, ""},

    // Qualcomm: Kryo cores derived from Arm's, named by the core they derive from.
    {kQualcomm, 0x201, "Qualcomm Kryo", "kryo", kBig, ""},
    {kQualcomm, 0x205, "Qualcomm Kryo", "kryo", kBig, ""},
    {kQualcomm, 0x211, "Qualcomm Kryo", "kryo", kBig, ""},
    {kQualcomm, 0x800, "Qualcomm Kryo 2xx Gold", "cortex-a73", kBig, "a Cortex-A73 derivative"},
    {kQualcomm, 0x801, "Qualcomm Kryo 2xx Silver", "cortex-a53", kLittle, "a Cortex-A53 derivative"},
    {kQualcomm, 0x802, "Qualcomm Kryo 3xx Gold", "cortex-a75", kBig, "a Cortex-A75 derivative"},
    {kQualcomm, 0x803, "Qualcomm Kryo 3xx Silver", "cortex-a55", kLittle, "a Cortex-A55 derivative"},
    {kQualcomm, 0x804, "Qualcomm Kryo 4xx Gold", "cortex-a76", kBig, "a Cortex-A76 derivative"},
    {kQualcomm, 0x805, "Qualcomm Kryo 4xx Silver", "cortex-a55", kLittle, "a Cortex-A55 derivative"},
    {kQualcomm, 0xc00, "Qualcomm Falkor", "falkor", kBig, ""},

    // Servers.
    {kAmpere, 0xac3, "AmpereOne", "ampere1", kBig, ""},
    {kAmpere, 0xac4, "AmpereOne A", "ampere1a", kBig, ""},
    {kFujitsu, 0x001, "Fujitsu A64FX", "a64fx", kBig, ""},
    {kHiSilicon, 0xd01, "HiSilicon TaiShan v110", "tsv110", kBig, ""},
    {kCavium, 0x0a1, "Cavium ThunderX", "thunderxt88", kBig, ""},
    {kCavium, 0x0a2, "Cavium ThunderX 81xx", "thunderxt81", kBig, ""},
    {kCavium, 0x0a3, "Cavium ThunderX 83xx", "thunderxt83", kBig, ""},
    {kCavium, 0x0af, "Cavium ThunderX2", "thunderx2t99", kBig, ""},
    {kBroadcom, 0x516, "Broadcom Vulcan", "thunderx2t99", kBig, "the core ThunderX2 grew from"},
};

}  // namespace

std::span<const ArmPartInfo> ArmPartTable() { return kParts; }

const ArmPartInfo* FindArmPart(uint32_t implementer, uint32_t part) {
  auto it = std::find_if(std::begin(kParts), std::end(kParts), [&](const ArmPartInfo& info) {
    return info.implementer == implementer && info.part == part;
  });
  return it == std::end(kParts) ? nullptr : &*it;
}

}  // namespace tunefarm
