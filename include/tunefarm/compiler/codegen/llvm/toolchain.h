// The name of the code generator that turns a trace into machine code, as the
// tuning log records it in a target's fingerprint (HardwareFingerprint's
// `toolchain`, docs/database.md).
//
// A record's time is a fact about the code that was timed. The same trace
// yields other code when LLVM changes, and when tunefarm's own lowering does
// (a pass, the simplifier, the code generator), so the name carries both:
// "llvm-16 lowering-r1". Records timed with code of another toolchain are then
// another fingerprint: `tunefarm compile` serves them only when none of this
// toolchain exists (the fallback chain's same-architecture rung), and a
// resumed `tunefarm tune` measures the fastest of them again.
#pragma once

#include <string>

namespace tunefarm {

// Bump when a change alters the code built from an existing trace, so that
// records timed before it stop counting as this build's. History:
//   (none) "llvm-16": every record before revisions were recorded.
//   1  2026-11-24: floor `/` and `%` split off the divisor's multiple; vector
//      loops unrolled by the unroll pass count steps per vector.
//   2  2026-11-29: a reduction's init leaves the outer reduction loop when
//      that loop also holds copy stages; a constant 0 in a unit dimension
//      reads as that dimension's iteration variable in reverse_compute_at;
//      masked loads and stores are emitted at a power-of-two width.
inline constexpr int kLoweringRevision = 2;

// "llvm-<LLVM major> lowering-r<kLoweringRevision>", e.g. "llvm-16 lowering-r2".
std::string CodegenToolchain();

}  // namespace tunefarm
