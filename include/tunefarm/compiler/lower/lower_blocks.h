// LowerBlocks: removes Block nodes before code generation.
//
// Each block's iteration variables are replaced by their bindings, and its
// init runs where it is cheapest that is still correct: when the path from
// the outermost reduction loop down to the block (loops, and in GPU kernels
// the copy stages beside them) allows it, the init becomes its own nest (over
// the spatial loops on that path) in front of that loop -- TVM's
// decompose_reduction, done automatically (decompose_reduction.h); otherwise
// the init stays in place, guarded by "every reduction binding == 0".
#pragma once

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

Stmt LowerBlocks(const Stmt& s);

}  // namespace tunefarm::ir
