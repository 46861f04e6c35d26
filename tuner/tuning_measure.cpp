// Measuring a batch (TuningLoop::MeasureAndRecord): the candidates go to the
// measurer as text, every result is committed to the tuning log before
// anything else happens, then noted as the loop ranks traces (trace_times.h)
// and taught to the cost model; and which best the next batch measures again
// (NoteUnconfirmedBest).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

namespace {

database::ErrorKind ToRecordError(MeasureErrorKind kind) {
  return RecordedErrorKind<database::ErrorKind>(kind);  // common/error_kinds.h
}

// A batch as the measurer takes it. The trace is printed here, once per
// candidate: the text a runner in another process replays and the log keeps;
// the trace object goes along for measurers in this process (the fleet
// dispatcher), which then parse nothing.
std::vector<MeasureInput> MeasureInputsOf(const TuneTask& task, const Target& target,
                                          const std::vector<Candidate>& batch) {
  std::vector<MeasureInput> inputs;
  for (const Candidate& c : batch) {
    MeasureInput in{database::NewRecordUid(), task.text, c.trace.ToText(), target.ToString()};
    in.trace = std::make_shared<const Trace>(c.trace);
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace

Status TuningLoop::MeasureAndRecord(TaskState& state, TaskStatus& status, std::vector<Candidate> batch,
                                    const MeasureOptions& measure, size_t confirmations) {
  const std::vector<MeasureInput> inputs = MeasureInputsOf(state.task, options_.target, batch);
  TF_ASSIGN_OR_RETURN(std::vector<MeasureResult> results, MeasureBatch(inputs, measure));
  NoteMachineSpeed(state, status, batch, results);
  // Committed before anything else happens: a crash after this loses nothing.
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> ids, db_->CommitRecords(RecordsOf(state, inputs, results)));
  status.confirmations += int(confirmations);
  std::vector<costmodel::MeasuredCandidate> learned;
  for (size_t i = 0; i < results.size(); ++i) {
    const Candidate& c = batch[i];
    const std::optional<double> secs = NoteResult(state, status, c, inputs[i].trace_text, results[i], ids[i]);
    // A confirmation teaches the model nothing new about how programs rank:
    // the program is in its training set already. The features are those
    // the candidate was scored with, when it was.
    if (model_ && i >= confirmations) {
      learned.push_back(costmodel::MeasuredCandidate::FromFeatures(state.task.hash, c.features->Get(c.lowered),
                                                                   secs.value_or(0), !secs));
    }
  }
  NoteBatchDone(state, status, batch);
  if (model_ && !learned.empty()) {
    Status st = model_->Update(learned);
    if (!st.ok()) return Status(st.code(), "retraining the cost model: " + st.message());
  }
  return Status::OK();
}

Result<std::vector<MeasureResult>> TuningLoop::MeasureBatch(const std::vector<MeasureInput>& inputs,
                                                            const MeasureOptions& measure) {
  std::vector<MeasureResult> results = measurer_->Measure(inputs, measure);
  // A measurer that gives up on a batch (a fleet measurer on cancel or
  // shutdown) returns nothing: nothing of this batch is recorded, and a
  // resumed run proposes it again.
  if (results.empty() && !inputs.empty()) return Status::Cancelled("the batch in flight was abandoned; nothing of it was recorded");
  if (results.size() != inputs.size()) return Status::Internal("the measurer returned a result count that differs from the batch");
  return results;
}

void TuningLoop::NoteMachineSpeed(const TaskState& state, const TaskStatus& status, const std::vector<Candidate>& batch,
                                  const std::vector<MeasureResult>& results) {
  // The untuned default alone is left out: its probe follows seconds of a
  // serial kernel, when the other cores have been idle, and read up to a
  // seventh slow on a quiet machine.
  const bool baseline_alone = batch.size() == 1 && batch[0].trace.size() == 0;
  if (baseline_alone) return;
  last_machine_speed_ =
      machine_speed_.AddBatch(results, {state.index, status.trials, status.trials + int(results.size())}).value_or(0);
}

std::vector<database::TuningRecord> TuningLoop::RecordsOf(const TaskState& state, const std::vector<MeasureInput>& inputs,
                                                          const std::vector<MeasureResult>& results) const {
  const database::Target target = RecordTargetForRun();
  std::vector<database::TuningRecord> records;
  for (size_t i = 0; i < results.size(); ++i) {
    database::TuningRecord r;
    r.uid = inputs[i].candidate_id;
    r.workload_hash = state.task.hash;
    r.target = target;
    if (options_.worker_fingerprint && !results[i].worker.empty()) {
      if (auto measured_by = options_.worker_fingerprint(results[i].worker)) {
        r.target.fingerprint = std::move(*measured_by);
        database::CanonicalizeFingerprint(&r.target.fingerprint);
      }
    }
    r.trace = inputs[i].trace_text;
    r.error_kind = ToRecordError(results[i].error);
    if (r.error_kind == database::ErrorKind::kNone) {
      r.run_secs = results[i].repeat_seconds;
    } else {
      r.error_msg = results[i].error_message.empty() ? MeasureErrorKindName(results[i].error) : results[i].error_message;
    }
    r.worker = results[i].worker.empty() ? options_.worker_name : results[i].worker;
    r.device = options_.device;
    r.synthetic = results[i].synthetic || options_.synthetic;
    // Measured under qemu (the worker or the tuner says so): kept, but never
    // ranked against or served in place of a real device's record. The log
    // also marks a record whose fingerprint is an emulated device's.
    r.emulated = results[i].emulated;
    records.push_back(std::move(r));
  }
  return records;
}

std::optional<double> TuningLoop::NoteResult(TaskState& state, TaskStatus& status, const Candidate& c,
                                             const std::string& text, const MeasureResult& result, int64_t record_id) {
  state.measured.insert(c.hash);
  // Keyed by the text measured (the record's); printed from c.trace, so its own.
  ++TraceEntry(state.times, text, c.trace, /*canonical=*/true).records;
  ++status.trials;
  // An invented time in a measuring run (a test device that joined its key
  // despite the fleet's check) is recorded as synthetic and counts here as a
  // trial without a time: it must not become the run's best.
  const bool invented = result.synthetic && !options_.synthetic;
  const bool ok = result.error == MeasureErrorKind::kNone && !invented;
  if (!ok) ++status.errors;
  if (result.error == MeasureErrorKind::kWrongResult) NoteWrongResult(state.times, status, text);
  if (!ok) return std::nullopt;
  const double secs = RecordSeconds(result.repeat_seconds);
  if (c.trace.size() == 0) status.default_seconds = secs;
  const TraceTimes& t = NoteTime(state.times, status, text, c.trace, secs, record_id);
  if (t.count == 1) {
    state.successes.push_back({secs, c.trace});
  } else {  // measured again: the trace seeds the search with its mean
    for (auto& success : state.successes) {
      if (success.second == c.trace) success.first = t.Mean();
    }
  }
  return secs;
}

void TuningLoop::NoteBatchDone(TaskState& state, TaskStatus& status, const std::vector<Candidate>& batch) {
  state.SortSuccesses();
  NoteUnconfirmedBest(state, status, batch);
  if (status.best_seconds > 0) status.curve.push_back({status.trials, status.flops / status.best_seconds / 1e9});
}

// A new best measured once is measured again, with the task's next batch,
// unless it is the untuned default, whose one run can take seconds.
void TuningLoop::NoteUnconfirmedBest(TaskState& state, const TaskStatus& status, const std::vector<Candidate>& batch) {
  state.unconfirmed_best.reset();
  if (!options_.confirm_best || status.best_seconds <= 0) return;
  TraceTimes& best = state.times.at(status.best_trace);
  // Once per trace: a confirmation that failed (a timeout, a lost worker)
  // leaves the count at one, and must not repeat after every batch.
  if (best.count != 1 || best.trace.size() == 0 || best.confirm_tried || best.final_tried) return;
  // A record whose text is not its trace's own (imported, written by hand)
  // is left alone: its second record would be another trace to the log.
  for (const Candidate& c : batch) {
    if (best.canonical && c.trace == best.trace) state.unconfirmed_best = PendingConfirmation{c, &best};
  }
  // A trace of an earlier batch (or run) that leads again once a
  // faster-looking one fell back.
  if (!state.unconfirmed_best) {
    auto replayed = state.search->Replay(best.trace);
    if (replayed.ok() && best.canonical && replayed->trace == best.trace) {
      state.unconfirmed_best = PendingConfirmation{std::move(replayed).value(), &best};
    }
  }
}

}  // namespace tunefarm::tuner
