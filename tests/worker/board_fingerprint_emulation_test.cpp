// ParseArmBoard's emulation signals and its answers to text the kernel
// never prints: qemu-user's /proc/cpuinfo (the x86 host's, as observed under
// Debian 12's qemu-aarch64 7.2), MIDR_EL1 that no cpuinfo core matches, the
// caller's declaration, and malformed or cut text, which must give a clear
// board or a clear error and never crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "board_fingerprint_test_util.h"
#include "tunefarm/worker/board_fingerprint.h"

namespace tunefarm {
namespace {

using board_test::Blocks;
using board_test::MustParse;

// What a static aarch64 program read from /proc/cpuinfo under qemu-aarch64
// 7.2 on a 2-core x86-64 host (tests/worker/aarch64_probe), with the HWCAP
// and MIDR_EL1 of qemu's default "max" CPU there.
constexpr std::string_view kQemuCpuinfo = R"cpuinfo(processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 207
model name	: Intel(R) Xeon(R) Processor
stepping	: 2
microcode	: 0x1
cpu MHz		: 2100.000
cache size	: 307200 KB
physical id	: 0
siblings	: 2
core id		: 0
cpu cores	: 2
apicid		: 0
initial apicid	: 0
fpu		: yes
fpu_exception	: yes
cpuid level	: 32
wp		: yes
flags		: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch cpuid_fault ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid bus_lock_detect cldemote movdiri movdir64b fsrm md_clear serialize tsxldtrk ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities
bugs		: spectre_v1 spectre_v2 spec_store_bypass swapgs taa eibrs_pbrsb bhi ibpb_no_ret spectre_v2_user
bogomips	: 4200.00
clflush size	: 64
cache_alignment	: 64
address sizes	: 46 bits physical, 57 bits virtual
power management:

processor	: 1
vendor_id	: GenuineIntel
cpu family	: 6
model		: 207
model name	: Intel(R) Xeon(R) Processor
stepping	: 2
microcode	: 0x1
cpu MHz		: 2100.000
cache size	: 307200 KB
physical id	: 0
siblings	: 2
core id		: 1
cpu cores	: 2
apicid		: 1
initial apicid	: 1
fpu		: yes
fpu_exception	: yes
cpuid level	: 32
wp		: yes
flags		: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology nonstop_tsc cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch cpuid_fault ssbd ibrs ibpb stibp ibrs_enhanced fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx_vnni avx512_bf16 wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid bus_lock_detect cldemote movdiri movdir64b fsrm md_clear serialize tsxldtrk ibt amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities
bugs		: spectre_v1 spectre_v2 spec_store_bypass swapgs taa eibrs_pbrsb bhi ibpb_no_ret spectre_v2_user
bogomips	: 4200.00
clflush size	: 64
cache_alignment	: 64
address sizes	: 46 bits physical, 57 bits virtual
power management:

)cpuinfo";
constexpr uint64_t kQemuMaxHwcap = 0xecfffffb;
constexpr uint64_t kQemuMaxHwcap2 = 0x7f877fff;
constexpr uint64_t kQemuMaxMidr = 0x000f0510;

const char* kPi4Block =
    "BogoMIPS\t: 108.00\n"
    "Features\t: fp asimd evtstrm crc32 cpuid\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x0\n"
    "CPU part\t: 0xd08\n"
    "CPU revision\t: 3\n";

ArmBoardSources Sources(std::string cpuinfo, uint64_t hwcap, uint64_t hwcap2) {
  ArmBoardSources sources;
  sources.proc_cpuinfo = std::move(cpuinfo);
  sources.hwcap = hwcap;
  sources.hwcap2 = hwcap2;
  sources.kernel_release = "6.1.0";
  sources.machine = "aarch64";
  return sources;
}

bool Contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(BoardEmulation, QemuUserShowsTheHostsCpuinfo) {
  auto board = ParseArmBoard(kQemuCpuinfo, kQemuMaxHwcap, kQemuMaxHwcap2, "6.18.44-fc-v657", "aarch64");
  ASSERT_TRUE(board.ok()) << board.status().ToString();
  EXPECT_TRUE(board->emulated);
  EXPECT_TRUE(Contains(board->emulation_reason, "no 'CPU implementer' line")) << board->emulation_reason;
  EXPECT_TRUE(Contains(board->emulation_reason, "vendor_id 'GenuineIntel'")) << board->emulation_reason;
  EXPECT_TRUE(Contains(board->emulation_reason, "model name 'Intel(R) Xeon(R) Processor'")) << board->emulation_reason;
  EXPECT_TRUE(board->core_types.empty());
  EXPECT_EQ(board->mcpu, "generic");
  EXPECT_FALSE(board->mcpu_known);
  EXPECT_EQ(board->cores, 2);  // the host's processors, which run the emulated threads
  // qemu's "max" CPU offers every feature tunefarm's code generator asks about.
  EXPECT_EQ(board->features,
            (std::vector<std::string>{"+bf16", "+dotprod", "+fullfp16", "+i8mm", "+neon", "+sve", "+sve2"}));
  EXPECT_EQ(DeviceKeySuffix(*board), "-emulated");
  HardwareFingerprint f = ToHardwareFingerprint(*board, "llvm-16");
  EXPECT_EQ(f.arch, "generic-emulated");  // never equal to a real board's "generic"
  EXPECT_EQ(f.isa, "aarch64");
}

TEST(BoardEmulation, QemuMaxCpusMidrIsASecondSignalAndDescribesTheCore) {
  ArmBoardSources sources = Sources(std::string(kQemuCpuinfo), kQemuMaxHwcap, kQemuMaxHwcap2);
  sources.midr_el1 = kQemuMaxMidr;
  auto board = ParseArmBoard(sources);
  ASSERT_TRUE(board.ok()) << board.status().ToString();
  EXPECT_TRUE(board->emulated);
  EXPECT_TRUE(Contains(board->emulation_reason, "no 'CPU implementer' line")) << board->emulation_reason;
  EXPECT_TRUE(Contains(board->emulation_reason, "MIDR_EL1 is 0x000f0510")) << board->emulation_reason;
  ASSERT_EQ(board->core_types.size(), 1u);
  EXPECT_EQ(board->core_types[0].implementer, 0x00u);
  EXPECT_EQ(board->core_types[0].part, 0x051u);
  EXPECT_EQ(board->core_types[0].count, 2);
  EXPECT_EQ(board->mcpu, "generic");
}

TEST(BoardEmulation, QemuWithANamedCpuIsThatCoreButEmulated) {
  // qemu-aarch64 -cpu cortex-a72: MIDR 0x410fd083, HWCAP fp asimd aes pmull sha1 sha2 crc32 cpuid.
  ArmBoardSources sources = Sources(std::string(kQemuCpuinfo), 0x8fb, 0x0);
  sources.midr_el1 = 0x410fd083;
  auto board = ParseArmBoard(sources);
  ASSERT_TRUE(board.ok()) << board.status().ToString();
  EXPECT_TRUE(board->emulated);
  EXPECT_EQ(board->mcpu, "cortex-a72");
  EXPECT_EQ(board->core_types[0].revision, 3u);
  EXPECT_EQ(ToHardwareFingerprint(*board, "t").arch, "cortex-a72-emulated");
}

TEST(BoardEmulation, ImplementerZeroInCpuinfoIsEmulated) {
  // How a CPU-emulating cpuinfo (qemu's "max" CPU) names its core: implementer 0x00, reserved for software.
  std::string cpuinfo = Blocks(0, 2, "CPU implementer\t: 0x00\nCPU architecture: 8\nCPU variant\t: 0x0\n"
                                     "CPU part\t: 0x051\nCPU revision\t: 0\n");
  ArmBoard board = MustParse(cpuinfo, kQemuMaxHwcap, kQemuMaxHwcap2, "6.1.0");
  EXPECT_TRUE(board.emulated);
  EXPECT_TRUE(Contains(board.emulation_reason, "implementer 0x00")) << board.emulation_reason;
}

TEST(BoardEmulation, MidrThatNoCpuinfoCoreMatchesIsEmulated) {
  ArmBoardSources sources = Sources(Blocks(0, 4, kPi4Block), 0x887, 0);
  sources.midr_el1 = 0x414fd0b1;  // Cortex-A76 r4p1
  auto board = ParseArmBoard(sources);
  ASSERT_TRUE(board.ok());
  EXPECT_TRUE(board->emulated);
  EXPECT_TRUE(Contains(board->emulation_reason, "a core /proc/cpuinfo does not list")) << board->emulation_reason;
  EXPECT_EQ(board->mcpu, "cortex-a72");  // cpuinfo still names the cores

  sources.midr_el1 = 0x410fd083;  // the Pi 4's own
  board = ParseArmBoard(sources);
  ASSERT_TRUE(board.ok());
  EXPECT_FALSE(board->emulated) << board->emulation_reason;
}

TEST(BoardEmulation, ForeignFieldsBesideArmCoresAreEmulated) {
  std::string cpuinfo = Blocks(0, 1, std::string("vendor_id\t: AuthenticAMD\n") + kPi4Block);
  ArmBoard board = MustParse(cpuinfo, 0x887, 0, "6.1.0");
  EXPECT_TRUE(board.emulated);
  EXPECT_TRUE(Contains(board.emulation_reason, "vendor_id 'AuthenticAMD'")) << board.emulation_reason;
}

TEST(BoardEmulation, TheCallerCanDeclareEmulationButNotDenyIt) {
  EmulationDeclaration declared{true, "--emulated given"};
  auto real = ParseArmBoard(Sources(Blocks(0, 4, kPi4Block), 0x887, 0), declared);
  ASSERT_TRUE(real.ok());
  EXPECT_TRUE(real->emulated);
  EXPECT_EQ(real->emulation_reason, "declared emulated by the caller: --emulated given");
  EXPECT_EQ(real->mcpu, "cortex-a72");

  auto no_reason = ParseArmBoard(Sources(Blocks(0, 4, kPi4Block), 0x887, 0), EmulationDeclaration{true, ""});
  ASSERT_TRUE(no_reason.ok());
  EXPECT_EQ(no_reason->emulation_reason, "declared emulated by the caller");

  // A declaration of false is no declaration: qemu stays emulated.
  auto qemu = ParseArmBoard(Sources(std::string(kQemuCpuinfo), kQemuMaxHwcap, kQemuMaxHwcap2),
                            EmulationDeclaration{false, "a real board, honest"});
  ASSERT_TRUE(qemu.ok());
  EXPECT_TRUE(qemu->emulated);
  EXPECT_FALSE(Contains(qemu->emulation_reason, "honest"));
}

TEST(BoardEmulation, EmptyCpuinfoIsTreatedAsEmulated) {
  ArmBoardSources sources = Sources("", 0x887, 0);
  sources.online_cores = 3;
  auto board = ParseArmBoard(sources);
  ASSERT_TRUE(board.ok());
  EXPECT_TRUE(board->emulated);
  EXPECT_EQ(board->cores, 3);
  EXPECT_EQ(board->mcpu, "generic");
  EXPECT_TRUE(Contains(board->mcpu_note, "no core could be read")) << board->mcpu_note;
}

TEST(BoardEmulation, ThisHostIsNotAnArmBoard) {
#if defined(__aarch64__) && defined(__linux__)
  GTEST_SKIP() << "this build runs on aarch64; board_fingerprint_qemu_test reads a board";
#else
  auto board = ReadThisArmBoard();
  ASSERT_FALSE(board.ok());
  EXPECT_EQ(board.status().code(), StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(board.status().message(), "not built for aarch64 Linux")) << board.status().message();
#endif
}

// ---- malformed text -------------------------------------------------------

Status ParseError(std::string_view cpuinfo, std::string_view machine = "aarch64") {
  auto board = ParseArmBoard(cpuinfo, 0x887, 0, "6.1.0", machine);
  return board.ok() ? Status::OK() : board.status();
}

TEST(BoardMalformed, MachineMustBeAarch64) {
  Status status = ParseError(Blocks(0, 1, kPi4Block), "x86_64");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "uname -m says 'x86_64', not aarch64: not an arm64 board (or a 32-bit user space on one)");
  EXPECT_FALSE(ParseError(Blocks(0, 1, kPi4Block), "armv7l").ok());
  EXPECT_FALSE(ParseError(Blocks(0, 1, kPi4Block), "").ok());
  EXPECT_TRUE(ParseError(Blocks(0, 1, kPi4Block), "aarch64\n").ok());  // uname's text may end in a newline
}

