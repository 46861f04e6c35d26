// JobManager: the daemon's tuning jobs.
//
// A job is a set of workloads, a target, a device key and a trial budget. It
// is stored in the tuning log's job table when submitted, waits (pending,
// holding no running slot) until a worker of its device key is connected,
// failing after JobManagerOptions::device_key_wait_s, then runs a TuningLoop
// on its own thread measuring through the fleet (FleetMeasurer; wrapped in a
// TunerSideBuildMeasurer when its device key is tuner-built), and updates
// its stored state after every batch. Its measurements are ordinary records,
// committed batch by batch, so a daemon killed at any point loses nothing
// committed and, restarted, resumes every job still pending or running
// (ResumeStored): the loop counts the job's records in the log as done.
//
// Thread safety: all methods may be called from any thread. Lifetime: the
// database and the dispatcher must outlive the manager; Drain() or the
// destructor stops every job thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/database/job.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/job_spec.h"
#include "tunefarm/daemon/tuner_side_build.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::database {
class Database;
}

namespace tunefarm::daemon {

// A job as callers see it.
struct JobView {
  database::JobState state;
  std::string device_key;
  std::vector<tuner::TaskStatus> tasks;  // empty until the job has started
  double elapsed_s = 0, eta_s = 0;
  uint64_t version = 0;           // grows on every change
  // Set while the job waits for a worker of its device key (none connected):
  // names the key and the keys the fleet serves. Not stored in the log.
  std::string warning;
  bool finished() const;
};

struct JobManagerOptions {
  std::string config_dir;   // sketch rule sets
  int max_running_jobs = 8; // more wait as pending
  // How long a job waits for a worker of its device key when none is
  // connected ([limits] device_key_wait_s), pending and without a running
  // slot, before it fails naming the key and the keys the fleet serves.
  double device_key_wait_s = 600;
  // Device keys whose candidates the daemon builds and sends to the workers as
  // objects (fleet.toml [builders] tuner_built), and how it builds them.
  std::set<std::string> tuner_built_device_keys;
  TunerSideBuildOptions tuner_build;
};

class JobManager {
 public:
  JobManager(database::Database* db, FleetDispatcher* fleet, JobManagerOptions options);
  ~JobManager();

  // Starts every stored job that is pending or running. Returns how many.
  Result<int> ResumeStored();
  // Validates, stores and starts a job. `job_id` empty: generated.
  // AlreadyExists if the id is taken.
  Result<JobView> Submit(const JobSpec& spec, std::string job_id);
  // The id of an unfinished job of this process with the same workloads,
  // target and device key, else of a job submitted now (what a compile miss
  // with tune_on_miss asks for: many clients missing at once start one job).
  Result<std::string> SubmitOrJoin(const JobSpec& spec);
  Result<JobView> Get(const std::string& job_id);
  Result<std::vector<JobView>> List(std::optional<database::JobStatus> status);
  // Stops the job after the batch in flight (abandoning it if it does not end
  // within a few seconds) and marks it cancelled. Finished jobs are unchanged.
  Result<JobView> Cancel(const std::string& job_id);
  // Waits until the job's version exceeds `seen` (or it is finished, or
  // `timeout_s` passes) and returns its view.
  Result<JobView> WaitForChange(const std::string& job_id, uint64_t seen, double timeout_s);
  // Stops taking jobs; lets batches in flight finish for up to `timeout_s`,
  // then abandons them. Stopped jobs stay "running" in the log, to be resumed.
  void Drain(double timeout_s);

 private:
  struct Job;
  void Start(std::shared_ptr<Job> job);
  // A job's thread, in steps: WaitForDeviceKey, TakeRunningSlot, Tune, Finish.
  void RunJob(std::shared_ptr<Job> job);
  // Waits, holding no running slot, until a worker of the job's key is
  // connected; FailedPrecondition naming the key once device_key_wait_s
  // passes. OK also when the job is stopped meanwhile.
  Status WaitForDeviceKey(Job& job);
  // Waits for one of max_running_jobs slots and marks the job running; false
  // (no slot taken) when the job is stopped first.
  bool TakeRunningSlot(Job& job);
  // Stores the running state, then tunes the job's workloads through the
  // fleet on its device key's workers until the budget is spent or the job is
  // stopped. OK when stopped before it started.
  Status Tune(Job& job);
  // The job's TuneOptions on `device`'s workers, for `target` (a plain "llvm"
  // spec resolved to their CPU); `build_here`: the daemon builds the
  // candidates (tuner-built device key).
  tuner::TuneOptions JobTuneOptions(const Job& job, const WorkerInfo& device, const Target& target, bool build_here);
  // The view and the stored state after a batch.
  void NoteProgress(Job& job, const tuner::Progress& progress);
  // The job's final state from the run's status (cancelled, draining: kept
  // for a restart, done, failed), stored; frees its slot; ends it.
  void Finish(Job& job, const Status& st, bool got_slot);
  // The warning of a job whose key no connected worker serves.
  std::string UnservedKeyWarning(const std::string& device_key);
  Status Store(Job& job);  // writes state to the log; requires the job's lock not held

  database::Database* db_;
  FleetDispatcher* fleet_;
  const JobManagerOptions options_;
  std::mutex submit_mu_;  // serializes SubmitOrJoin's look-then-submit
  std::mutex mu_;
  std::condition_variable cv_;                       // job changes and free run slots
  std::map<std::string, std::shared_ptr<Job>> jobs_;  // GUARDED_BY(mu_): jobs started by this process
  int running_ = 0;                                   // GUARDED_BY(mu_)
  bool draining_ = false;                             // GUARDED_BY(mu_)
};

}  // namespace tunefarm::daemon
