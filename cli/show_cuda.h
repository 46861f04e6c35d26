// The GPU half of `tunefarm show`: what a cuda target makes of a program.
#pragma once

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::cli {

// The GPU program `show` goes on with: `shown` itself when it is a tuned
// (GPU-bound) loop nest, else the default GPU program of the workload's
// loop nest, which it prints.
Result<ir::PrimFunc> GpuProgramToShow(const ir::PrimFunc& shown, bool tuned);

// Prints, for a cuda `target`: with `lowered`, the IR after LowerForCuda;
// with `source`, the CUDA C, its launches (grid, block, dynamic shared
// memory) and ptxas' registers, spills and shared memory per kernel when
// NVRTC is available. `llvm_ir` is InvalidArgument (a cuda target has no
// LLVM IR); a program LowerForCuda refuses is its InvalidArgument.
Status PrintCudaStages(const ir::PrimFunc& program, const Target& target, bool lowered, bool llvm_ir, bool source);

}  // namespace tunefarm::cli
