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
// host_only = false. A runner that drives a GPU passes its own check instead
// (TargetCheck: host targets and its GPU's).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

struct CandidateProgram {
  MeasureErrorKind error = MeasureErrorKind::kNone;  // kNone: the fields below are set
  std::string error_message;
  std::shared_ptr<const Workload> workload;  // shared by the batch's candidates of one workload
  Target target;       // the input's target; this host's when the input names none
  ir::PrimFunc func;   // the scheduled program (the default one for an empty trace)
  bool ok() const { return error == MeasureErrorKind::kNone; }
};

// A batch's programs. The parts its candidates share -- the workload parsed
// and lowered to its default PrimFunc, the target parsed and checked -- are
// made once per distinct (workload text, target text) and reused for every
// candidate that names them; each candidate then only replays its trace.
// Failures of a shared part are shared too: every candidate naming a workload
// that does not parse gets the same invalid_candidate answer.
//
// Thread-safe (a batch's candidates are built in parallel). Meant to live for
// one batch, so it holds at most that batch's distinct workloads.
class CandidatePrograms {
 public:
  // Why a parsed target cannot run where the candidates are measured; empty
  // when it can. Called once per distinct (workload, target), from the build
  // threads: it must be thread-safe.
  using TargetCheck = std::function<std::string(const Target&)>;

  explicit CandidatePrograms(bool host_only = false);
  // Targets for which `runs_here` answers a reason are invalid_candidate with
  // "target '<text>' <reason>".
  explicit CandidatePrograms(TargetCheck runs_here) : runs_here_(std::move(runs_here)) {}

  CandidateProgram Prepare(const MeasureInput& input);

  // How many workloads were parsed and lowered so far (what the sharing saves
  // is visible to tests).
  int lowered_workloads() const;

 private:
  struct Shared;  // a workload and target as parsed and lowered, or why not
  std::shared_ptr<const Shared> SharedFor(const MeasureInput& input);
  static std::shared_ptr<const Shared> ParseAndLower(const MeasureInput& input, const TargetCheck& runs_here);

  const TargetCheck runs_here_;  // null: any target
  mutable std::mutex mu_;
  // GUARDED_BY(mu_): by (workload text, target text).
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const Shared>> shared_;
  int lowered_workloads_ = 0;  // GUARDED_BY(mu_)
};

// One candidate on its own (a batch of one).
CandidateProgram PrepareCandidateProgram(const MeasureInput& input, bool host_only = false);

}  // namespace tunefarm
