// The LLVM half of Target (target_backend.h): validation asks LLVM itself
// (the target registry, and the MCSubtargetInfo of the triple) whether a
// triple, CPU or feature name exists, so that the accepted set is exactly
// what the code generator can honour: a target that parses here is one a job
// can be tuned and a kernel compiled for. The host is what LLVM detects.
#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "codegen/llvm/codegen_llvm_internal.h"
#include "target_backend.h"
#include "tunefarm/common/quote.h"

namespace tunefarm {
namespace {

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

namespace target_backend {

std::string NormalizeTriple(std::string_view triple) { return llvm::Triple::normalize(triple); }

Status CheckLlvmTarget(const Target& t, const std::vector<std::string>& mattr, std::string_view text) {
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
  for (const auto& f : mattr) {
    // A known feature changes the feature bits between +f and -f; an unknown one is ignored by LLVM.
    std::string name = f.substr(1);
    auto on = SubtargetInfo(t.triple, "", "+" + name);
    auto off = SubtargetInfo(t.triple, "", "-" + name);
    if (on->getFeatureBits() == off->getFeatureBits()) {
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
    t.triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
    t.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features;
    bool have_features = llvm::sys::getHostCPUFeatures(features);
    llvm::Triple tt(t.triple);
    if ((t.cpu.empty() || t.cpu == "generic") && tt.isX86()) t.cpu = NearestX86Cpu(features);
    if (t.cpu.empty()) t.cpu = "generic";
    if (have_features) t.features = HostFeatureDelta(t.triple, t.cpu, features);
    // An SVE host's code may use its exact vector length.
    if (tt.isAArch64() && target_backend::HostSveBits() > 0 && t.HasFeature("sve")) {
      t.sve_bits = target_backend::HostSveBits();
    }
    return t;
  }();
  return host;
}

int Target::VectorBits() const {
  if (kind != "llvm") return 128;
  llvm::Triple tt(triple);
  if (tt.isAArch64()) return sve_bits > 0 ? sve_bits : 128;  // Parse checked sve_bits needs SVE
  if (!tt.isX86()) return 128;
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
  // SVE code of a fixed length runs only where the length is the same.
  return mine.getArch() == host.getArch() && mine.getOS() == host.getOS() &&
         (sve_bits == 0 || sve_bits == target_backend::HostSveBits());
}

}  // namespace tunefarm
