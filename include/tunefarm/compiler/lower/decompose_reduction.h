// DecomposeReduction: moves a reduction block's init out of its reduction
// loops (TVM's decompose_reduction, done automatically by LowerBlocks).
//
// Given a loop, it looks for a block with an init below it that reduces over
// that loop, on a path of For, SeqStmt and Allocate statements (the loop's
// nest need not be perfect: in GPU kernels the outer reduction loop also holds
// the shared-memory copy stages). When the init may run before the whole
// loop, the result is
//   init: a nest over the spatial loops on the path (fresh loop variables,
//         same extents and kinds; reduction loops left out) around the init,
//         its iteration variables replaced by their bindings;
//   rest: the loop as it was, except that block has no init any more.
// The init may move when
//   * the block has no predicate;
//   * every loop on the path has a constant extent, a min that uses no loop of
//     the path, and is not thread-bound; a spatial loop with more than one
//     iteration is used by a spatial binding (else the original re-ran init);
//   * spatial bindings use no reduction loop of the path, and reduction
//     bindings use only reduction loops of the path;
//   * no statement beside the path touches a buffer the init stores, and
//     nothing under the loop stores a buffer the init loads;
//   * no buffer the init touches is allocated on the path;
//   * when the path is not a perfect loop nest, the accumulator is not in
//     shared memory (other threads could see it between the two points).
// Both statements of the result still hold blocks: LowerBlocks lowers them.
#pragma once

#include <optional>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

struct DecomposedReduction {
  Stmt init;
  Stmt rest;
};

// `loop` must be the handle of a For. nullopt: no block's init moves in front of it.
std::optional<DecomposedReduction> DecomposeReduction(const Stmt& loop);

}  // namespace tunefarm::ir
