// The tuning loop: search, measure, record, learn, repeat.
//
// Each round the task scheduler picks a task, the task's evolutionary search
// proposes a batch, the measurer measures it, every result (failures too) is
// committed to the tuning log at once, and the cost model retrains. A loop
// started on a log that already holds records for a task resumes it: those
// trials count, their programs are never proposed again, and the best of them
// seed the search. Records of another fingerprint (code of an older toolchain,
// other hardware) are stale: the fastest are measured again first. A new
// best measured once is measured again, within the task's next batch
// (confirm_best): a trace ranks by the mean of its measurements, here as in
// the database. Optionally, a final round measures each task's fastest
// traces again until each has several measurements (final_candidates).
// Each batch's machine speed, from the speed probe its results carry, is
// tracked (machine_speed(), Progress::machine_speed) and reported, never used
// to correct a time. Stopping (the `stop` flag) ends the loop after the batch
// in flight; nothing measured is lost.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/tuner/machine_speed.h"
#include "tunefarm/tuner/search_strategy.h"
#include "tunefarm/measure/measure.h"

#include "tunefarm/database/record.h"

namespace tunefarm::database {
class Database;
}  // namespace tunefarm::database
namespace tunefarm::costmodel {
class CostModel;
}

namespace tunefarm::tuner {

struct TuneTask {
  Workload workload;
  std::string text;   // canonical workload text (what is measured and stored)
  std::string hash;   // structural hash
  double weight = 1;  // occurrences in the job
};
Result<TuneTask> MakeTuneTask(const Workload& w, double weight = 1);

struct TuneOptions {
  Target target;
  int trials = 200;           // total over all tasks, including resumed ones
  int batch_size = 16;
  SearchOptions search;
  // measure.num_threads > 0 overrides target.num_threads when timing, and the
  // records are then keyed by it (RecordTargetForRun): a kernel timed at one
  // thread count never competes with, or resumes, a log timed at another.
  MeasureOptions measure;
  uint64_t seed = 1;
  std::string config_dir;     // sketch rule sets (configs/)
  // The instruction names, and loop annotation keys (no instruction shares a
  // name with one), every measuring worker replays (FleetDispatcher::
  // CommonInstructions and CommonLoopAnnotations, read at job start); unset:
  // any. Without pad_input the padding rule is off, without
  // pragma_dot_product the int8 dot products (MakeSketchPolicy).
  std::optional<std::set<std::string>> replayable_instructions;
  // Records of other workloads (same target and device) the cost model learns
  // from before the first batch; 0 turns transfer off.
  int warm_start_records = 1000;
  std::string worker_name = "local";  // records' worker when the measurer names none
  // The hardware that measures, when it is not this machine (fleet workers
  // report theirs); records carry it. Unset: this machine's (RecordTarget).
  std::optional<database::HardwareFingerprint> device_fingerprint;
  // The hardware and toolchain of the worker that measured a result
  // (MeasureResult::worker), when it may differ from device_fingerprint: the
  // workers of a fleet key run mixed versions while it is upgraded. Each
  // record carries what measured it. Unset, or nullopt for a worker: the
  // run's fingerprint (RecordTargetForRun). Resuming compares records with
  // the run's fingerprint, so another version's records are stale then.
  std::function<std::optional<database::HardwareFingerprint>(const std::string& worker)> worker_fingerprint;
  std::string device = "cpu";         // records' device; resuming reads only this device's records
  // The measurer invents its times (a fleet key of test devices): the run's
  // records are synthetic (never ranked or served by the log), and it
  // resumes from, and warm-starts its model with, synthetic records only. A
  // measuring run (false) never reads a synthetic record, so invented times
  // neither count as its trials nor set its best.
  bool synthetic = false;
  // Measure a new best again (one trial of the task's next batch, its own
  // record; the search leaves two trials per task, at most a quarter of the
  // budget, for the closing round, which measures again the fastest trace still
  // measured once -- a best of the search's last batch first; should the
  // best then still have one measurement (a confirmation fell back and
  // handed the lead to another trace measured once), it is measured again
  // past the budget, so no run that ends on its own ends on a best measured
  // once; a run stopped early measures its best first when resumed; in a
  // job of several workloads a task's best waits for the scheduler to pick
  // that task again) so that it
  // ranks by the mean of two measurements, not by its luckiest one: among
  // kernels within a few percent of each other, the fastest single time is
  // mostly the one the machine's noise favoured. Off: nothing is measured
  // again, so each new trace ranks by its one measurement (traces the log
  // already holds several records of still rank by their mean).
  bool confirm_best = true;
  // The final round: once the search has spent its share of `trials`, each
  // task's `final_candidates` fastest traces (by mean; the untuned default
  // never) are measured again, in fresh builds and interleaved, until each
  // has `final_measurements` records; then the next fastest, round after
  // round, until the budget is spent. The best handed out (by the tuning
  // log, `tunefarm compile`) is then the fastest by the mean of several
  // measurements, not the luckiest of hundreds. Its trials come out of
  // `trials`: the search leaves twice what the leaders owe (16 trials per
  // task by default), never more than an eighth of the budget, and a log
  // already at its budget measures none. Each trace at most once per run.
  // final_candidates 0 (the default), or final_measurements below 2: no
  // final round. Off by default: on a machine whose speed drifts during a
  // run, the finalists' new times come from another stretch than the
  // records they are ranked against, and a trace measured once in a faster
  // stretch can overtake them (docs/tuning-benchmarks.md, "The final round").
  int final_candidates = 0;
  int final_measurements = 3;
};

struct TaskStatus {
  std::string name;
  std::string hash;
  double flops = 0;
  double weight = 1;  // the task's TuneTask::weight, as the task scheduler weighs it
  int trials = 0;
  int errors = 0;
  double best_seconds = 0;     // 0: nothing succeeded yet
  int64_t best_record_id = 0;
  std::string best_trace;
  double default_seconds = 0;  // 0: not measured
  std::vector<std::pair<int, double>> curve;  // (trials of this task, best GFLOP/s)
  // The log's records that seeded the search and were written by an older
  // sketch: realigned with the current one (EvolutionarySearch::Realign), or
  // mutated as written because no single edit explains them.
  int realigned_seeds = 0;
  int unaligned_seeds = 0;
  // Resumed records of another fingerprint: timed with code of another
  // toolchain (an older tunefarm, another LLVM) or on other hardware. They
  // count as trials and seed the search, but set neither the best nor the
  // baseline; the fastest of them (up to kRefreshLimit) are measured again.
  int stale_records = 0;
  std::string stale_from;  // what differs, e.g. "code of toolchain 'llvm-16'"
  int refreshed = 0;       // stale records measured again by this run
  int confirmations = 0;   // trials that measured a trace again (new bests, the final round), resumed ones too
  int finalists = 0;       // traces this run's final round measured again (TuneOptions::final_candidates)
  int final_trials = 0;    // the trials it took
};

struct Progress {
  int trials_done = 0;
  int trials_total = 0;
  int resumed_trials = 0;
  double elapsed_s = 0;
  double eta_s = 0;
  const std::vector<TaskStatus>* tasks = nullptr;
  size_t last_task = 0;
  bool final_round = false;  // the search is done; the fastest kernels are being measured again
  // The last batch's machine speed (MachineSpeed): 1 the fastest this run
  // has seen, 0.8 a fifth slower; 0 when its results carried no probe.
  double machine_speed = 0;
};

// How many of a task's resumed stale records (TaskStatus::stale_records) a
// run measures again before searching: the fastest ones not yet timed anew.
inline constexpr int kRefreshLimit = 8;

// The log's record target for code built for `t` and run on this machine.
database::Target RecordTarget(const Target& t);

class TuningLoop {
 public:
  // db, measurer and model must outlive the loop; model may be null (random search).
  TuningLoop(TuneOptions options, database::Database* db, Measurer* measurer, costmodel::CostModel* model);
  ~TuningLoop();

