// The tuning loop (see tuning_loop.h). Map:
//   MakeTuneTask / RecordTarget    -- small helpers
//   TuningLoop::Run and its steps  -- warm start, tasks resumed, baselines,
//                                     stale records, search rounds, closing round
//   (cost_model_scorer.h)          -- a CostModel as the search's scorer
//   (tuning_resume.cpp)            -- a task's records read back from the log
//   (tuning_measure.cpp)           -- a batch measured, committed, taught to the model
//   (trace_times.h)                -- per-trace means and the best, as the log ranks them
//   (final_round.cpp)              -- the closing round: the fastest measured again
#include "tunefarm/tuner/tuning_loop.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/seed_selection.h"
#include "tunefarm/tuner/task_scheduler.h"
#include "tunefarm/tuner/warm_start.h"
#include "cost_model_scorer.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

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


Status TuningLoop::Run(std::vector<TuneTask> tasks, const std::atomic<bool>& stop,
                       const std::function<void(const Progress&)>& on_progress) {
  TF_RETURN_IF_ERROR(Reset());
  TF_RETURN_IF_ERROR(WarmStartModel(tasks));
  TF_RETURN_IF_ERROR(StartTasks(std::move(tasks)));
  const int resumed = TrialsDone();
  TF_RETURN_IF_ERROR(MeasureBaselines(stop));
  // Resumed bests timed with other code or hardware are timed again, so that
  // this run's best, and what compile serves, are times of today's code.
  for (size_t i = 0; i < states_.size() && !stop; ++i) {
    TF_RETURN_IF_ERROR(RefreshStaleRecords(*states_[i], status_[i]));
  }
  const Report report = MakeReport(resumed, on_progress);
  report(0, false);
  TF_RETURN_IF_ERROR(SearchRounds(stop, report));
  if (stop) return Status::OK();
  TF_RETURN_IF_ERROR(RunFinalRound(stop, report));
  return ConfirmLastBests(stop, report);
}

Status TuningLoop::Reset() {
  TF_ASSIGN_OR_RETURN(policy_, MakeSketchPolicy(options_.target, options_.config_dir,
                                                options_.replayable_instructions ? &*options_.replayable_instructions
                                                                                 : nullptr));
  states_.clear();
  status_.clear();
  machine_speed_ = MachineSpeed();
  last_machine_speed_ = 0;
  return Status::OK();
}

// Before this job's own records: they are added by Resume (StartTasks).
Status TuningLoop::WarmStartModel(const std::vector<TuneTask>& tasks) {
  if (!model_ || options_.warm_start_records <= 0) return Status::OK();
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
  return Status::OK();
}

Status TuningLoop::StartTasks(std::vector<TuneTask> tasks) {
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
    status.weight = state->task.weight;
    TF_RETURN_IF_ERROR(Resume(*state, status));
    states_.push_back(std::move(state));
    status_.push_back(std::move(status));
  }
  return Status::OK();
}

// The untuned default is the baseline every speed-up is measured against.
Status TuningLoop::MeasureBaselines(const std::atomic<bool>& stop) {
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
  return Status::OK();
}

TuningLoop::Report TuningLoop::MakeReport(int resumed, const std::function<void(const Progress&)>& on_progress) {
  const auto start = std::chrono::steady_clock::now();
  const int done_at_start = TrialsDone();
  return [this, resumed, on_progress, start, done_at_start](size_t last, bool final_round) {
    Progress p;
    p.final_round = final_round;
    p.machine_speed = last_machine_speed_;
    p.trials_done = TrialsDone();
    p.trials_total = std::max(options_.trials, p.trials_done);
    p.resumed_trials = resumed;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int new_trials = p.trials_done - done_at_start;
    p.eta_s = new_trials > 0 ? p.elapsed_s / new_trials * std::max(0, p.trials_total - p.trials_done) : 0;
    p.tasks = &status_;
    p.last_task = last;
    if (on_progress) on_progress(p);
  };
}