TEST(BoardMalformed, GarbageValuesNameTheirLine) {
  struct Case {
    std::string field_line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"CPU part\t: 0xzz", "/proc/cpuinfo line 7: CPU part '0xzz' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t: 0x1000", "/proc/cpuinfo line 7: CPU part '0x1000' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t: d08", "/proc/cpuinfo line 7: CPU part 'd08' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t:", "/proc/cpuinfo line 7: CPU part '' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t: 0x", "/proc/cpuinfo line 7: CPU part '0x' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t: 0xffffffffffffffffffff",
       "/proc/cpuinfo line 7: CPU part '0xffffffffffffffffffff' is not a hexadecimal number 0x000-0xfff"},
      {"CPU part\t: -0xd08", "/proc/cpuinfo line 7: CPU part '-0xd08' is not a hexadecimal number 0x000-0xfff"},
  };
  for (const Case& c : cases) {
    std::string block = kPi4Block;
    block.replace(block.find("CPU part\t: 0xd08"), std::string("CPU part\t: 0xd08").size(), c.field_line);
    Status status = ParseError(Blocks(0, 1, block));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.field_line;
    EXPECT_EQ(status.message(), c.message);
  }
  EXPECT_EQ(ParseError(Blocks(0, 1, "CPU implementer\t: 0x100\n")).message(),
            "/proc/cpuinfo line 2: CPU implementer '0x100' is not a hexadecimal number 0x00-0xff");
  EXPECT_EQ(ParseError(Blocks(0, 1, "CPU variant\t: 0x10\n")).message(),
            "/proc/cpuinfo line 2: CPU variant '0x10' is not a hexadecimal number 0x0-0xf");
  EXPECT_EQ(ParseError(Blocks(0, 1, "CPU revision\t: 16\n")).message(),
            "/proc/cpuinfo line 2: CPU revision '16' is not a decimal number 0-15");
  EXPECT_EQ(ParseError(Blocks(0, 1, "CPU revision\t: 0x3\n")).message(),
            "/proc/cpuinfo line 2: CPU revision '0x3' is not a decimal number 0-15");
}

