// When a block reads a buffer "at its own iteration variables": the test the
// element-wise fusion primitives (Schedule::ReverseComputeAt,
// Schedule::ReverseComputeInline) and the sketch rules that choose a consumer
// to fuse (tuner/sketch_cpu_analysis.h) share, so that the rules only pick
// consumers the primitives accept.
//
// An index is read at the block's d-th iteration variable when it is that
// variable, or when it is the constant 0 in a dimension of extent 1 of the
// buffer while that variable is spatial, has extent 1 and is no index of the
// same read: both can name only element 0 there (a batch-1 workload written
// `acc[0, k, h, w]` rather than `acc[n, k, h, w]`). A 0 in a longer dimension,
// or any other constant, is no iteration variable.
//
// Pure functions of the IR passed in; nothing is kept.
#pragma once

#include <cstddef>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::sched {

// Index `d` of `load` (a read of load->buffer in `block`) is the constant 0
// that stands for the block's d-th iteration variable, as above.
bool IsUnitZeroIndex(const ir::Block* block, const ir::Load* load, size_t d);

// Every read of `buffer` in `block`'s body is at exactly the block's
// iteration variables, in order (dimension d at iteration variable d), a
// unit zero counting as its variable: a one-to-one element-wise consumer.
bool ReadsAtIterVars(const ir::Block* block, const ir::BufferNode* buffer);

}  // namespace tunefarm::sched
