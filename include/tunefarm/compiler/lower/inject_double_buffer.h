// InjectDoubleBuffers: double-buffers the shared-memory stages of the loops
// annotated kDoubleBufferAnnotation (loop_annotations.h), so that the global
// loads of iteration k+1's tiles are in flight while iteration k computes.
//
// Runs on lowered GPU IR, after InsertGpuBarriers (LowerForCuda). The
// annotated loop's body, its barriers aside, must be a sequence of fetches
// -- statements that store into shared buffers and read none -- followed by
// the computation, which reads those buffers, writes none of them and has
// no barrier. With k the loop variable, K its end, S a fetched buffer and
// S2 its doubled replacement [2, S's shape...]:
//
//   fetch tile `min` into S2[0]             the prologue
//   barrier
//   for k:
//     if k + 1 < K: R = global tile k + 1   into registers (local R, per fetch)
//     compute on S2[(k - min) % 2]
//     if k + 1 < K: S2[(k + 1 - min) % 2] = R
//     barrier                               one per iteration
//
// One barrier per iteration suffices: iteration k writes the buffer that
// iteration k - 1 read, and every thread passed the barrier after k - 1;
// iteration k + 1 reads what k wrote, after k's barrier. Each loop ends on
// a barrier, as the loop InsertGpuBarriers saw did, so whatever follows
// (the next round of an enclosing loop) is ordered as before. R holds the
// elements one thread fetches: one per iteration of the fetch's loops that
// are not bound to threads (unrolled, so that R stays in registers); each
// thread stores into S2 exactly what it loaded, under the same guards.
//
// Errors (InvalidArgument naming the loop): the annotation on a loop bound
// to threads, vectorized or parallel; a body that is not such a sequence
// (no fetch, a fetch reading shared memory, a computation writing a fetched
// buffer or holding a barrier); a body without the barrier that shows the
// stage is shared by the block; a fetch loop of non-constant extent; a
// fetched buffer used outside the loop or allocated inside it.
#pragma once

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

Result<ir::Stmt> InjectDoubleBuffers(const ir::Stmt& body);

}  // namespace tunefarm
