// The ARM board a lean measurement worker runs on, read without LLVM: the
// kinds of core (/proc/cpuinfo's MIDR_EL1 fields), the LLVM -mcpu for the
// biggest of them, the LLVM features the kernel's HWCAP bits announce, the
// core count, the kernel, and whether the worker runs under emulation
// (qemu-user), so that times measured there never rank against a real
// board's.
//
// Everything here is plain C++ over text and integers, except
// ReadThisArmBoard, which reads this machine. It needs no LLVM, gRPC or
// project library other than tunefarm_common's status and quote sources:
// the lean arm64 worker and tests/worker/aarch64_probe compile these files
// with aarch64-linux-gnu-g++ alone. docs/arm.md ("Board fingerprint") says
// what is read and which emulation signals count.
//
// ArmBoard is a value type; it owns its strings. Invariants of a parsed
// board: core_types is sorted biggest core first and holds each distinct
// (implementer, part, variant, revision) once; mcpu is core_types[0].mcpu
// ("generic" when there is no core type or its part is not in the table);
// features is sorted and unique; emulated is true exactly when
// emulation_reason is not empty.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/common/status.h"

namespace tunefarm {

// HWCAP bits (getauxval(AT_HWCAP) / AT_HWCAP2) that the features below come
// from, as the Linux kernel's arch/arm64/include/uapi/asm/hwcap.h numbers
// them. Not <asm/hwcap.h> of the build host, which on x86 describes x86; the
// aarch64 build checks these against the aarch64 header.
namespace arm_hwcap {
inline constexpr uint64_t kFp = uint64_t{1} << 0;        // "fp"
inline constexpr uint64_t kAsimd = uint64_t{1} << 1;     // "asimd": Advanced SIMD (NEON)
inline constexpr uint64_t kEvtstrm = uint64_t{1} << 2;   // "evtstrm": timer event stream
inline constexpr uint64_t kFphp = uint64_t{1} << 9;      // "fphp": half precision scalar
inline constexpr uint64_t kAsimdhp = uint64_t{1} << 10;  // "asimdhp": half precision vector
inline constexpr uint64_t kCpuid = uint64_t{1} << 11;    // "cpuid": MRS of ID registers is emulated
inline constexpr uint64_t kAsimddp = uint64_t{1} << 20;  // "asimddp": dot product
inline constexpr uint64_t kSve = uint64_t{1} << 22;      // "sve"
}  // namespace arm_hwcap
namespace arm_hwcap2 {
inline constexpr uint64_t kSve2 = uint64_t{1} << 1;   // "sve2"
inline constexpr uint64_t kI8mm = uint64_t{1} << 13;  // "i8mm": int8 matrix multiply
inline constexpr uint64_t kBf16 = uint64_t{1} << 14;  // "bf16"
}  // namespace arm_hwcap2

// One entry of the CPU part table (board_fingerprint_parts.cpp): a core as
// MIDR_EL1 names it, and what LLVM 16 calls it.
struct ArmPartInfo {
  uint32_t implementer;  // MIDR_EL1[31:24]: 0x41 Arm Ltd, 0x4e NVIDIA, 0x61 Apple, ...
  uint32_t part;         // MIDR_EL1[15:4]
  std::string_view name;  // "Cortex-A72"
  std::string_view mcpu;  // an -mcpu LLVM 16 accepts for aarch64
  int tier;               // 0 efficiency (LITTLE) core, 1 performance, 2 prime (Cortex-X, Neoverse V)
  std::string_view note;  // why mcpu is not the part's own name, or empty
};

// The table, and the entry for (implementer, part) or nullptr.
std::span<const ArmPartInfo> ArmPartTable();
const ArmPartInfo* FindArmPart(uint32_t implementer, uint32_t part);

// One kind of core on the board.
struct ArmCoreType {
  uint32_t implementer = 0;  // "CPU implementer"
  uint32_t part = 0;         // "CPU part"
  uint32_t variant = 0;      // "CPU variant": the major revision, rVpR's V
  uint32_t revision = 0;     // "CPU revision": the minor revision, rVpR's R
  int64_t count = 0;         // cores of this kind
  std::string name;          // "Cortex-A72", or "unknown part 0xd99 of implementer 0x41"
  std::string mcpu;          // LLVM -mcpu; "generic" when the part is not in the table
  bool known = false;        // whether the part is in the table
  bool operator==(const ArmCoreType&) const = default;
};

struct ArmBoard {
  std::vector<ArmCoreType> core_types;  // biggest core first (tier, then count)
  std::string mcpu = "generic";         // the biggest core's
  bool mcpu_known = false;              // false: "generic", because the part is unknown or unread
  std::string mcpu_note;                // why mcpu is what it is when not the part's own name
  std::vector<std::string> features;    // "+neon", "-sve", ...: sorted; empty when HWCAP was 0
  uint64_t hwcap = 0;
  uint64_t hwcap2 = 0;
  int64_t cores = 0;            // "processor" entries, else the online count given
  std::string kernel_release;   // uname -r
  std::string machine;          // uname -m: always "aarch64" for a parsed board
  std::string model;            // cpuinfo's "Model" or "Hardware" line, when there is one
  std::string target;           // "llvm -mtriple=aarch64-linux-gnu -mcpu=<mcpu> -mattr=<features>[ -sve-bits=N]"
  // The SVE vector length user space runs with (prctl PR_SVE_GET_VL), in
  // bits; 0 without SVE or when it was not read. With it the target names
  // -sve-bits, so the tuner builds for exactly this length.
  int sve_bits = 0;
  bool emulated = false;
  std::string emulation_reason;  // every signal that fired, "; "-joined; empty when not emulated
};

// What ParseArmBoard reads; ReadThisArmBoard fills it from this machine.
struct ArmBoardSources {
  std::string proc_cpuinfo;
  uint64_t hwcap = 0;   // getauxval(AT_HWCAP)
  uint64_t hwcap2 = 0;  // getauxval(AT_HWCAP2)
  std::string kernel_release;
  std::string machine;
  // MRS MIDR_EL1, which the kernel emulates for user space when HWCAP has
  // "cpuid"; unset when it was not read.
  std::optional<uint64_t> midr_el1;
  // prctl(PR_SVE_GET_VL)'s length in bytes, when HWCAP has "sve"; 0 otherwise.
  int64_t sve_vector_bytes = 0;
  int64_t online_cores = 0;  // sysconf(_SC_NPROCESSORS_ONLN): used when cpuinfo lists no processor
};

// The caller's word that the worker runs emulated (a worker option). It can
// only add emulation: a board whose signals say "emulated" stays emulated
// whatever the caller says.
struct EmulationDeclaration {
  bool emulated = false;
  std::string reason;  // e.g. "--emulated given"; a default reason is used when empty
};

// The board the sources describe. InvalidArgument when `machine` is not
// "aarch64", or when a "CPU implementer/part/variant/revision" line holds
// something the kernel never prints (not hex, out of its MIDR field's range,
// a core described without all four): the message names the line. Text the
// kernel does print on other architectures (qemu-user shows the host's) is
// not an error: it is an emulation signal.
Result<ArmBoard> ParseArmBoard(const ArmBoardSources& sources, const EmulationDeclaration& declared = {});
Result<ArmBoard> ParseArmBoard(std::string_view proc_cpuinfo, uint64_t hwcap, uint64_t hwcap2,
                               std::string_view kernel_release, std::string_view machine);

// This machine: /proc/cpuinfo, getauxval, uname, sysconf, and MIDR_EL1 when
// HWCAP says the kernel emulates reading it. Unimplemented on a build that
// is not aarch64 Linux (it says so); IOError when /proc/cpuinfo cannot be read.
Result<ArmBoard> ReadThisArmBoard(const EmulationDeclaration& declared = {});

// What a device key gains for an emulated board: "-emulated" (kEmulatedSuffix)
// when board.emulated, else "". A worker appends it to its device key
// (Target::DeviceKey(), e.g. "llvm/aarch64/generic-emulated") so that
// emulated measurements and a real board's never share a key.
inline constexpr std::string_view kEmulatedSuffix = "-emulated";
std::string DeviceKeySuffix(const ArmBoard& board);

// The board as the tuning log's fingerprint: isa "aarch64", features as in
// board.features (sorted), cores, the caller's toolchain, and arch = the mcpu
// name plus DeviceKeySuffix: an emulated board's fingerprint never equals a
// real board's ("generic-emulated" against "generic").
HardwareFingerprint ToHardwareFingerprint(const ArmBoard& board, std::string toolchain);

// One line for logs: "Cortex-A76 r4p1 x4 + Cortex-A55 r2p0 x4 (mcpu cortex-a76), 8 cores,
// kernel 6.1.0, emulated: <reason>".
std::string DescribeArmBoard(const ArmBoard& board);

}  // namespace tunefarm
