// LowerBlocks: removes Block nodes before code generation.
//
// Each block's iteration variables are replaced by their bindings, and its
// init runs where it is cheapest that is still correct: when the reduction
// variables are bound to exactly the loops immediately around the block, the
// init moves in front of those loops; otherwise it stays in place, guarded by
// "every reduction binding == 0".
#pragma once

#include "tunefarm/compiler/ir.h"

namespace tunefarm::ir {

Stmt LowerBlocks(const Stmt& s);

}  // namespace tunefarm::ir
