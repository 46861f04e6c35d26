// Block queries shared by the compute-location and inlining primitives
// (schedule_compute_location.cpp, schedule_inline.cpp); private to
// compiler/schedule/.
#pragma once

#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::sched {

// Every block that writes `buffer`.
std::vector<const ir::Block*> Writers(const ir::Stmt& root, const ir::BufferNode* buffer);
// Every block other than `except` that reads `buffer`.
std::vector<const ir::Block*> Readers(const ir::Stmt& root, const ir::BufferNode* buffer, const ir::Block* except);
// Position of `block` in program order, or -1.
int ProgramIndex(const std::vector<const ir::Block*>& order, const ir::Block* block);
// A block that writes one of `consumer`'s inputs (other than `except`) at or
// after program position `position`: moving the consumer there would read it
// early. Sets *buffer to that input.
const ir::Block* LateWriter(const ir::Stmt& root, const ir::Block* consumer, const ir::BufferNode* except,
                            int position, const ir::BufferNode** buffer);
// The store of a block indexes its buffer with exactly its spatial iter vars, in order.
bool StoresAtIterVars(const ir::Block* b, const ir::Store* s);
// `root` with `block`'s reads of `buffer` at a unit zero index
// (tunefarm/compiler/schedule/iter_var_reads.h) rewritten to read at the
// iteration variable the zero stands for: the same values, in the form the
// element-wise fusion primitives check and rewrite. `root` itself when the
// block has no such read. Defined in iter_var_reads.cpp.
ir::Stmt ReadUnitZerosAtIterVars(const ir::Stmt& root, const ir::Block* block, const ir::BufferNode* buffer);
// Removes the Allocate of `buffer` when nothing uses it any more.
ir::Stmt DropUnusedAllocate(const ir::Stmt& root, const ir::BufferNode* buffer);

}  // namespace tunefarm::sched
