// ParseArmBoard and the conversions of board_fingerprint.h.
//
// /proc/cpuinfo on arm64 Linux prints one block per online core (older
// kernels: one block for all of them, after the "processor" lines); each
// block's MIDR_EL1 fields are the only lines read for the cores. The kernel
// prints them as "0x%02x" (implementer), "0x%x" (variant), "0x%03x" (part) and
// "%d" (revision), so anything else is refused rather than guessed at.
#include "tunefarm/worker/board_fingerprint.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "tunefarm/common/quote.h"

namespace tunefarm {

namespace {

constexpr std::string_view kMachine = "aarch64";
constexpr uint32_t kSoftwareImplementer = 0x00;  // "reserved for software use": qemu's "max" CPU

std::string_view Trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  size_t end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

std::string Hex(uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, value);
  return buf;
}

// "0x" and hex digits (the kernel's form), at most `max`.
std::optional<uint32_t> ParseHex(std::string_view v, uint32_t max) {
  if (v.size() < 3 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X')) return std::nullopt;
  uint64_t value = 0;
  for (char c : v.substr(2)) {
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + uint64_t(digit);
    if (value > max) return std::nullopt;
  }
  return uint32_t(value);
}

std::optional<uint32_t> ParseDecimal(std::string_view v, uint32_t max) {
  if (v.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + uint64_t(c - '0');
    if (value > max) return std::nullopt;
  }
  return uint32_t(value);
}

// One MIDR field of a cpuinfo block: its line's key, form and range.
struct MidrField {
  std::string_view key;
  bool hex;
  uint32_t max;
  std::string_view expected;  // for the error message
};
constexpr std::array<MidrField, 4> kMidrFields = {{
    {"CPU implementer", true, 0xff, "0x00-0xff"},
    {"CPU variant", true, 0xf, "0x0-0xf"},
    {"CPU part", true, 0xfff, "0x000-0xfff"},
    {"CPU revision", false, 0xf, "0-15"},
}};

// The cores and other facts a /proc/cpuinfo text holds.
struct CpuinfoScan {
  std::vector<ArmCoreType> core_types;  // in order of appearance, counted by block
  int64_t blocks = 0;
  int64_t processors = 0;  // "processor : N" lines
  std::string model;       // "Model", else "Hardware"
  std::string foreign;     // another architecture's fields, e.g. "vendor_id 'GenuineIntel'"
};

ArmCoreType MakeCoreType(uint32_t implementer, uint32_t part, uint32_t variant, uint32_t revision) {
  ArmCoreType core;
  core.implementer = implementer;
  core.part = part;
  core.variant = variant;
  core.revision = revision;
  if (const ArmPartInfo* info = FindArmPart(implementer, part)) {
    core.name = std::string(info->name);
    core.mcpu = std::string(info->mcpu);
    core.known = true;
  } else {
    core.name = "unknown part " + Hex(part, 3) + " of implementer " + Hex(implementer, 2);
    core.mcpu = "generic";
  }
  return core;
}

void AddCore(std::vector<ArmCoreType>* types, ArmCoreType core, int64_t count) {
  for (ArmCoreType& t : *types) {
    if (t.implementer == core.implementer && t.part == core.part && t.variant == core.variant &&
        t.revision == core.revision) {
      t.count += count;
      return;
    }
  }
  core.count = count;
  types->push_back(std::move(core));
}

Result<CpuinfoScan> ScanCpuinfo(std::string_view text) {
  CpuinfoScan scan;
  std::array<std::optional<uint32_t>, 4> block;  // kMidrFields' values of the block being read
  size_t block_line = 0;                          // where it began
  std::string hardware;
  auto block_empty = [&] {
    return std::none_of(block.begin(), block.end(), [](const auto& v) { return v.has_value(); });
  };

  auto flush = [&]() -> Status {
    if (block_empty()) return Status::OK();
    for (size_t f = 0; f < block.size(); ++f) {
      if (!block[f]) {
        return Status::InvalidArgument("/proc/cpuinfo line " + std::to_string(block_line) +
                                       ": a core is described without a '" + std::string(kMidrFields[f].key) +
                                       "' line (the text is cut or not the kernel's)");
      }
    }
    AddCore(&scan.core_types, MakeCoreType(*block[0], *block[2], *block[1], *block[3]), 1);
    ++scan.blocks;
    block = {};
    return Status::OK();
  };
  auto note_foreign = [&](std::string_view key, std::string_view value) {
    if (scan.foreign.find(std::string(key) + " ") != std::string::npos) return;
    if (!scan.foreign.empty()) scan.foreign += ", ";
    scan.foreign += std::string(key) + " " + QuoteInput(value);
  };

  size_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // blank lines between blocks; nothing else to read
    std::string_view key = Trim(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));

    if (key == "processor") {
      TF_RETURN_IF_ERROR(flush());
      if (ParseDecimal(value, 1u << 20)) ++scan.processors;
      continue;
    }
    if (key == "Model") scan.model = std::string(value);
    if (key == "Hardware") hardware = std::string(value);
    // What x86 kernels print and arm64 ones never do: qemu-user shows the host's cpuinfo.
    if (key == "vendor_id" || key == "cpu family") note_foreign(key, value);
    if (key == "model name" && !scan.foreign.empty()) note_foreign(key, value);

    for (size_t f = 0; f < kMidrFields.size(); ++f) {
      const MidrField& field = kMidrFields[f];
      if (key != field.key) continue;
      auto parsed = field.hex ? ParseHex(value, field.max) : ParseDecimal(value, field.max);
      if (!parsed) {
        return Status::InvalidArgument("/proc/cpuinfo line " + std::to_string(line_number) + ": " +
                                       std::string(field.key) + " " + QuoteInput(value) + " is not " +
                                       (field.hex ? "a hexadecimal number " : "a decimal number ") +
                                       std::string(field.expected));
      }
      if (block[f]) TF_RETURN_IF_ERROR(flush());  // a second block without a "processor" line
      if (block_empty()) block_line = line_number;
      block[f] = parsed;
    }
  }
  TF_RETURN_IF_ERROR(flush());
  if (scan.model.empty()) scan.model = hardware;

