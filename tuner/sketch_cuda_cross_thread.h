// The GPU sketch rules' cross-thread reduction (sketch_cuda.h, rule 2b): a
// long reduction with little spatial work (softmax and norm rows, a matrix
// norm, batch-1 dense) reduced by the threads of a block together.
#pragma once

#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {

// Whether the rule is offered for `block` (a reduction with spatial loops):
// its reduction is at least cross_thread_min_reduce long and it has at most
// cross_thread_max_outputs_per_reduce outputs per element of the reduction.
bool OffersCrossThread(const CudaSketchConfig& config, const ir::Block& block);

// Schedules block `name` (iteration variables of `kinds`, in loop order):
// spatial loops fused and split into (blocks, rows), reduction loops fused
// and split into (rounds, T) with a guard where T does not divide it; blocks
// bound to blockIdx.x, rows (when more than one) to threadIdx.y, T to
// threadIdx.x. T is drawn among the powers of two from 32 to
// max_threads_per_block, at most the reduction's extent rounded up to one;
// the rows among the divisors of the spatial extent with T x rows threads at
// most max_threads_per_block. The combination across threads is the GPU
// lowering's (lower_cross_thread_reduction.h).
Status CrossThreadReduction(Schedule& sch, const std::string& name, const std::vector<ir::IterKind>& kinds,
                            const CudaSketchConfig& config);

}  // namespace tunefarm::tuner
