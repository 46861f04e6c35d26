// Target parsing, canonical printing and host detection.
//
// Validation asks LLVM itself (the target registry, and the MCSubtargetInfo
// of the triple) whether a triple, CPU or feature name exists, so that the
// accepted set is exactly what the code generator can honour: a target that
// parses here is one a job can be tuned and a kernel compiled for.
#include "tunefarm/compiler/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "codegen/llvm/codegen_llvm_internal.h"
#include "tunefarm/common/quote.h"

namespace tunefarm {
namespace {

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// The subtarget info for (triple, cpu, features), or null when LLVM lacks the triple.
std::unique_ptr<llvm::MCSubtargetInfo> SubtargetInfo(const std::string& triple, const std::string& cpu,
                                                     const std::string& features) {
  codegen::InitializeLLVMTargets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(target->createMCSubtargetInfo(triple, cpu, features));
}

// The nearest CPU LLVM 16 knows for a host it calls "generic" (e.g. Zen 5), by features.
std::string NearestX86Cpu(const llvm::StringMap<bool>& f) {
  auto has = [&](const char* name) {
    auto it = f.find(name);
    return it != f.end() && it->second;
  };
  if (has("avx512f") && has("avx512bf16") && has("avx512vnni") && has("avx512vbmi2")) return "znver4";
  if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq")) return "x86-64-v4";
  if (has("avx2") && has("fma") && has("vaes") && has("vpclmulqdq")) return "znver3";
  if (has("avx2") && has("fma") && has("bmi2")) return "x86-64-v3";
  if (has("sse4.2") && has("popcnt")) return "x86-64-v2";
  return "x86-64";
}

// Host features that differ from what `cpu` implies, as "+a,-b" (sorted), so the
// canonical text stays short yet complete.
std::string HostFeatureDelta(const std::string& triple, const std::string& cpu,
                             const llvm::StringMap<bool>& host) {
  auto sti = SubtargetInfo(triple, cpu, "");
  std::vector<std::string> delta;
  for (const auto& entry : host) {
    // checkFeatures("+x") holds iff x (and all it implies) is on for the CPU;
    // "-x" cannot be asked directly (it also demands x's implied features be off).
    bool cpu_has = sti != nullptr && sti->checkFeatures("+" + entry.first().str());
    if (cpu_has == entry.second) continue;
    delta.push_back((entry.second ? "+" : "-") + entry.first().str());
  }
  std::sort(delta.begin(), delta.end());
  std::string out;
  for (const auto& d : delta) out += (out.empty() ? "" : ",") + d;
  return out;
}

}  // namespace

Target Target::Host() {
  static const Target host = [] {
    Target t;
    t.kind = "llvm";
    t.triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features;
    bool have_features = llvm::sys::getHostCPUFeatures(features);
    llvm::Triple tt(t.triple);
    if ((t.cpu.empty() || t.cpu == "generic") && tt.isX86()) t.cpu = NearestX86Cpu(features);
    if (t.cpu.empty()) t.cpu = "generic";
    if (have_features) t.features = HostFeatureDelta(t.triple, t.cpu, features);
    return t;
  }();
  return host;
}

Result<Target> Target::Parse(std::string_view text) {
  std::vector<std::string> words = SplitWords(text);
  if (words.empty()) return Status::InvalidArgument("empty target string");
  Target t;
  t.kind = words[0];
  if (t.kind != "llvm" && t.kind != "cuda") {
    return Status::InvalidArgument("unknown target kind " + QuoteInput(t.kind) + " in " + QuoteInput(text) +
                                   " (expected llvm or cuda)");
  }
  bool have_triple = false, have_cpu = false, native = false;
  std::string mattr;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    size_t eq = w.find('=');
    std::string key = w.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    auto bad = [&](const std::string& why) {
      return Status::InvalidArgument("bad target option " + QuoteInput(w) + " in " + QuoteInput(text) + ": " + why);
    };
    if (eq == std::string::npos || value.empty()) return bad("expected -key=value");
    if (t.kind == "llvm" && key == "-mtriple") {
      t.triple = llvm::Triple::normalize(value);
      have_triple = true;
    } else if (t.kind == "llvm" && key == "-mcpu") {
      native = value == "native";
      t.cpu = value;
      have_cpu = true;
    } else if (t.kind == "llvm" && key == "-mattr") {
      for (const auto& f : SplitComma(value)) {
        if (f[0] != '+' && f[0] != '-') return bad("feature " + QuoteInput(f) + " must start with + or -");
      }
      mattr = value;
    } else if (key == "-num-threads") {
      char* end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || n < 0 || n > 4096) return bad("expected a thread count");
      t.num_threads = static_cast<int>(n);
    } else if (t.kind == "cuda" && key == "-arch") {
      if (value.size() < 4 || value.rfind("sm_", 0) != 0 ||
          !std::all_of(value.begin() + 3, value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad("expected sm_<digits>");
      }
      t.arch = value;
    } else {
      return bad("unknown option " + QuoteInput(key) + " for target kind " + t.kind);
    }
  }
  if (t.kind == "cuda") {
    if (t.arch.empty()) return Status::InvalidArgument("cuda target " + QuoteInput(text) + " needs -arch=sm_XX");
    return t;
  }

