// The half of Target (target.h) that depends on the code generator: triple
// normalisation, the check of CPU and feature names, the host, and the
// questions about a target's vector unit.
//
// One declaration, two definitions, chosen by the build:
//   target_llvm.cpp  asks LLVM (its target registry and subtarget tables);
//   target_lean.cpp  decides from the text alone, for the lean worker
//                    (TUNEFARM_LEAN_WORKER), which links no LLVM.
// target.cpp (parsing and printing) calls these and never LLVM itself.
// Target's members Host, VectorBits, VectorRegisters, HasFeature and is_host
// are defined in the same two files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::target_backend {

// The triple in LLVM's normal form: "aarch64-linux-gnu" ->
// "aarch64-unknown-linux-gnu".
std::string NormalizeTriple(std::string_view triple);

// Whether code can be generated for the llvm target `t` (triple normalised,
// cpu filled in, features = host features + mattr) whose -mattr words were
// `mattr` (each "+name" or "-name"). InvalidArgument quoting `text` and
// naming the unknown triple, CPU or feature.
Status CheckLlvmTarget(const Target& t, const std::vector<std::string>& mattr, std::string_view text);

// The SVE vector length this process runs with, in bits (prctl
// PR_SVE_GET_VL on aarch64 Linux); 0 without SVE or elsewhere. Defined
// once, in target.cpp: it needs no code generator.
int HostSveBits();

}  // namespace tunefarm::target_backend