// Rounds until the search's share of the budget is spent (the closing
// round's trials are left over, FinalReserve, so that a job ends with its
// fastest kernels measured again) or every task's space is.
Status TuningLoop::SearchRounds(const std::atomic<bool>& stop, const Report& report) {
  TaskScheduler scheduler(options_.seed);
  CostModelScorer scorer(model_, options_.seed);
  const int budget = options_.trials - FinalReserve();
  // As Ansor's: a budget too small for a full batch per task gets smaller
  // batches, so that every task has its first batch (a model of 32 tasks
  // tuned 300 trials, batches of 16, would leave 19 of them at their default).
  const int per_task = (budget - TrialsDone()) / std::max(1, int(states_.size()));
  const int batch_size = std::clamp(per_task, 1, std::max(1, options_.batch_size));
  std::vector<bool> exhausted(states_.size(), false);
  while (!stop) {
    const int done = TrialsDone();
    if (done >= budget) break;
    if (std::all_of(exhausted.begin(), exhausted.end(), [](bool b) { return b; })) break;
    std::vector<TaskHistory> histories;
    for (size_t k = 0; k < states_.size(); ++k) {
      histories.push_back(states_[k]->history);
      histories.back().best_seconds = status_[k].best_seconds;
    }
    const size_t i = scheduler.Next(histories, exhausted);
    TF_ASSIGN_OR_RETURN(const bool measured, SearchRound(i, std::min(batch_size, budget - done), scorer, exhausted));
    if (measured) report(i, false);
  }
  return Status::OK();
}

Result<bool> TuningLoop::SearchRound(size_t i, int want, CandidateScorer& scorer, std::vector<bool>& exhausted) {
  TaskState& state = *states_[i];
  // The last batch's new best, measured once, is measured again within this
  // batch rather than on its own: alone it would be a round of one
  // candidate, which on a fleet leaves every other worker idle.
  std::vector<Candidate> batch;
  if (std::optional<Candidate> best = state.TakeUnconfirmedBest()) batch.push_back(std::move(*best));
  const size_t confirmations = batch.size();
  if (want > int(confirmations)) {
    TF_ASSIGN_OR_RETURN(std::vector<Candidate> fresh, ProposeCandidates(i, want - int(confirmations), scorer));
    // The search found nothing new: the space is (nearly) exhausted.
    if (fresh.empty()) exhausted[i] = true;
    for (Candidate& c : fresh) batch.push_back(std::move(c));
  }
  if (batch.empty()) return false;
  TF_RETURN_IF_ERROR(MeasureAndRecord(state, status_[i], std::move(batch), options_.measure, confirmations));
  state.history.AddSearchBatch(status_[i].trials, status_[i].best_seconds);
  // A batch of a confirmation alone can leave another trace leading with
  // one measurement: the task stays in the rotation until that one is
  // measured again too (each trace once, so this ends).
  if (exhausted[i] && state.unconfirmed_best) exhausted[i] = false;
  return true;
}

Result<std::vector<Candidate>> TuningLoop::ProposeCandidates(size_t i, int n, CandidateScorer& scorer) {
  TaskState& state = *states_[i];
  const SearchOptions& o = options_.search;
  std::vector<Trace> seeds =
      PickSeeds(state.successes, 16, size_t(o.choice_seeds), size_t(std::max(1, o.seeds_per_choice)));
  std::vector<std::string> wanted;
  if (o.choice_picks > 0) wanted = MissingChoices(seeds, std::min<size_t>(16, state.successes.size()));
  TF_ASSIGN_OR_RETURN(std::vector<Candidate> fresh, state.search->NextBatch(n, seeds, state.measured, scorer, wanted));
  status_[i].realigned_seeds = state.search->realigned_seeds();
  status_[i].unaligned_seeds = state.search->unaligned_seeds();
  return fresh;
}

int TuningLoop::TrialsDone() const {
  int done = 0;
  for (const TaskStatus& s : status_) done += s.trials;
  return done;
}

}  // namespace tunefarm::tuner
