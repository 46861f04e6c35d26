// PromoteAccumulators: a register tile of accumulators that lives inside a
// larger local buffer is copied into a buffer of its own for the reduction
// that updates it, so that the code generator's stack slot for it has
// constant indices only and LLVM keeps it in registers.
//
// A schedule may place the accumulator buffer (cache_write) around a whole
// task tile while the register tile -- the unrolled and vectorized loops
// under the reduction -- updates only a small window of it. The window's
// address then depends on the tile loops outside the reduction, LLVM cannot
// split the buffer into registers, and every multiply-add loads and stores
// its accumulator through memory. The pass rewrites
//
//   for r ...:                      // L: holds the reduction
//     for i unrolled: for v vectorized:
//       B[a0 + i, a1 + v] = B[a0 + i, a1 + v] + ...
// into
//   allocate B_tile[I, V] local:
//     for i unrolled: for v vectorized: B_tile[i, v] = B[a0 + i, a1 + v]
//     for r ...: for i: for v: B_tile[i, v] = B_tile[i, v] + ...
//     for i unrolled: for v vectorized: B[a0 + i, a1 + v] = B_tile[i, v]
//
// for the outermost such L (buffers L does not take may still be promoted
// further in). B is promoted in L when
//   * B is allocated in local scope and L is a serial or unrolled loop, not
//     under a vectorized loop (the code generator widens a vectorized loop
//     only when its body holds no allocation), holding at least one loop,
//     L itself included, that does not index B (the reduction);
//   * L both reads and writes B (an accumulation), every access to B under
//     L has the same indices, and each index is either free of the
//     variables L binds and of memory reads, or one of those variables plus
//     such a rest, where that variable belongs to an unrolled or vectorized
//     loop under L with min 0 and a constant extent, and indexes no other
//     dimension;
//   * every loop under L (L too) has a constant extent of at least 1, and no
//     variable bound under L is also bound around it;
//   * no access is under an if, and L holds no barrier, no block, no second
//     allocation of B and no loop whose nest a code generator matches as it
//     is (loop_annotations.h: dot product, matrix multiply-accumulate,
//     double buffer);
//   * the window is smaller than B and at most kMaxPromotedBytes.
// Every element of the window is stored by the reduction on every run of L,
// so the copies touch only elements the original program touches.
//
// Functions with thread-bound loops (GPU kernels) are returned as they are:
// a thread's accumulators are its own already, and the CUDA generator does
// not run this pass, so the cost model must not see it either.
#pragma once

#include <cstdint>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

// The largest window promoted: the AVX-512 register file (32 x 64 bytes).
inline constexpr int64_t kMaxPromotedBytes = 2048;

Stmt PromoteAccumulators(const Stmt& s);

}  // namespace tunefarm::ir
