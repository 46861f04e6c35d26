// The tuning loop (see tuning_loop.h). Map:
//   MakeTuneTask / RecordTarget   -- small helpers
//   CostModelScorer               -- a CostModel as the search's scorer
//   (trace_times.h)               -- per-trace means and the best, as the log ranks them
//   TuningLoop::Resume            -- reads a task's records back from the log
//   TuningLoop::MeasureAndRecord  -- measures a batch, commits it, teaches the model
//   TuningLoop::NoteUnconfirmedBest -- which best the next batch measures again
//   TuningLoop::Run               -- the rounds; a new best rides with the next batch
//   (final_round.cpp)             -- the final round: the fastest measured again
#include "tunefarm/tuner/tuning_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/seed_selection.h"
#include "tunefarm/tuner/task_scheduler.h"
#include "tunefarm/tuner/warm_start.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

namespace {

class CostModelScorer : public CandidateScorer {
 public:
  CostModelScorer(costmodel::CostModel* model, uint64_t seed) : model_(model), fallback_(seed) {}
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override {
    if (!model_) return fallback_.Score(candidates);
    // Each candidate's features are kept with it (Candidate::features): its
    // copies scored in later generations and the model learning from it once
    // measured read them again.
    std::vector<costmodel::CostModel::CachedProgram> programs;
    for (const Candidate* c : candidates) programs.push_back({&c->lowered, c->features.get()});
    auto scores = model_->PredictCached(programs);
    // A model that cannot score (not trained, or an error) must not stop tuning.
    if (!scores.ok()) return fallback_.Score(candidates);
    return std::move(scores).value();
  }

 private:
  costmodel::CostModel* model_;
  RandomScorer fallback_;
};

database::ErrorKind ToRecordError(MeasureErrorKind kind) {
  return RecordedErrorKind<database::ErrorKind>(kind);  // common/error_kinds.h
}

// A measurement's time as the log keeps it (database::RecordTime).
double RecordSeconds(const std::vector<double>& run_secs) {
  return database::RecordTime(run_secs).value_or(std::numeric_limits<double>::infinity());
}

// What differs between a stale record's fingerprint and this run's, for the
// job's summary: "code of toolchain 'llvm-16'" or "other hardware (...)".
std::string StaleOrigin(const database::HardwareFingerprint& record, const database::HardwareFingerprint& run) {
  if (record.toolchain != run.toolchain) return "code of toolchain '" + record.toolchain + "'";
  return "other hardware (" + record.arch + ", " + std::to_string(record.cores) + " cores)";
}

}  // namespace

Result<TuneTask> MakeTuneTask(const Workload& w, double weight) {
  TuneTask t;
  t.workload = w;
  t.text = PrintWorkload(w);
  t.hash = StructuralHashHex(w);
  t.weight = weight;
  return t;
}

database::Target RecordTarget(const Target& t) {
  database::Target out;
  out.target = t.ToString();
  // The fingerprint a fleet worker on this machine registers with, too.
  out.fingerprint = HostFingerprint(t, CodegenToolchain());
  database::CanonicalizeFingerprint(&out.fingerprint);
  return out;
}

database::Target TuningLoop::RecordTargetForRun() const {
  // A kernel's time depends on the threads it ran with, and the measure
  // options win over the target's -num-threads (runner_session.cpp): key the
  // records by what was timed, so that `tunefarm compile --target
  // 'llvm -num-threads=1'` finds the kernels tuned for one thread and a run
  // at another thread count neither resumes from nor is ranked against them.
  Target timed = options_.target;
  if (options_.measure.num_threads > 0) timed.num_threads = options_.measure.num_threads;
  database::Target t = RecordTarget(timed);
  if (options_.device_fingerprint) {
    t.fingerprint = *options_.device_fingerprint;
    database::CanonicalizeFingerprint(&t.fingerprint);
  }
  return t;
}

TuningLoop::TuningLoop(TuneOptions options, database::Database* db, Measurer* measurer, costmodel::CostModel* model)
    : options_(std::move(options)), db_(db), measurer_(measurer), model_(model) {}
TuningLoop::~TuningLoop() = default;

