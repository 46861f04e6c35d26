// TunerSideBuildMeasurer: candidates built on the tuner daemon, measured by
// the workers, for device keys whose workers should not compile (small boards,
// cross-compiled targets); fleet.toml's [builders] table chooses the keys.
//
// It wraps another Measurer (a job's FleetMeasurer). For each batch it builds
// every candidate as the runner would -- parse the workload and the target,
// lower, replay the trace -- and emits a relocatable object with EmitObject for
// the candidate's target (the job's; it need not be this host), on up to
// build_threads threads that are joined before anything is dispatched. The
// bytes go in MeasureInput::object, and the built candidates are measured
// through the inner measurer (the worker's runner loads the object instead of
// compiling). Candidates that do not build are answered here (worker
// "tuner"), never dispatched, with the kinds the runner gives:
// invalid_candidate for a workload, target or trace that does not parse or
// apply, compile_error for lowering and code generation.
//
// Results come in input order. A dispatched candidate's build_seconds is the
// tuner's build plus the worker's load. When the inner measurer abandons the
// batch (an empty answer: cancel, shutdown) the answer is empty too, so that
// nothing of the batch is recorded.
//
// Not isolated: builds run in the daemon's process, as the Compile service's
// do, so build_timeout_s is not enforced here and a code generator crash
// would end the daemon (the runner isolates such crashes for worker builds).
//
// Ownership: borrows `inner`, which must outlive this object. Thread safety:
// Measure may be called from several threads at once if the inner measurer
// allows it; this class keeps no mutable state between calls.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tunefarm/measure/candidate_program.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::daemon {

struct TunerSideBuildOptions {
  int build_threads = 0;  // threads compiling one batch; 0: the number of CPUs
  // A larger object is a compile_error, not dispatched: objects travel in the
  // daemon's requests to workers, which must fit its max message size (a
  // request too large would break the worker's stream on every retry).
  // 0: no limit.
  size_t max_object_bytes = 0;
};

class TunerSideBuildMeasurer : public Measurer {
 public:
  TunerSideBuildMeasurer(Measurer* inner, TunerSideBuildOptions options = {});

  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override;

 private:
  Measurer* inner_;
  const TunerSideBuildOptions options_;
};

// Builds one candidate's object as TunerSideBuildMeasurer does. On failure the
// result holds the answer (kind and message; candidate_id and build_seconds
// set) and the returned object is empty. `programs` holds the batch's parsed
// and lowered workloads (shared by its candidates). Thread-safe.
struct CandidateBuild {
  std::string object;      // EmitObject bytes; empty on failure
  MeasureResult failure;   // error != kNone on failure
  double build_seconds = 0;
  bool ok() const { return failure.error == MeasureErrorKind::kNone; }
};
CandidateBuild BuildCandidateObject(const MeasureInput& input, CandidatePrograms& programs,
                                    size_t max_object_bytes = 0);

}  // namespace tunefarm::daemon
