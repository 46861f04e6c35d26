// VerifyGpuBindings: checks that a lowered, GPU-bound PrimFunc is a sequence
// of kernels a CUDA device can launch, before code generation.
//
// A kernel is a root loop nest whose root loop is bound to blockIdx.* (and
// threadIdx.* inside);
// its launch extent per tag is the widest binding of that tag that no
// enclosing loop binds (the CUDA code generator's rule; a narrower sibling is
// guarded). Every problem is InvalidArgument naming the loop or buffer:
//  * code outside any kernel (a root loop bound to nothing or only to
//    threadIdx, a store, a branch), an unknown thread tag, a bound loop
//    without a constant extent;
//  * a blockIdx loop under a threadIdx loop; a binding nested in one of the
//    same tag with a larger extent (a smaller one is allowed: a guarded
//    cooperative loop, "this thread's index");
//  * threads per block (the product of the threadIdx launch extents) over
//    max_threads_per_block, a tag's extent over max_block / max_grid_y_z;
//  * shared memory of a kernel over max_shared_bytes (each buffer rounded up
//    to 16 bytes, as the code generator lays them out);
//  * a kShared or kLocal buffer allocated outside every kernel (so outside
//    the blockIdx loops) or used where its kernel's Allocate does not enclose
//    it; a kLocal buffer allocated outside the threadIdx loops but written
//    inside them (each thread would write its own copy of what the program
//    treats as one); a kGlobal buffer allocated in a kernel outside its
//    threadIdx loops (no kernel allocates global memory);
//  * a Barrier under a branch, block predicate or loop whose condition,
//    bounds or guard depends on a threadIdx variable (a threadIdx loop
//    narrower than the launch extent is such a guard): some threads would
//    never reach it.
// A store to global memory at kernel level, outside every threadIdx loop, is
// allowed (every thread of the block writes the same value).
// Blocks, if any are left, are checked like the statements they lower to.
#pragma once

#include <array>
#include <cstdint>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

struct GpuLimits {
  int64_t max_threads_per_block = 1024;
  std::array<int64_t, 3> max_block = {1024, 1024, 64};
  int64_t max_shared_bytes = 48 * 1024;  // static shared memory per block
  int64_t max_grid_y_z = 65535;
  int64_t max_grid_x = 2147483647;
};

// The limits of a CUDA target: sm_80 and sm_90 (and every arch tunefarm
// parses) allow 1024 threads per block and 48 KiB of static shared memory.
GpuLimits GpuLimitsFor(const Target& target);

Status VerifyGpuBindings(const ir::PrimFunc& lowered, const GpuLimits& limits = {});

}  // namespace tunefarm
