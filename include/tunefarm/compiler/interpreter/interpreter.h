// Reference interpreter: executes any PrimFunc on host buffers.
//
// Slow and simple on purpose; it is the oracle every code generator and
// schedule is checked against. Every load and store is bounds-checked: an
// out-of-bounds access returns an error naming the buffer and the index.
// Parallel, vectorized and unrolled loops run as serial loops.
#pragma once

#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

// args[i] binds f.params[i]; their dtypes and shapes must match.
Status Interpret(const ir::PrimFunc& f, const std::vector<HostBuffer*>& args);

}  // namespace tunefarm
