// Target parsing and canonical printing: the text, with no code generator
// behind it. What needs one -- normalising a triple, checking CPU and
// feature names, the host, the vector unit -- is target_backend.h's, defined
// by target_llvm.cpp (LLVM) or target_lean.cpp (the lean worker, no LLVM).
#include "tunefarm/compiler/target.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "target_backend.h"
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

}  // namespace

namespace target_backend {

int HostSveBits() {
#if defined(__aarch64__) && defined(__linux__) && defined(PR_SVE_GET_VL)
  constexpr unsigned long kHwcapSve = 1ul << 22;  // HWCAP_SVE
  if ((getauxval(AT_HWCAP) & kHwcapSve) == 0) return 0;
  int vl = prctl(PR_SVE_GET_VL);
  return vl > 0 ? (vl & PR_SVE_VL_LEN_MASK) * 8 : 0;
#else
  return 0;
#endif
}

}  // namespace target_backend

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
  std::string mattr, sve_option;
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
      t.triple = target_backend::NormalizeTriple(value);
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
    } else if (t.kind == "llvm" && key == "-sve-bits") {
      char* end = nullptr;
      long n = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || n < 128 || n > 2048 || n % 128 != 0) {
        return bad("expected an SVE vector length in bits: a multiple of 128 from 128 to 2048");
      }
      t.sve_bits = static_cast<int>(n);
      sve_option = w;
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
    if (t.sve_bits == 0) t.sve_bits = host.sve_bits;
  } else if (!have_cpu) {
    t.cpu = "generic";
  }
  if (!mattr.empty()) t.features = t.features.empty() ? mattr : t.features + "," + mattr;

  // The triple, CPU and features must be ones the code generator knows:
  // a job tuned for anything else could only fail in every worker's compiler.
  TF_RETURN_IF_ERROR(target_backend::CheckLlvmTarget(t, SplitComma(mattr), text));
  if (t.sve_bits > 0 && (t.triple.rfind("aarch64", 0) != 0 || !t.HasFeature("sve"))) {
    return Status::InvalidArgument("bad target option " + QuoteInput(sve_option) + " in " + QuoteInput(text) +
                                   ": an SVE length needs an AArch64 target with SVE (e.g. -mattr=+sve, or "
                                   "-mcpu=neoverse-v1)");
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
    if (sve_bits > 0) s += " -sve-bits=" + std::to_string(sve_bits);
  }
  if (num_threads > 0) s += " -num-threads=" + std::to_string(num_threads);
  return s;
}

std::string Target::DeviceKey() const {
  if (kind == "cuda") return "cuda/" + arch;
  // The triple's first component, as LLVM's Triple::getArchName reads it.
  std::string key = kind + "/" + triple.substr(0, triple.find('-')) + "/" + cpu;
  if (sve_bits > 0) key += "-sve" + std::to_string(sve_bits);
  return key;
}

}  // namespace tunefarm