Status TuningLoop::Resume(TaskState& state, TaskStatus& status) {
  database::Target target = RecordTargetForRun();
  std::vector<costmodel::MeasuredCandidate> training;
  // One training row per program, as the live loop teaches it: its first
  // record of this run's fingerprint, else its first stale one. A program's
  // later records are confirmations.
  std::map<uint64_t, std::pair<size_t, bool>> row_of;  // program hash -> (row, from a current record)
  auto teach = [&](uint64_t hash, bool current, costmodel::MeasuredCandidate row) {
    auto [it, added] = row_of.try_emplace(hash, training.size(), current);
    if (added) {
      training.push_back(std::move(row));
    } else if (current && !it->second.second) {
      training[it->second.first] = std::move(row);
      it->second.second = true;
    }
  };
  Status st = db_->ForEachRecord({state.task.hash, target.target}, [&](const database::TuningRecord& r) -> Status {
    // Records of other devices (another device key of a fleet, a test device)
    // belong to their own tuning runs: their times say nothing about this one.
    if (!r.device.empty() && r.device != options_.device) return Status::OK();
    // Invented times belong to runs on a test device, measured ones to real runs.
    if (r.synthetic != options_.synthetic) return Status::OK();
    ++status.trials;
    // Timed with code of another toolchain (an older tunefarm or LLVM) or on
    // other hardware: the program is known, its time is not this run's.
    const bool current = r.target.fingerprint == target.fingerprint;
    if (!current) {
      ++status.stale_records;
      if (status.stale_from.empty()) status.stale_from = StaleOrigin(r.target.fingerprint, target.fingerprint);
    }
    // Parsed once here, where the text enters: the loop compares traces.
    auto trace = Trace::Parse(r.trace);
    if (!trace.ok()) return Status::OK();  // a record of another version: counted, not reused
    auto c = state.search->Replay(*trace);
    if (!c.ok()) return Status::OK();
    state.measured.insert(c->hash);
    if (current) {
      state.measured_current.insert(c->hash);
      auto known = state.times.find(r.trace);
      TraceTimes& entry = known != state.times.end() ? known->second
                                                     : TraceEntry(state.times, r.trace, *trace, trace->ToText() == r.trace);
      ++entry.records;
    }
    if (!r.ok()) {
      ++status.errors;
      if (current && r.error_kind == database::ErrorKind::kWrongResult) NoteWrongResult(state.times, status, r.trace);
      if (model_) teach(c->hash, current, costmodel::MeasuredCandidate::FromLowered(state.task.hash, c->lowered, 0, true));
      return Status::OK();
    }
    double secs = RecordSeconds(r.run_secs);
    // Stale times still teach the model how programs rank; they neither set
    // the best nor the baseline (RefreshStaleRecords measures the fastest again).
    if (model_) teach(c->hash, current, costmodel::MeasuredCandidate::FromLowered(state.task.hash, c->lowered, secs));
    if (!current) {
      state.stale.push_back({secs, *trace, c->hash});
      return Status::OK();
    }
    if (trace->size() == 0 && (status.default_seconds == 0 || secs < status.default_seconds)) status.default_seconds = secs;
    const double best_before = status.best_seconds;
    NoteTime(state.times, status, r.trace, *trace, secs, r.id);
    // Records come back in commit order: rebuild the curve as it happened.
    if (status.best_seconds != best_before) status.curve.push_back({status.trials, status.flops / status.best_seconds / 1e9});
    return Status::OK();
  });
  TF_RETURN_IF_ERROR(st);
  // A trace with a second record was confirmed, or its confirmation failed:
  // either way it is never measured a third time.
  for (auto& [text, t] : state.times) {
    if (t.records < 2) continue;
    status.confirmations += t.records - 1;
    t.confirm_tried = true;
  }
  for (const auto& [text, t] : state.times) {
    if (t.count > 0) state.successes.push_back({t.Mean(), t.trace});
  }
  std::sort(state.successes.begin(), state.successes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (status.trials > 0) {
    state.history.trials = status.trials;
    state.history.best_after_batch.push_back(status.best_seconds > 0 ? status.best_seconds
                                                                      : std::numeric_limits<double>::infinity());
  }
  // A best the stopped run left unconfirmed rides with this run's first batch.
  NoteUnconfirmedBest(state, status, {});
  if (model_ && !training.empty()) TF_RETURN_IF_ERROR(model_->Update(training));
  return Status::OK();
}

Status TuningLoop::RefreshStaleRecords(TaskState& state, TaskStatus& status) {
  std::sort(state.stale.begin(), state.stale.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  std::vector<Candidate> batch;
  std::set<uint64_t> chosen;
  for (const StaleSuccess& s : state.stale) {
    if (int(batch.size()) >= kRefreshLimit) break;
    // Sorted: nothing after this one beats what this run already timed.
    if (status.best_seconds > 0 && s.seconds >= status.best_seconds) break;
    if (state.measured_current.count(s.hash) || chosen.count(s.hash)) continue;
    auto c = state.search->Replay(s.trace);
    if (!c.ok()) continue;
    chosen.insert(s.hash);
    batch.push_back(std::move(c).value());
  }
  if (!batch.empty()) {
    status.refreshed = int(batch.size());
    TF_RETURN_IF_ERROR(MeasureAndRecord(state, status, std::move(batch), options_.measure));
  }
  // The rest seed the search with their old times, as before.
  for (StaleSuccess& s : state.stale) {
    if (!chosen.count(s.hash)) state.successes.push_back({s.seconds, std::move(s.trace)});
  }
  state.stale.clear();
  std::sort(state.successes.begin(), state.successes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return Status::OK();
}

Status TuningLoop::MeasureAndRecord(TaskState& state, TaskStatus& status, std::vector<Candidate> batch,
                                    const MeasureOptions& measure, size_t confirmations) {
  std::vector<MeasureInput> inputs;
  for (const Candidate& c : batch) {
    inputs.push_back({database::NewRecordUid(), state.task.text, c.trace.ToText(), options_.target.ToString()});
  }
  std::vector<MeasureResult> results = measurer_->Measure(inputs, measure);
  // A measurer that gives up on a batch (a fleet measurer on cancel or
  // shutdown) returns nothing: nothing of this batch is recorded, and a
  // resumed run proposes it again.
  if (results.empty() && !inputs.empty()) return Status::Cancelled("the batch in flight was abandoned; nothing of it was recorded");
  if (results.size() != inputs.size()) return Status::Internal("the measurer returned a result count that differs from the batch");
  // The untuned default alone is left out: its probe follows seconds of a
  // serial kernel, when the other cores have been idle, and read up to a
  // seventh slow on a quiet machine.
  const bool baseline_alone = batch.size() == 1 && batch[0].trace.size() == 0;
  if (!baseline_alone) {
    last_machine_speed_ =
        machine_speed_.AddBatch(results, {state.index, status.trials, status.trials + int(results.size())})
            .value_or(0);
  }
  database::Target target = RecordTargetForRun();
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
    records.push_back(std::move(r));
  }
  // Committed before anything else happens: a crash after this loses nothing.
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> ids, db_->CommitRecords(records));
  status.confirmations += int(confirmations);
  std::vector<costmodel::MeasuredCandidate> learned;
  for (size_t i = 0; i < results.size(); ++i) {
    const bool confirmation = i < confirmations;
    const Candidate& c = batch[i];
    state.measured.insert(c.hash);
    // Keyed by the text measured (the record's); printed from c.trace, so its own.
    ++TraceEntry(state.times, inputs[i].trace_text, c.trace, /*canonical=*/true).records;
    ++status.trials;
    // An invented time in a measuring run (a test device that joined its key
    // despite the fleet's check) is recorded as synthetic above and counts
    // here as a trial without a time: it must not become the run's best.
    const bool invented = results[i].synthetic && !options_.synthetic;
    bool ok = results[i].error == MeasureErrorKind::kNone && !invented;
    double secs = ok ? RecordSeconds(results[i].repeat_seconds) : 0;
    if (!ok) ++status.errors;
    if (results[i].error == MeasureErrorKind::kWrongResult) NoteWrongResult(state.times, status, inputs[i].trace_text);
    if (ok) {
      if (c.trace.size() == 0) status.default_seconds = secs;
      const TraceTimes& t = NoteTime(state.times, status, inputs[i].trace_text, c.trace, secs, ids[i]);
      if (t.count == 1) {
        state.successes.push_back({secs, c.trace});
      } else {  // measured again: the trace seeds the search with its mean
        for (auto& success : state.successes) {
          if (success.second == c.trace) success.first = t.Mean();
        }
      }
    }
    // A confirmation teaches the model nothing new about how programs rank:
    // the program is in its training set already. The features are those
    // the candidate was scored with, when it was.
    if (model_ && !confirmation) {
      learned.push_back(costmodel::MeasuredCandidate::FromFeatures(state.task.hash, c.features->Get(c.lowered), secs, !ok));
    }
  }
  std::sort(state.successes.begin(), state.successes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  NoteUnconfirmedBest(state, status, batch);
  state.history.trials = status.trials;
  state.history.best_after_batch.push_back(status.best_seconds > 0 ? status.best_seconds
                                                                    : std::numeric_limits<double>::infinity());
  if (status.best_seconds > 0) status.curve.push_back({status.trials, status.flops / status.best_seconds / 1e9});
  if (model_ && !learned.empty()) {
    Status st = model_->Update(learned);
    if (!st.ok()) return Status(st.code(), "retraining the cost model: " + st.message());
  }
  return Status::OK();
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

Status TuningLoop::Run(std::vector<TuneTask> tasks, const std::atomic<bool>& stop,
                       const std::function<void(const Progress&)>& on_progress) {
  TF_ASSIGN_OR_RETURN(policy_, MakeSketchPolicy(options_.target, options_.config_dir,
                                                options_.replayable_instructions ? &*options_.replayable_instructions
                                                                                 : nullptr));
  states_.clear();
  status_.clear();
  machine_speed_ = MachineSpeed();
  last_machine_speed_ = 0;
  if (model_ && options_.warm_start_records > 0) {
    // Before this job's own records: they are added by Resume below.
    TransferOptions transfer;
    transfer.target = RecordTargetForRun().target;
    transfer.device = options_.device;
    transfer.synthetic = options_.synthetic;
    transfer.max_records = options_.warm_start_records;
    for (const TuneTask& t : tasks) transfer.skip.insert(t.hash);
    TF_ASSIGN_OR_RETURN(TransferSet set, CollectTransferRecords(db_, policy_.get(), transfer));
    if (!set.records.empty()) {
      Status st = model_->WarmStart(set.records);
      if (!st.ok()) return Status(st.code(), "warm-starting the cost model: " + st.message());
    }
    transfer_records_ = int(set.records.size());
    transfer_workloads_ = set.workloads;
  }
  int resumed = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto state = std::make_unique<TaskState>();
    state->task = std::move(tasks[i]);
    state->index = int(i);
    TF_ASSIGN_OR_RETURN(state->default_func, LowerToPrimFunc(state->task.workload));
    TF_ASSIGN_OR_RETURN(state->search, MakeSearchStrategy({state->default_func, policy_.get(), options_.search,
                                                           options_.seed * 7919 + i}));
    state->history.weight = state->task.weight;
    TF_RETURN_IF_ERROR(db_->CommitWorkload({state->task.hash, state->task.workload.name, state->task.text}));
    TaskStatus status;
    status.name = state->task.workload.name;
    status.hash = state->task.hash;
    status.flops = state->task.workload.Flops();
    TF_RETURN_IF_ERROR(Resume(*state, status));
    resumed += status.trials;
    states_.push_back(std::move(state));
    status_.push_back(std::move(status));
  }
  // The untuned default is the baseline every speed-up is measured against.
  for (size_t i = 0; i < states_.size() && !stop; ++i) {
    if (status_[i].default_seconds > 0) continue;
    auto baseline = states_[i]->search->Replay(Trace());
    if (!baseline.ok()) return baseline.status();
    // Measured before by this toolchain, but it failed.
    if (states_[i]->measured_current.count(baseline->hash)) continue;
    // The untuned default of a big workload can take seconds per run: give it
    // one timed group and a deadline to match, so the baseline is not lost.
    MeasureOptions slow = options_.measure;
    slow.repeat = 1;
    slow.min_repeat_ms = 0;
    slow.number = 1;
    slow.run_timeout_s = std::max(options_.measure.run_timeout_s, 300.0);
    TF_RETURN_IF_ERROR(MeasureAndRecord(*states_[i], status_[i], {std::move(baseline).value()}, slow));
  }
  // Resumed bests timed with other code or hardware are timed again, so that
  // this run's best, and what compile serves, are times of today's code.
  for (size_t i = 0; i < states_.size() && !stop; ++i) {
    TF_RETURN_IF_ERROR(RefreshStaleRecords(*states_[i], status_[i]));
  }
  TaskScheduler scheduler(options_.seed);
  CostModelScorer scorer(model_, options_.seed);
  auto start = std::chrono::steady_clock::now();
  int done_at_start = 0;
  for (const TaskStatus& s : status_) done_at_start += s.trials;
  auto report = [&](size_t last, bool final_round) {
    Progress p;
    p.final_round = final_round;
    p.machine_speed = last_machine_speed_;
    for (const TaskStatus& s : status_) p.trials_done += s.trials;
    p.trials_total = std::max(options_.trials, p.trials_done);
    p.resumed_trials = resumed;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int new_trials = p.trials_done - done_at_start;
    p.eta_s = new_trials > 0 ? p.elapsed_s / new_trials * std::max(0, p.trials_total - p.trials_done) : 0;
    p.tasks = &status_;
    p.last_task = last;
    if (on_progress) on_progress(p);
  };
  report(0, false);
  std::vector<bool> exhausted(states_.size(), false);
  while (!stop) {
    int done = 0;
    for (const TaskStatus& s : status_) done += s.trials;
    // The final round's trials are left over (FinalReserve), so that a job
    // ends with its fastest kernels measured several times.
    const int budget = options_.trials - FinalReserve();
    if (done >= budget) break;
    if (std::all_of(exhausted.begin(), exhausted.end(), [](bool b) { return b; })) break;
    std::vector<TaskHistory> histories;
    for (const auto& s : states_) histories.push_back(s->history);
    size_t i = scheduler.Next(histories, exhausted);
    TaskState& state = *states_[i];
    std::vector<Trace> seeds = PickSeeds(state.successes, 16, size_t(options_.search.choice_seeds),
                                         size_t(std::max(1, options_.search.seeds_per_choice)));
    int want = std::min(options_.batch_size, budget - done);
    // The last batch's new best, measured once, is measured again within this
    // batch rather than on its own: alone it would be a round of one
    // candidate, which on a fleet leaves every other worker idle.
    std::vector<Candidate> batch;
    if (state.unconfirmed_best) {
      state.unconfirmed_best->times->confirm_tried = true;
      batch.push_back(std::move(state.unconfirmed_best->candidate));
      state.unconfirmed_best.reset();
    }
    const size_t confirmations = batch.size();
    if (want > int(confirmations)) {
      std::vector<std::string> wanted;
      if (options_.search.choice_picks > 0) wanted = MissingChoices(seeds, std::min<size_t>(16, state.successes.size()));
      auto fresh = state.search->NextBatch(want - int(confirmations), seeds, state.measured, scorer, wanted);
      if (!fresh.ok()) return fresh.status();
      status_[i].realigned_seeds = state.search->realigned_seeds();
      status_[i].unaligned_seeds = state.search->unaligned_seeds();
      // The search found nothing new: the space is (nearly) exhausted.
      if (fresh->empty()) exhausted[i] = true;
      for (Candidate& c : *fresh) batch.push_back(std::move(c));
    }
    if (batch.empty()) continue;
    TF_RETURN_IF_ERROR(MeasureAndRecord(state, status_[i], std::move(batch), options_.measure, confirmations));
    // A batch of a confirmation alone can leave another trace leading with
    // one measurement: the task stays in the rotation until that one is
    // measured again too (each trace once, so this ends).
    if (exhausted[i] && state.unconfirmed_best) exhausted[i] = false;
    report(i, false);
  }
  if (stop) return Status::OK();
  TF_RETURN_IF_ERROR(RunFinalRound(stop, report));
  return ConfirmLastBests(stop, report);
}

}  // namespace tunefarm::tuner
