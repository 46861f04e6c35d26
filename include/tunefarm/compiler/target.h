// Target: what code is generated for.
//
// Text form (as in TVM):  "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -mattr=+avx512f,+fma"
// "llvm" alone, or "llvm -mcpu=native", means this host: its triple, the nearest
// CPU name LLVM knows, and the features the host reports (passed explicitly, since
// LLVM 16 calls Zen 5 "generic"). "cuda -arch=sm_90" names an NVIDIA GPU architecture (CUDA C through NVRTC).
//
// Parse details: an explicit -mtriple without -mcpu means cpu "generic";
// -mattr is appended to the host features when the host is meant; an optional
// "-num-threads=N" fills num_threads; "-sve-bits=N" (AArch64 with SVE only)
// names the board's SVE vector length (sve_bits). The triple must be one LLVM generates
// code for, and CPU and feature names are checked against LLVM's tables for
// it. Host features are stored as the difference from what the chosen CPU
// implies, so the canonical text stays short.
//
// The lean worker (TUNEFARM_LEAN_WORKER) links no LLVM: there the same
// functions read the text alone (compiler/target_lean.cpp): x86_64 and
// aarch64 triples, well-formed CPU and feature names, a host of uname's
// machine with CPU "generic", and features only as the text lists them.
//
// ParseTargetField is the check every entry point applies to a target a
// caller names (SubmitJob, Compile, the TuningLog lookups, `tunefarm tune`,
// `compile`, `jobs submit`), so one target is accepted or refused, with one
// message, wherever it is given.
#pragma once

#include <string>
#include <string_view>

#include "tunefarm/common/status.h"

namespace tunefarm {

struct Target {
  std::string kind;      // "llvm" or "cuda"
  std::string triple;    // e.g. "x86_64-unknown-linux-gnu"
  std::string cpu;       // e.g. "znver4"
  std::string features;  // LLVM feature string, e.g. "+avx512f,+fma,-xop"
  std::string arch;      // cuda only, e.g. "sm_90"
  int num_threads = 0;   // 0: the runtime decides
  // AArch64 with SVE: the vector length, in bits, of the boards the code is
  // for (a multiple of 128, at most 2048; the kernel then uses SVE registers
  // of exactly that length and runs only where the length is the same).
  // 0: no fixed length, vectors are NEON's 128 bits. Parse refuses it on a
  // target without the "sve" feature.
  int sve_bits = 0;

  static Result<Target> Parse(std::string_view text);
  static Target Host();
  // Canonical text form; Parse(ToString()) == *this.
  std::string ToString() const;
  // Key that identifies the kind of device a measurement belongs to, e.g.
  // "llvm/x86_64/znver4"; a fixed SVE length is part of it
  // ("llvm/aarch64/neoverse-v1-sve256").
  std::string DeviceKey() const;
  // Widest native vector in bits for the features (512 with avx512f, 256 with
  // avx, sve_bits on AArch64 with SVE of a fixed length, 128 otherwise).
  int VectorBits() const;
  // Architectural vector registers of that width: 32 with avx512f and on
  // AArch64 (v0-v31), 16 on other x86 (ymm/xmm0-15).
  int VectorRegisters() const;
  // Whether the target's CPU and features include the LLVM feature `name`
  // (e.g. "dotprod", "i8mm", "avx512vnni"), a name LLVM knows for the
  // triple (another is false, with LLVM's warning on stderr); false for
  // cuda targets.
  bool HasFeature(std::string_view name) const;
  // Whether code for this target runs on this machine: its architecture and
  // OS, and, for SVE of a fixed length, this process's SVE length.
  bool is_host() const;
  friend bool operator==(const Target&, const Target&) = default;
};

inline constexpr size_t kMaxTargetTextBytes = 4096;

// A target named by a caller in `field` ("target", "--target"): at most
// kMaxTargetTextBytes, and Parse (kind llvm or cuda). InvalidArgument "<field>: <why>", quoting the value bounded
// (common/quote.h), e.g. "target: unknown triple 'banana' in
// 'llvm -mtriple=banana': LLVM has no code generator for it (...)".
Result<Target> ParseTargetField(std::string_view field, std::string_view text);

}  // namespace tunefarm
