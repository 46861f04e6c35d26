// The text-only half of Target (target_backend.h), for the lean worker
// (TUNEFARM_LEAN_WORKER), which links no LLVM. It loads, runs and times
// objects the tuner built for it, so it must read the targets the daemon
// sends and the board offers, not judge what LLVM could generate:
//
// - Triples: the machines runtime/object_loader.h loads code for, x86_64
//   and aarch64 (LLVM's spellings), put in LLVM's normal form as LLVM would
//   ("aarch64-linux-gnu" -> "aarch64-unknown-linux-gnu").
// - CPU and feature names: well-formed LLVM names (lower-case letters,
//   digits, '-', '.', '_'), not checked against tables: the daemon, which
//   has LLVM, checked them before building.
// - The host: uname's machine on Linux, CPU "generic", no features but
//   SVE with its length when the process has it. The
//   lean worker names its CPU from the board (board_fingerprint.h).
// - Vector unit and features: only what the target's text says
//   (-mattr=+avx512f), not what its CPU implies; AArch64 is NEON, 128 bits,
//   or SVE of the length -sve-bits names (with +sve in -mattr).
#include <sys/utsname.h>

#include <algorithm>
#include <string>
#include <vector>

#include "target_backend.h"
#include "tunefarm/common/quote.h"

namespace tunefarm {
namespace {

// Machines the object loader relocates code for.
constexpr const char* kArches[] = {"x86_64", "aarch64"};
// Operating-system components LLVM's normaliser recognises in a triple's
// second place (it then inserts vendor "unknown" before them).
constexpr const char* kOsNames[] = {"linux", "none", "darwin", "freebsd", "windows", "android"};

std::vector<std::string> SplitDash(std::string_view triple) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dash = triple.find('-', start);
    parts.emplace_back(triple.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return parts;
}

bool IsLlvmName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
}

std::string ArchOf(const std::string& triple) { return triple.substr(0, triple.find('-')); }

// The OS component of a normalised triple ("linux" of x86_64-unknown-linux-gnu).
std::string OsOf(const std::string& triple) {
  std::vector<std::string> parts = SplitDash(triple);
  return parts.size() > 2 ? parts[2] : "";
}

// Whether the features text turns `name` on (the last +name/-name wins).
bool FeatureOn(const std::string& features, std::string_view name) {
  bool on = false;
  size_t start = 0;
  while (start < features.size()) {
    size_t comma = features.find(',', start);
    if (comma == std::string::npos) comma = features.size();
    std::string_view word(features.data() + start, comma - start);
    if (word.size() > 1 && word.substr(1) == name) on = word[0] == '+';
    start = comma + 1;
  }
  return on;
}

}  // namespace

namespace target_backend {

std::string NormalizeTriple(std::string_view triple) {
  std::vector<std::string> parts = SplitDash(triple);
  if (parts.size() >= 2 &&
      std::find(std::begin(kOsNames), std::end(kOsNames), parts[1]) != std::end(kOsNames)) {
    parts.insert(parts.begin() + 1, "unknown");
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "-") + p;
  return out;
}

Status CheckLlvmTarget(const Target& t, const std::vector<std::string>& mattr, std::string_view text) {
  std::string arch = ArchOf(t.triple);
  if (std::find(std::begin(kArches), std::end(kArches), arch) == std::end(kArches)) {
    return Status::InvalidArgument("unknown triple " + QuoteInput(t.triple) + " in " + QuoteInput(text) +
                                   ": this worker loads code for x86_64 and aarch64 only "
                                   "(e.g. x86_64-linux-gnu, aarch64-linux-gnu)");
  }
  if (t.cpu != "generic" && !IsLlvmName(t.cpu)) {
    return Status::InvalidArgument("unknown CPU " + QuoteInput(t.cpu) + " for triple " + t.triple + " in " +
                                   QuoteInput(text));
  }
  for (const std::string& f : mattr) {
    if (!IsLlvmName(std::string_view(f).substr(1))) {
      return Status::InvalidArgument("unknown feature " + QuoteInput(f) + " for triple " + t.triple + " in " +
                                     QuoteInput(text));
    }
  }
  return Status::OK();
}

}  // namespace target_backend

Target Target::Host() {
  static const Target host = [] {
    Target t;
    t.kind = "llvm";
    struct utsname u {};
    std::string machine = ::uname(&u) == 0 ? u.machine : "unknown";
    t.triple = machine + "-unknown-linux-gnu";
    t.cpu = "generic";
    // SVE, when this process has it, with the length it runs: the one fact
    // about the vector unit a runner must compare (is_host).
    if (target_backend::HostSveBits() > 0) {
      t.features = "+sve";
      t.sve_bits = target_backend::HostSveBits();
    }
    return t;
  }();
  return host;
}

int Target::VectorBits() const {
  if (kind == "llvm" && ArchOf(triple) == "aarch64") return sve_bits > 0 ? sve_bits : 128;
  if (kind != "llvm" || ArchOf(triple) != "x86_64") return 128;
  if (FeatureOn(features, "avx512f")) return 512;
  if (FeatureOn(features, "avx") || FeatureOn(features, "avx2")) return 256;
  return 128;
}

int Target::VectorRegisters() const {
  if (kind != "llvm") return 0;
  if (ArchOf(triple) == "aarch64") return 32;
  return VectorBits() == 512 ? 32 : 16;
}

bool Target::HasFeature(std::string_view name) const {
  if (kind != "llvm" || name.empty()) return false;
  return FeatureOn(features, name);
}

bool Target::is_host() const {
  if (kind != "llvm") return false;
  const Target& host = Host();
  // SVE code of a fixed length runs only where the length is the same.
  return ArchOf(triple) == ArchOf(host.triple) && OsOf(triple) == OsOf(host.triple) &&
         (sve_bits == 0 || sve_bits == target_backend::HostSveBits());
}

}  // namespace tunefarm
