// LowerCrossThreadReductions: a reduction whose loop is bound to threadIdx.x
// becomes an all-reduce across the threads of a GPU block.
//
// A block-form program (before LowerBlocks) may bind one of a reduction
// block's reduction loops to threadIdx.x (the cross-thread rule of the GPU
// sketch rules does, as TVM's CrossThreadReduction does). Run as written,
// every thread would update the same output element: a race. This pass
// rewrites each such loop `for tx in threadIdx.x(T) { loops { block } }`:
//
//   part = init; for loops: part op= term    per thread, in a register
//   red[ty.., tx] = part                       in a new shared buffer
//                                              "<block>_red" [.., T]
//   if tx < T - P: red[tx] op= red[tx + P]         (only when T is no power of two)
//   for s = P/2, P/4, .., 1: if tx < s: red[ty.., tx] op= red[ty.., tx + s]
//   if tx == 0 && spatial guard: out[v] = red[ty.., 0]
//
// (P: the largest power of two <= T), each step its own threadIdx.x loop so
// that InsertGpuBarriers puts a barrier between them; no barrier sits under
// the `if`s. ty.. are the threadIdx.y / threadIdx.z loops around the
// reduction loop (one row of partials per thread row). The buffer is
// allocated under the kernel's innermost blockIdx loop (one per block).
// Partial results are combined in a tree: a float sum differs from the
// sequential one by rounding only.
//
// Accepted form (anything else with a reduction loop bound to a threadIdx
// tag is InvalidArgument naming the loop): the loop is bound to threadIdx.x,
// encloses exactly one block, a reduction D[v] = D[v] op term (op: + * max
// min) with a single-store init, through loops that are reduction loops of
// that block only; no vthread or threadIdx.x loop encloses it.
#pragma once

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

Result<ir::Stmt> LowerCrossThreadReductions(const ir::Stmt& body);

}  // namespace tunefarm
