// InsertGpuBarriers: puts Barrier statements (__syncthreads) where the threads
// of a GPU block communicate through shared memory.
//
// Only code inside a kernel (under a loop bound to blockIdx.* or threadIdx.*)
// is touched, and only kShared buffers count; a program without them comes
// back unchanged (the same handle).
//
//  * In a sequence, a statement that reads a shared buffer written by an
//    earlier statement since the last barrier (or writes one read or written
//    since then) gets a barrier in front of it.
//  * A loop whose body holds a barrier gets one more at the end of its body
//    when what runs after the body's last barrier touches a shared buffer that
//    what runs before its first barrier writes (or reads what the tail
//    writes): the next iteration's writes must wait for slower threads'
//    reads -- the serial k0 loop around a cooperative fetch and its use.
//  * A barrier never goes under a thread-dependent branch: an IfThenElse, a
//    Block predicate or a loop bound whose value depends on a threadIdx loop
//    variable, nor under a threadIdx loop whose extent is smaller than the
//    block's (the largest extent of that tag in the kernel), where some
//    threads skip the body. Such a statement is handled as a whole, with the
//    barriers around it.
//
// Idempotent: running it on its own output adds nothing. Statements within
// one thread's view are assumed to be ordered by the thread itself (a thread
// reading what it wrote needs no barrier, but that is not analysed: any
// cross-statement read-after-write of a shared buffer gets one).
#pragma once

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

ir::Stmt InsertGpuBarriers(const ir::Stmt& body);

}  // namespace tunefarm
