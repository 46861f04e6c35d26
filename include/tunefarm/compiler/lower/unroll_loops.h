// UnrollLoops: honours the "pragma_auto_unroll_max_step" loop annotation.
//
// Under an annotated loop, every serial loop with a constant extent whose
// whole subtree runs at most max_step iterations of its innermost bodies is
// marked kUnrolled (the code generator then unrolls it fully). This is how a
// schedule asks for "unroll the small inner loops of this tile". A vectorized
// loop counts as one iteration whatever its lanes: it is one vector operation.
#pragma once

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

Stmt UnrollLoops(const Stmt& s);

}  // namespace tunefarm::ir
