// Reference interpreter: executes any PrimFunc on host buffers.
//
// Slow and simple on purpose; it is the oracle every code generator and
// schedule is checked against. Every load and store is bounds-checked: an
// out-of-bounds access returns an error naming the buffer and the index.
// Parallel, vectorized and unrolled loops run as serial loops.
//
// GPU-bound loops run with GPU semantics: a kernel's blocks (blockIdx loops)
// one after another; within a block, each of its threads (the largest extent
// of each threadIdx tag in the block) runs the block body with its own
// indices, every threadIdx loop taking the thread's index (none of its body
// when the index is past the loop's extent); vthread loops are serial.
// Threads advance in phases between Barrier statements; a barrier reached by
// only some threads is an error. Shared (and global) allocations inside a
// block are one buffer per block, kLocal ones one per thread. Runs are
// deterministic: a program that misses a barrier reads what the schedule of
// phases left there (often the poison of a fresh allocation), the same on
// every run.
#pragma once

#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

// args[i] binds f.params[i]; their dtypes and shapes must match.
Status Interpret(const ir::PrimFunc& f, const std::vector<HostBuffer*>& args);

}  // namespace tunefarm