TEST(BoardMalformed, LongOrBinaryValuesAreQuotedBounded) {
  std::string huge(100000, 'z');
  Status status = ParseError(Blocks(0, 1, "CPU part\t: 0x" + huge + "\n"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_LT(status.message().size(), 200u) << status.message();
  status = ParseError(Blocks(0, 1, std::string("CPU part\t: 0x\x01\xff\n")));
  EXPECT_TRUE(Contains(status.message(), "\\x01\\xff")) << status.message();
}

TEST(BoardMalformed, ACoreWithoutAllFourFieldsIsRefused) {
  EXPECT_EQ(ParseError(Blocks(0, 1, "CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd08\n")).message(),
            "/proc/cpuinfo line 2: a core is described without a 'CPU revision' line (the text is cut or not the "
            "kernel's)");
  // The second block's fields, without their "processor" line, begin a new core.
  std::string two = "CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n"
                    "CPU implementer\t: 0x41\nCPU part\t: 0xd08\n";
  EXPECT_EQ(ParseError(two).message(),
            "/proc/cpuinfo line 5: a core is described without a 'CPU variant' line (the text is cut or not the "
            "kernel's)");
}

TEST(BoardMalformed, EveryCutOfARealTextGivesABoardOrAnError) {
  std::string text = Blocks(0, 4, kPi4Block) + "Model\t\t: Raspberry Pi 4 Model B Rev 1.1\n";
  int boards = 0, errors = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    auto board = ParseArmBoard(std::string_view(text).substr(0, n), 0x887, 0, "6.1.0", "aarch64");
    if (!board.ok()) {
      ++errors;
      EXPECT_TRUE(Contains(board.status().message(), "/proc/cpuinfo line ")) << board.status().message();
      continue;
    }
    ++boards;
    for (const ArmCoreType& core : board->core_types) EXPECT_GT(core.count, 0);
    if (board->core_types.empty()) {
      EXPECT_TRUE(board->emulated);  // nothing read: never passed off as a board
    }
  }
  EXPECT_GT(boards, 0);
  EXPECT_GT(errors, 0);
  // The whole text is the Pi 4.
  EXPECT_EQ(MustParse(text, 0x887, 0, "6.1.0").core_types[0].count, 4);
}

TEST(BoardMalformed, ArbitraryBytesNeverCrash) {
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1103515245u + 12345u; };
  const std::string_view kPieces[] = {"CPU implementer", "CPU part", "CPU variant", "CPU revision",
                                      "processor",       ":",        "\t",          "\n",
                                      "0x41",            "0xd08",    "3",           "0x",
                                      "vendor_id",       " ",        "\r",          std::string_view("\0", 1)};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    int pieces = int(next() % 40);
    for (int i = 0; i < pieces; ++i) {
      if (next() % 4 == 0) {
        text += char(next() >> 16);
      } else {
        text += kPieces[(next() >> 8) % std::size(kPieces)];
      }
    }
    auto board = ParseArmBoard(text, next(), next(), "6.1.0", "aarch64");
    if (board.ok()) {
      EXPECT_FALSE(board->target.empty());
      EXPECT_EQ(board->emulated, !board->emulation_reason.empty());
    } else {
      EXPECT_EQ(board.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace tunefarm