  // Older kernels describe all cores in one block: it stands for every processor.
  if (scan.core_types.size() == 1 && scan.blocks == 1 && scan.processors > 1) {
    scan.core_types[0].count = scan.processors;
  }
  return scan;
}

// The LLVM features tunefarm's code generator cares about, each "+name"
// when the HWCAP bits say the board has it and "-name" otherwise: an -mcpu
// implies features (neoverse-v1: sve) that a kernel or hypervisor may hide,
// and code using them would die with SIGILL.
std::vector<std::string> FeaturesFromHwcap(uint64_t hwcap, uint64_t hwcap2) {
  if (hwcap == 0 && hwcap2 == 0) return {};  // not read: the -mcpu's own features stand
  const std::pair<std::string_view, bool> present_by_name[] = {
      {"neon", (hwcap & arm_hwcap::kAsimd) != 0},
      {"dotprod", (hwcap & arm_hwcap::kAsimddp) != 0},
      {"fullfp16", (hwcap & arm_hwcap::kFphp) != 0 && (hwcap & arm_hwcap::kAsimdhp) != 0},
      {"sve", (hwcap & arm_hwcap::kSve) != 0},
      {"sve2", (hwcap2 & arm_hwcap2::kSve2) != 0},
      {"i8mm", (hwcap2 & arm_hwcap2::kI8mm) != 0},
      {"bf16", (hwcap2 & arm_hwcap2::kBf16) != 0},
  };
  std::vector<std::string> features;
  for (const auto& [name, present] : present_by_name) features.push_back((present ? "+" : "-") + std::string(name));
  std::sort(features.begin(), features.end());
  return features;
}

int Tier(const ArmCoreType& core) {
  const ArmPartInfo* info = FindArmPart(core.implementer, core.part);
  return info == nullptr ? -1 : info->tier;
}

