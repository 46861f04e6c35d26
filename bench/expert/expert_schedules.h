// Hand-written expert schedules built only from tunefarm's schedule
// primitives: the proof that the schedule space can hold vendor-speed kernels.
// Each takes the default PrimFunc of its suite workload and returns the
// scheduled one; the trace of the schedule is available through `trace_out`.
#pragma once

#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::bench {

// GMM C[i, j] = sum_k A[i, k] * B[k, j] (block "C"): B packed per 32-column
// panel inside the parallel panel loop, an 8 x 32 register tile of C in a
// local accumulator (16 zmm registers of FMAs), written back per tile.
Result<ir::PrimFunc> ScheduleGmm(const ir::PrimFunc& f, std::string* trace_out = nullptr);

// C2D out[n, k, h, w] (block "out", NCHW / KCRS, padding by select): a
// register tile of 4 output channels x one full output row (vectorized
// along w), accumulated locally over c, r, s; parallel over (n, k-tile, h).
Result<ir::PrimFunc> ScheduleC2d(const ir::PrimFunc& f, std::string* trace_out = nullptr);

}  // namespace tunefarm::bench
