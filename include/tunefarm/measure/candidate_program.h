// The program a MeasureInput names: its workload parsed, its target parsed,
// the workload lowered and the candidate's trace replayed on it. Both sides
// that build candidates start here -- the runner, which then JIT-compiles
// (or loads a prebuilt object), and the tuner daemon, which emits objects
// for workers that should not compile -- so that a record's error kind and
// message read the same whichever side built it (docs/measurement.md,
// "Building").
//
// Error kinds: invalid_candidate for a workload, target or trace that does
// not parse or apply, and, with `host_only` (the runner), for a target that
// cannot run on this machine, checked right after the target is parsed;
// compile_error for lowering. The tuner builds for other machines and passes
// host_only = false.
#pragma once

#include <optional>
#include <string>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

struct CandidateProgram {
  MeasureErrorKind error = MeasureErrorKind::kNone;  // kNone: the fields below are set
  std::string error_message;
  std::optional<Workload> workload;
  Target target;       // the input's target; this host's when the input names none
  ir::PrimFunc func;   // the scheduled program (the default one for an empty trace)
  bool ok() const { return error == MeasureErrorKind::kNone; }
};

CandidateProgram PrepareCandidateProgram(const MeasureInput& input, bool host_only = false);

}  // namespace tunefarm