void AddReason(ArmBoard* board, const std::string& reason) {
  if (!board->emulation_reason.empty()) board->emulation_reason += "; ";
  board->emulation_reason += reason;
  board->emulated = true;
}

// The emulation signals (docs/arm.md, "Board fingerprint").
void DetectEmulation(const ArmBoardSources& sources, const CpuinfoScan& scan, ArmBoard* board) {
  if (scan.core_types.empty()) {
    std::string reason = "/proc/cpuinfo has no 'CPU implementer' line though uname -m says " + std::string(kMachine) +
                         ", and an arm64 kernel lists every core: ";
    reason += scan.foreign.empty()
                  ? "this is no arm64 kernel's cpuinfo"
                  : "it is another architecture's (" + scan.foreign + "), as qemu-user shows its host's";
    AddReason(board, reason);
  } else if (!scan.foreign.empty()) {
    AddReason(board, "/proc/cpuinfo carries another architecture's fields (" + scan.foreign + ")");
  }
  for (const ArmCoreType& core : scan.core_types) {
    if (core.implementer == kSoftwareImplementer) {
      AddReason(board, "/proc/cpuinfo names implementer 0x00 (part " + Hex(core.part, 3) +
                           "), reserved for software use, as in qemu's 'max' CPU");
      break;
    }
  }
  if (sources.midr_el1) {
    uint64_t midr = *sources.midr_el1;
    uint32_t implementer = uint32_t(midr >> 24) & 0xff;
    uint32_t part = uint32_t(midr >> 4) & 0xfff;
    std::string midr_text = Hex(uint32_t(midr), 8);
    bool listed = std::any_of(scan.core_types.begin(), scan.core_types.end(), [&](const ArmCoreType& c) {
      return c.implementer == implementer && c.part == part;
    });
    if (implementer == kSoftwareImplementer) {
      AddReason(board, "MIDR_EL1 is " + midr_text + ": implementer 0x00 is reserved for software use, as in qemu's "
                           "'max' CPU");
    } else if (!scan.core_types.empty() && !listed) {
      AddReason(board, "MIDR_EL1 " + midr_text + " names implementer " + Hex(implementer, 2) + " part " +
                           Hex(part, 3) + ", a core /proc/cpuinfo does not list");
    }
  }
}

}  // namespace