  // "llvm" with no triple, or -mcpu=native: this host (triple, CPU and features).
  const Target& host = Host();
  if (!have_triple) t.triple = host.triple;
  if (native || (!have_triple && !have_cpu)) {
    if (t.triple != host.triple) {
      return Status::InvalidArgument("-mcpu=native in " + QuoteInput(text) + " but triple " + QuoteInput(t.triple) +
                                     " is not the host's (" + host.triple + ")");
    }
    t.cpu = host.cpu;
    t.features = host.features;
  } else if (!have_cpu) {
    t.cpu = "generic";
  }
  if (!mattr.empty()) t.features = t.features.empty() ? mattr : t.features + "," + mattr;

  // The triple must be one this LLVM generates code for: a job tuned for
  // anything else could only fail in every worker's compiler.
  auto sti = SubtargetInfo(t.triple, "", "");
  if (sti == nullptr) {
    return Status::InvalidArgument("unknown triple " + QuoteInput(t.triple) + " in " + QuoteInput(text) +
                                   ": LLVM has no code generator for it (e.g. x86_64-linux-gnu, aarch64-linux-gnu)");
  }
  // Check CPU and features against the LLVM target.
  if (t.cpu != "generic" && !sti->isCPUStringValid(t.cpu)) {
    return Status::InvalidArgument("unknown CPU " + QuoteInput(t.cpu) + " for triple " + t.triple + " in " +
                                   QuoteInput(text));
  }
  for (const auto& f : SplitComma(mattr)) {
    // A known feature changes the feature bits between +f and -f; an unknown one is ignored by LLVM.
    std::string name = f.substr(1);
    auto on = SubtargetInfo(t.triple, "", "+" + name);
    auto off = SubtargetInfo(t.triple, "", "-" + name);
    if (on->getFeatureBits() == off->getFeatureBits()) {
      return Status::InvalidArgument("unknown feature " + QuoteInput(f) + " for triple " + t.triple + " in " +
                                     QuoteInput(text));
    }
  }
  return t;
}

Result<Target> ParseTargetField(std::string_view field, std::string_view text) {
  std::string name(field);
  if (text.size() > kMaxTargetTextBytes) {
    return Status::InvalidArgument(name + ": " + QuoteInput(text) + " is longer than " +
                                   std::to_string(kMaxTargetTextBytes) + " bytes");
  }
  auto target = Target::Parse(text);
  if (!target.ok()) return Status::InvalidArgument(name + ": " + target.status().message());
  // Target::Parse knows no other kinds than those tunefarm generates code for.
  return target;
}

std::string Target::ToString() const {
  std::string s = kind;
  if (kind == "cuda") {
    s += " -arch=" + arch;
  } else {
    if (!triple.empty()) s += " -mtriple=" + triple;
    if (!cpu.empty()) s += " -mcpu=" + cpu;
    if (!features.empty()) s += " -mattr=" + features;
  }
  if (num_threads > 0) s += " -num-threads=" + std::to_string(num_threads);
  return s;
}

std::string Target::DeviceKey() const {
  if (kind == "cuda") return "cuda/" + arch;
  return kind + "/" + llvm::Triple(triple).getArchName().str() + "/" + cpu;
}

int Target::VectorBits() const {
  if (kind != "llvm") return 128;
  llvm::Triple tt(triple);
  if (!tt.isX86()) return 128;  // NEON; SVE lengths are not modelled
  auto sti = SubtargetInfo(triple, cpu, features);
  if (sti == nullptr) return 128;
  if (sti->checkFeatures("+avx512f")) return 512;
  if (sti->checkFeatures("+avx")) return 256;
  return 128;
}

int Target::VectorRegisters() const {
  if (kind != "llvm") return 0;
  llvm::Triple tt(triple);
  if (tt.isAArch64()) return 32;
  return VectorBits() == 512 ? 32 : 16;
}

bool Target::HasFeature(std::string_view name) const {
  if (kind != "llvm" || name.empty()) return false;
  auto sti = SubtargetInfo(triple, cpu, features);
  if (sti == nullptr) return false;
  return sti->checkFeatures("+" + std::string(name));
}

bool Target::is_host() const {
  if (kind != "llvm") return false;
  llvm::Triple mine(triple), host(Host().triple);
  return mine.getArch() == host.getArch() && mine.getOS() == host.getOS();
}

}  // namespace tunefarm