  Status Run(std::vector<TuneTask> tasks, const std::atomic<bool>& stop,
             const std::function<void(const Progress&)>& on_progress);
  const std::vector<TaskStatus>& status() const { return status_; }
  // Transfer: records of other workloads the model was warm-started with.
  int transfer_records() const { return transfer_records_; }
  int transfer_workloads() const { return transfer_workloads_; }
  // How fast the machine ran, batch by batch (every measured batch of this run).
  const MachineSpeed& machine_speed() const { return machine_speed_; }

 private:
  struct TaskState;
  // `report(task, final_round)` after each measured batch: Progress to Run's on_progress.
  using Report = std::function<void(size_t task, bool final_round)>;

  // Run's steps, in order (tuning_loop.cpp).
  // The target's sketch rules; nothing of an earlier Run kept.
  Status Reset();
  // Transfer: the model learns from the log's records of other workloads
  // (TuneOptions::warm_start_records).
  Status WarmStartModel(const std::vector<TuneTask>& tasks);
  // Each task's state, its search (MakeSearchStrategy) and what the log
  // holds of it (Resume).
  Status StartTasks(std::vector<TuneTask> tasks);
  // The untuned default of each task that has no time yet, the baseline of
  // every speed-up.
  Status MeasureBaselines(const std::atomic<bool>& stop);
  Report MakeReport(int resumed_trials, const std::function<void(const Progress&)>& on_progress);
  // Search rounds while the search's share of the budget lasts and some
  // task's space has programs left.
  Status SearchRounds(const std::atomic<bool>& stop, const Report& report);
  // One round of task i: its best measured once, if any, and up to `want`
  // candidates in all, measured. Marks the task exhausted when its search
  // found nothing new. False when there was nothing to measure.
  Result<bool> SearchRound(size_t i, int want, CandidateScorer& scorer, std::vector<bool>& exhausted);
  // Up to n new candidates from task i's search, seeded by its fastest traces.
  Result<std::vector<Candidate>> ProposeCandidates(size_t i, int n, CandidateScorer& scorer);
  // Trials of every task, resumed ones too.
  int TrialsDone() const;

