// Lowering: from a Workload to loop IR, and from scheduled loop IR to the form
// code generators consume.
#pragma once

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm {

struct LowerOptions {
  // Lower sums over strided gathers over their contributing taps only
  // (decompose_strided_gather.h). Off, the nest follows the text as written:
  // the independent reference that tuned kernels are checked against.
  bool decompose_strided_gathers = true;
};

// The default, unscheduled PrimFunc of a workload: one loop nest per stage
// (spatial loops outside, reduction loops inside), each stage a Block whose
// init stores the reduction identity; intermediate stages live in Allocates.
// Params: the workload's inputs, then its outputs. Sums over strided gathers
// are lowered over their contributing taps only (decompose_strided_gather.h).
Result<ir::PrimFunc> LowerToPrimFunc(const Workload& w, const LowerOptions& options = {});

// The passes that turn a (possibly scheduled) PrimFunc into code-generator
// input, in order -- this function is their table of contents:
//   1. LowerBlocks: block iter vars are substituted, inits become their own
//      nests (or guarded stores), predicates become ifs.
//   2. UnrollLoops: small loops under "pragma_auto_unroll_max_step" unroll.
//   3. Simplify: fold index arithmetic, drop unit loops and decided ifs.
//   4. PromoteAccumulators: a register tile updated inside a larger local
//      accumulator buffer gets a buffer of its own around its reduction.
Result<ir::PrimFunc> LowerForCodegen(const ir::PrimFunc& f);

}  // namespace tunefarm
