// Candidates built on the tuner, measured by workers (tuner_side_build.h).
// The build starts as the runner's does (PrepareCandidateProgram), so that a
// record reads the same whichever side built it; only the last step differs:
// EmitObject of the target kind's code generator instead of JitCompile.
#include "tunefarm/daemon/tuner_side_build.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/measure/candidate_program.h"

namespace tunefarm::daemon {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

CandidateBuild BuildCandidateObject(const MeasureInput& in, CandidatePrograms& programs, size_t max_object_bytes) {
  auto start = Clock::now();
  CandidateBuild out;
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    out.object.clear();
    out.failure.candidate_id = in.candidate_id;
    out.failure.error = kind;
    out.failure.error_message = std::move(message);
    out.failure.worker = "tuner";  // answered by the tuner's build, not by a worker
    out.build_seconds = out.failure.build_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
  };
  // The candidate's target, not this host's: the object may be for a board.
  CandidateProgram program = programs.Prepare(in);
  if (!program.ok()) return fail(program.error, std::move(program.error_message));
  const Target& target = program.target;
  const ir::PrimFunc& scheduled = program.func;
  // The runner calls the prepack split's entries only (prepared_call.h).
  CodegenOptions codegen;
  codegen.whole_entry = false;
  auto generator = CodeGeneratorFor(target);
  if (!generator.ok()) return fail(MeasureErrorKind::kCompileError, "building on the tuner: " + generator.status().ToString());
  auto object = (*generator)->EmitObject(scheduled, target, codegen);
  if (!object.ok()) return fail(MeasureErrorKind::kCompileError, "building on the tuner: " + object.status().ToString());
  if (max_object_bytes > 0 && object->size() > max_object_bytes) {
    return fail(MeasureErrorKind::kCompileError,
                "building on the tuner: the object has " + std::to_string(object->size()) +
                    " bytes, more than the " + std::to_string(max_object_bytes) +
                    " a request to a worker may carry per candidate (raise [limits] max_message_mib or lower "
                    "max_in_flight_per_worker)");
  }
  out.object = std::move(*object);
  out.build_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

TunerSideBuildMeasurer::TunerSideBuildMeasurer(Measurer* inner, TunerSideBuildOptions options)
    : inner_(inner), options_(options) {}

std::vector<MeasureResult> TunerSideBuildMeasurer::Measure(const std::vector<MeasureInput>& inputs,
                                                           const MeasureOptions& options) {
  // Build phase: every candidate of the batch, in parallel; each build has its
  // own LLVM context (EmitObject is safe to run concurrently).
  // The batch's workload is parsed and lowered once for all its candidates.
  CandidatePrograms programs;
  std::vector<CandidateBuild> built(inputs.size());
  std::atomic<size_t> next{0};
  auto build_worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < inputs.size();) {
      built[i] = BuildCandidateObject(inputs[i], programs, options_.max_object_bytes);
    }
  };
  size_t threads = options_.build_threads > 0 ? size_t(options_.build_threads)
                                              : size_t(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, inputs.size());
  if (threads <= 1) {
    build_worker();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(build_worker);
    for (auto& t : pool) t.join();
  }

  // Failures are answered here; the rest travel with their objects.
  std::vector<MeasureResult> results(inputs.size());
  std::vector<MeasureInput> dispatch;
  std::vector<size_t> dispatched_index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!built[i].ok()) {
      results[i] = std::move(built[i].failure);
      continue;
    }
    MeasureInput in = inputs[i];
    in.object = std::move(built[i].object);
    dispatch.push_back(std::move(in));
    dispatched_index.push_back(i);
  }
  if (dispatch.empty()) return results;
  std::vector<MeasureResult> measured = inner_->Measure(dispatch, options);
  // Abandoned (cancel, shutdown): answer nothing, as the inner measurer did,
  // so that the caller records nothing of this batch.
  if (measured.empty()) return {};
  for (size_t k = 0; k < dispatch.size(); ++k) {
    size_t i = dispatched_index[k];
    if (k < measured.size()) {
      results[i] = std::move(measured[k]);
    } else {
      results[i].error = MeasureErrorKind::kWorkerLost;
      results[i].error_message = "the measurer returned " + std::to_string(measured.size()) + " results for " +
                                 std::to_string(dispatch.size()) + " candidates";
    }
    results[i].candidate_id = inputs[i].candidate_id;
    results[i].build_seconds += built[i].build_seconds;
  }
  return results;
}

}  // namespace tunefarm::daemon