Result<ArmBoard> ParseArmBoard(const ArmBoardSources& sources, const EmulationDeclaration& declared) {
  std::string_view machine = Trim(sources.machine);
  if (machine != kMachine) {
    return Status::InvalidArgument("uname -m says " + QuoteInput(machine) + ", not " + std::string(kMachine) +
                                   ": not an arm64 board (or a 32-bit user space on one)");
  }
  TF_ASSIGN_OR_RETURN(CpuinfoScan scan, ScanCpuinfo(sources.proc_cpuinfo));

  ArmBoard board;
  board.machine = std::string(machine);
  board.kernel_release = std::string(Trim(sources.kernel_release));
  board.model = scan.model;
  board.hwcap = sources.hwcap;
  board.hwcap2 = sources.hwcap2;
  board.cores = scan.processors > 0 ? scan.processors : scan.blocks > 0 ? scan.blocks : sources.online_cores;
  DetectEmulation(sources, scan, &board);

  board.core_types = scan.core_types;
  if (board.core_types.empty() && sources.midr_el1) {
    // No cpuinfo to go by (emulated): the CPU the emulator models is the best description.
    uint64_t midr = *sources.midr_el1;
    AddCore(&board.core_types,
            MakeCoreType(uint32_t(midr >> 24) & 0xff, uint32_t(midr >> 4) & 0xfff, uint32_t(midr >> 20) & 0xf,
                         uint32_t(midr) & 0xf),
            std::max<int64_t>(board.cores, 1));
  }
  std::stable_sort(board.core_types.begin(), board.core_types.end(), [](const ArmCoreType& a, const ArmCoreType& b) {
    if (Tier(a) != Tier(b)) return Tier(a) > Tier(b);
    return a.count > b.count;
  });

  if (board.core_types.empty()) {
    board.mcpu_note = "no core could be read: LLVM's generic AArch64 CPU, with the features HWCAP reports";
  } else {
    const ArmCoreType& biggest = board.core_types[0];
    board.mcpu = biggest.mcpu;
    board.mcpu_known = biggest.known;
    const ArmPartInfo* info = FindArmPart(biggest.implementer, biggest.part);
    if (info == nullptr) {
      board.mcpu_note = "implementer " + Hex(biggest.implementer, 2) + " part " + Hex(biggest.part, 3) +
                        " is not in tunefarm's CPU part table: LLVM's generic AArch64 CPU, with the features "
                        "HWCAP reports";
    } else if (!info->note.empty()) {
      board.mcpu_note = biggest.name + ": " + std::string(info->note);
    }
    if (info != nullptr && std::any_of(board.core_types.begin(), board.core_types.end(),
                                       [](const ArmCoreType& c) { return !c.known; })) {
      board.mcpu_note += std::string(board.mcpu_note.empty() ? "" : "; ") +
                         "named by the biggest known core: another core's part is not in tunefarm's table";
    }
  }

  board.features = FeaturesFromHwcap(sources.hwcap, sources.hwcap2);
  board.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=" + board.mcpu;
  for (size_t i = 0; i < board.features.size(); ++i) board.target += (i == 0 ? " -mattr=" : ",") + board.features[i];
  // A length the kernel cannot report (not a multiple of 16 bytes, over
  // SVE's 256) is left out: the code is then NEON-width, which runs anywhere.
  bool has_sve = std::find(board.features.begin(), board.features.end(), "+sve") != board.features.end();
  if (has_sve && sources.sve_vector_bytes > 0 && sources.sve_vector_bytes <= 256 &&
      sources.sve_vector_bytes % 16 == 0) {
    board.sve_bits = int(sources.sve_vector_bytes * 8);
    board.target += " -sve-bits=" + std::to_string(board.sve_bits);
  }

  if (declared.emulated) {
    std::string reason = "declared emulated by the caller";
    if (!declared.reason.empty()) reason += ": " + declared.reason;
    AddReason(&board, reason);
  }
  return board;
}

Result<ArmBoard> ParseArmBoard(std::string_view proc_cpuinfo, uint64_t hwcap, uint64_t hwcap2,
                               std::string_view kernel_release, std::string_view machine) {
  ArmBoardSources sources;
  sources.proc_cpuinfo = std::string(proc_cpuinfo);
  sources.hwcap = hwcap;
  sources.hwcap2 = hwcap2;
  sources.kernel_release = std::string(kernel_release);
  sources.machine = std::string(machine);
  return ParseArmBoard(sources);
}

std::string DeviceKeySuffix(const ArmBoard& board) { return board.emulated ? std::string(kEmulatedSuffix) : ""; }

HardwareFingerprint ToHardwareFingerprint(const ArmBoard& board, std::string toolchain) {
  HardwareFingerprint f;
  f.isa = std::string(kMachine);
  f.features = board.features;
  std::sort(f.features.begin(), f.features.end());
  f.features.erase(std::unique(f.features.begin(), f.features.end()), f.features.end());
  f.arch = board.mcpu + DeviceKeySuffix(board);
  f.cores = board.cores;
  f.toolchain = std::move(toolchain);
  return f;
}

std::string DescribeArmBoard(const ArmBoard& board) {
  std::string text;
  for (const ArmCoreType& core : board.core_types) {
    if (!text.empty()) text += " + ";
    text += core.name + " r" + std::to_string(core.variant) + "p" + std::to_string(core.revision) + " x" +
            std::to_string(core.count);
  }
  if (text.empty()) text = "no core described";
  text += " (mcpu " + board.mcpu + ")";
  if (board.sve_bits > 0) text += ", SVE " + std::to_string(board.sve_bits) + "-bit";
  text += ", " + std::to_string(board.cores) + " cores, kernel " + board.kernel_release;
  if (board.emulated) text += ", emulated: " + board.emulation_reason;
  return text;
}

}  // namespace tunefarm
