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

// On a reduction loop of extent kMatrixMultiplySteps that is the whole body
// of a loop of 2 (the columns, j), itself the whole body of a loop of 2 (the
// rows, i): the nest is a 2 x 2 tile of int8 dot products
// (acc[i, j] = acc[i, j] + i32(a_i8[i, k]) * i32(b_i8[j, k])), emitted as one
// `smmla`/`ummla` on AArch64 with i8mm (codegen_llvm_mmla.cpp). The value is
// kMatrixMultiplySteps. Elsewhere, or on a nest of another shape, it changes
// nothing: the generic code computes the same sums.
inline constexpr const char* kMatrixMultiplyAnnotation = "pragma_matrix_multiply_accumulate";
inline constexpr int64_t kMatrixMultiplySteps = 8;

// Asks the code generator to unroll the loop's body explicitly; accepted and
// kept on the loop.
inline constexpr const char* kUnrollExplicitAnnotation = "pragma_unroll_explicit";

// On the serial loop around a shared-memory stage (a GPU reduction's outer
// reduction loop, whose body first fetches tiles into shared buffers, then
// computes on them): with a value of 1, LowerForCuda double-buffers the
// stage (lower/inject_double_buffer.h): the fetch of the next iteration's
// tile overlaps the computation on this one. The GPU sketch rules sample it.
inline constexpr const char* kDoubleBufferAnnotation = "software_pipeline_double_buffer";

// Every key Schedule::Annotate accepts, and so every key a trace's `annotate`
// replays in this build: the one list. A measurement worker reports it when it
// joins a tuner daemon (fleet.proto, Register.loop_annotations), so that a
// trace with a key it lacks goes only to a worker that has it. A new
// annotation's key goes here too, at the end; Annotate rejects a key off it.
inline constexpr const char* kLoopAnnotations[] = {
    kAutoUnrollMaxStepAnnotation,
    kUnrollExplicitAnnotation,
    kDotProductAnnotation,
    kDoubleBufferAnnotation,
    kMatrixMultiplyAnnotation,
};

}  // namespace tunefarm::ir
