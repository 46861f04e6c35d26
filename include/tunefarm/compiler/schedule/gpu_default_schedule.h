// The default GPU program of a workload: every root loop nest made a kernel.
//
// A program for a GPU is a sequence of kernels, each a root loop nest bound
// to blockIdx.* (and threadIdx.* inside); a nest bound to nothing would not
// run on the device at all. BindUnboundLoops makes each unbound root nest a
// kernel through Schedule primitives, so the schedule's trace records (and
// replays) every step.
#pragma once

#include <cstdint>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm {

// For each root loop nest with no blockIdx binding: fuses its leading spatial
// loops (those every block of the nest shares, up to the first reduction
// loop, the first loop of another kind or the first loop whose body is not a
// single loop), splits the fused loop by [-1, min(extent, threads_per_block)]
// and binds blockIdx.x / threadIdx.x. A nest that already binds threadIdx.*
// inside gets only blockIdx.x on its leading spatial loops; one whose first
// loop is a reduction runs as one block of one thread (its first loop split
// by [1, -1], the outer bound to blockIdx.x). Blocks computed at another
// block's loops belong to that block's nest and are not bound separately.
// InvalidArgument for threads_per_block < 1 or a block under no loop at all.
Status BindUnboundLoops(Schedule& sch, int64_t threads_per_block);

// The default GPU program of a workload's default PrimFunc:
// BindUnboundLoops(..., threads_per_block) on a fresh schedule of `func`.
Result<ir::PrimFunc> DefaultGpuSchedule(const ir::PrimFunc& func, int64_t threads_per_block = 256);

}  // namespace tunefarm
