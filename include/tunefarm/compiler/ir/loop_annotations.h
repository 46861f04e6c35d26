// Loop annotations (For::annotations) that more than one part of the compiler
// reads: the schedule that writes them (Schedule::Annotate), the lowering and
// code generators that honour them, and the sketch rules that sample them.
#pragma once

#include <cstdint>

namespace tunefarm::ir {

// Unrolls the loops inside whose total trip count is at most the value
// (lower/unroll_loops.h).
inline constexpr const char* kAutoUnrollMaxStepAnnotation = "pragma_auto_unroll_max_step";

// On a reduction loop of extent kDotProductSteps that is the whole body of a
// vectorized loop of 4 lanes: the nest is an int8 dot product
// (acc[..] = acc[..] + i32(a_i8[..]) * i32(b_i8[..])), emitted as one
// `sdot`/`udot` on AArch64 with dotprod (codegen_llvm_dot.cpp). The value is
// kDotProductSteps. Elsewhere, or on a nest of another shape, it changes
// nothing: the generic code computes the same sums.
inline constexpr const char* kDotProductAnnotation = "pragma_dot_product";
inline constexpr int64_t kDotProductSteps = 4;

}  // namespace tunefarm::ir
