// DecomposeStridedGathers: sub-pixel decomposition of strided gathers in sum
// reductions -- the lowering step that makes a transposed convolution written
// as a gather visit only the taps that contribute.
//
// A stride-S transposed convolution in the workload language reads
//   out[h] = sum(r) select((h + P - r) % S == 0 && ..., X[(h + P - r) / S], 0) * W[r]
// and, lowered as written, visits all R taps of every output although only one
// in S passes the modular test. When a stage is a sum whose term is zero
// whenever such a select's condition is false (the select is the term, or a
// factor of a product that is), and that condition requires
//   (a + c * r) % S == 0     (S >= 2 a constant, c = +1 or -1,
//                             r a reduction axis, a free of reduction axes),
// the axis r is re-parameterised as r = S * r' + q with q = floormod(-c * a, S)
// and r' in [0, ceil(R / S)). The modular test then holds by construction and
// is dropped; when S does not divide R the whole term is guarded by
// S * r' + q < R. Repeats until no such test is left (one per axis: a 2-D
// transposed convolution loses 3 of every 4 iterations).
//
// The stage computes the same sum: only terms that were exactly zero are
// skipped (a select's zero times the other factors, which are assumed finite;
// an infinite or NaN weight at a skipped tap no longer poisons the sum).
// The result keeps the stage's output, spatial axes and names; the
// re-parameterised reduction axis keeps its name with the smaller extent.
#pragma once

#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm {

// Returns `stage` itself when nothing applies.
ComputeStage DecomposeStridedGathers(const ComputeStage& stage);

}  // namespace tunefarm
