// LowerBlocks: removes Block nodes before code generation.
//
// Each block's iteration variables are replaced by their bindings, and its
// init runs where it is cheapest that is still correct: when the nest from the
// outermost reduction loop down to the block is perfect and holds every
// reduction loop, the init becomes its own nest (over the spatial loops inside
// that nest) in front of it -- TVM's decompose_reduction, done automatically;
// otherwise the init stays in place, guarded by "every reduction binding == 0".
#pragma once

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

Stmt LowerBlocks(const Stmt& s);

}  // namespace tunefarm::ir
