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
// for the outermost such L. B is promoted in L when
//   * B is allocated in local scope and L is a serial or unrolled loop, not
//     under a vectorized loop, holding at least one loop that does not index
//     B (the reduction);
//   * every access to B under L has the same indices, each either free of
//     the variables L defines or one of them plus such a rest, where that
//     variable belongs to an unrolled or vectorized loop under L with min 0
//     and a constant extent, and indexes no other dimension;
//   * every loop under L (L too) has a constant extent of at least 1;
//   * no access is under an if, and L holds no barrier, no thread-bound
//     loop (a GPU thread's accumulators are already its own) and no loop
//     whose nest a code generator matches as it is (loop_annotations.h: dot
//     product, matrix multiply-accumulate, double buffer);
//   * the window is smaller than B and at most kMaxPromotedBytes.
// Every element of the window is stored by the reduction on every run of L,
// so the copies touch only elements the original program touches.
#pragma once

#include <cstdint>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

// The largest window promoted: the AVX-512 register file (32 x 64 bytes).
inline constexpr int64_t kMaxPromotedBytes = 2048;

Stmt PromoteAccumulators(const Stmt& s);

}  // namespace tunefarm::ir
