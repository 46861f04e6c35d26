// The CUDA code generator: GPU-bound loop IR to CUDA C (cuda_module.h).
//
// LowerForCuda is the table of contents of the passes a scheduled PrimFunc
// goes through before CUDA code generation; GenerateCuda prints what it
// returns. The source is compiled with NVRTC (nvrtc.h) and launched by a CUDA
// device; nothing here needs a GPU.
//
// What GenerateCuda accepts (everything else is InvalidArgument naming the
// loop or buffer):
//  * The body is a sequence of root loop nests, possibly under Allocates of
//    global-scope intermediate buffers (workspaces: CudaModule buffers with
//    param_index -1, passed to the kernels that use them).
//  * Each root nest's outer loop is bound to blockIdx.*; the nest is one
//    kernel. Loops bound to blockIdx.* / threadIdx.* give the launch's grid and
//    block (constant extents; the widest binding of a tag when several
//    sibling loops bind it). A loop bound to a tag an enclosing loop (or a
//    wider sibling) binds is "this thread's index": guarded by
//    `if (threadIdx.x < extent)` when narrower than the block, an error when
//    wider than the enclosing binding.
//  * vthread loops run serially in each thread, unrolled.
//  * Shared-scope Allocates inside a kernel become __shared__ arrays at its
//    top (one per block, 16-byte aligned): static up to 48 KiB in all, else
//    carved from dynamic shared memory (CudaLaunch::dynamic_shared_bytes,
//    which the launcher must opt the kernel in to). Local-scope Allocates
//    (and global-scope ones under a threadIdx loop: one per thread either
//    way) become per-thread arrays where they are allocated.
//  * Barrier is __syncthreads(); unrolled loops and loops annotated
//    "pragma_auto_unroll_max_step" (extent within it) get #pragma unroll;
//    vectorized loops of 2 or 4 lanes use float2 / float4 (int4, double2,
//    ...) accesses where contiguous and provably aligned, else unroll.
// The kernels assume each global buffer is 16-byte aligned (cudaMalloc gives
// 256) when they use vector loads and stores.
#pragma once

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/cuda/cuda_module.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/lower/verify_gpu.h"

namespace tunefarm::cuda {

// The passes that turn a scheduled GPU PrimFunc into GenerateCuda's input,
// in order:
//   1. LowerCrossThreadReductions: a reduction loop bound to threadIdx.x
//      becomes a tree all-reduce in shared memory
//      (lower_cross_thread_reduction.h).
//   2. LowerBlocks: blocks become plain loops (lower_blocks.h).
//   3. UnrollLoops: small loops under "pragma_auto_unroll_max_step" unroll.
//   4. Simplify.
//   5. InsertGpuBarriers: __syncthreads where threads share memory.
//   6. InjectDoubleBuffers: the shared-memory stages of loops annotated
//      kDoubleBufferAnnotation doubled, the next tile fetched through
//      registers during the computation, one barrier per iteration
//      (inject_double_buffer.h).
//   7. VerifyGpuBindings (default limits): InvalidArgument when the program
//      cannot run as CUDA kernels.
Result<ir::PrimFunc> LowerForCuda(const ir::PrimFunc& scheduled);
// The same, checked against `limits` (GpuLimitsFor a target: more shared
// memory than the default 48 KiB, say, which GenerateCuda then allocates
// dynamically).
Result<ir::PrimFunc> LowerForCuda(const ir::PrimFunc& scheduled, const GpuLimits& limits);

// CUDA C for a lowered PrimFunc: one `extern "C" __global__` function per
// root nest, named "<func>_kernel<i>", and the launches in program order.
// f16 is stored as its bits (unsigned short) and computed in float, rounded
// to half after every operation, as the interpreter does; Unimplemented for
// types CUDA C here does not express (f8).
Result<CudaModule> GenerateCuda(const ir::PrimFunc& lowered);

}  // namespace tunefarm::cuda