  // Reading a task's records back from the log (tuning_resume.cpp).
  Status Resume(TaskState& state, TaskStatus& status);
  // Measures again the fastest stale records that beat this run's best (up to
  // kRefreshLimit), then hands the rest to the search as seeds.
  Status RefreshStaleRecords(TaskState& state, TaskStatus& status);
  // RecordTarget of options_.target with the thread count the records are
  // timed at, and the measuring device's fingerprint when it is not this machine.
  database::Target RecordTargetForRun() const;
  // The first `confirmations` candidates of the batch measure again a best
  // measured once (each trace at most once): recorded like the others, not
  // taught to the cost model a second time.
  // Its steps and NoteUnconfirmedBest are in tuning_measure.cpp.
  Status MeasureAndRecord(TaskState& state, TaskStatus& status, std::vector<Candidate> batch,
                          const MeasureOptions& measure, size_t confirmations = 0);
  // One result per input, or Cancelled when the measurer gave up on the batch.
  Result<std::vector<MeasureResult>> MeasureBatch(const std::vector<MeasureInput>& inputs, const MeasureOptions& measure);
  // The batch's machine speed (MachineSpeed), from its results' speed probes.
  void NoteMachineSpeed(const TaskState& state, const TaskStatus& status, const std::vector<Candidate>& batch,
                        const std::vector<MeasureResult>& results);
  // The log's records of the batch's results.
  std::vector<database::TuningRecord> RecordsOf(const TaskState& state, const std::vector<MeasureInput>& inputs,
                                                const std::vector<MeasureResult>& results) const;
  // Notes one result of candidate `c` (its trace text, its record's id): a
  // trial, an error, or a time of the trace. The time when it ran and is a
  // measured one.
  std::optional<double> NoteResult(TaskState& state, TaskStatus& status, const Candidate& c, const std::string& text,
                                   const MeasureResult& result, int64_t record_id);
  // After a batch's results: the search's seeds in order, the best to measure
  // again, the task's history and curve.
  void NoteBatchDone(TaskState& state, TaskStatus& status, const std::vector<Candidate>& batch);
  // Sets state.unconfirmed_best when the task's best has one measurement and
  // was never measured again: the candidate of `batch` with its trace, else
  // its replay. With options_.confirm_best only; the untuned default never.
  void NoteUnconfirmedBest(TaskState& state, const TaskStatus& status, const std::vector<Candidate>& batch);
  // The closing round (the final round of TuneOptions::final_candidates, or
  // the last confirmation of confirm_best), in final_round.cpp.
  // Trials the search leaves for the closing round.
  int FinalReserve() const;
  // Measures each task's fastest traces again, round after round, while the
  // budget lasts; a finalist measured slower lets the next trace in.
  // `report(task, final_round)` after each measured batch.
  Status RunFinalRound(const std::atomic<bool>& stop, const Report& report);
  // Measures again, one at a time and past the budget if need be, each
  // task's best while it has a single measurement (a confirmation that
  // fell back hands the lead to another such trace).
  Status ConfirmLastBests(const std::atomic<bool>& stop, const Report& report);

  TuneOptions options_;
  database::Database* db_;
  Measurer* measurer_;
  costmodel::CostModel* model_;
  std::unique_ptr<SketchPolicy> policy_;
  std::vector<std::unique_ptr<TaskState>> states_;
  std::vector<TaskStatus> status_;
  int transfer_records_ = 0;
  int transfer_workloads_ = 0;
  MachineSpeed machine_speed_;
  double last_machine_speed_ = 0;  // Progress::machine_speed
};

}  // namespace tunefarm::tuner
