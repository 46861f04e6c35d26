// Tuning jobs on the daemon (job_manager.h). Map:
//   Submit / ResumeStored / Start     -- creating and starting job threads; the workloads parsed once
//   WaitForDeviceKey                  -- a job whose key no worker serves waits, bounded, holding no slot
//   RunJob                            -- one job, in named steps: a slot, its tuning (job_tuning.cpp), the end
//   Get / List / Cancel / WaitForChange / Drain
#include "tunefarm/daemon/job_manager.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "job.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/record.h"

namespace tunefarm::daemon {

using tuner::Progress;
using tuner::TuneTask;

namespace {

// "600 s", "0.25 s".
std::string Seconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

// "cpu-znver4, test"; says so when no worker is connected at all.
std::string KeyList(const std::vector<std::string>& keys) {
  if (keys.empty()) return "none (no worker is connected)";
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

bool JobView::finished() const {
  using database::JobStatus;
  return state.status == JobStatus::kDone || state.status == JobStatus::kFailed ||
         state.status == JobStatus::kCancelled;
}

JobManager::JobManager(database::Database* db, FleetDispatcher* fleet, JobManagerOptions options)
    : db_(db), fleet_(fleet), options_(std::move(options)) {}

JobManager::~JobManager() { Drain(0); }

Status JobManager::Store(Job& job) {
  database::JobState state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state = job.view.state;
  }
  return db_->UpdateJob(state);
}

Result<JobView> JobManager::Submit(const JobSpec& spec, std::string job_id) {
  TF_ASSIGN_OR_RETURN(std::vector<TuneTask> tasks, ParseJobSpec(spec));
  if (job_id.empty()) job_id = "job-" + database::NewRecordUid().substr(16);
  TF_RETURN_IF_ERROR(ValidateJobId(job_id));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (draining_) return Status::Unavailable("the daemon is shutting down; submit the job again after its restart");
  }
  auto job = std::make_shared<Job>();
  job->spec = spec;
  job->tasks = std::move(tasks);
  job->view.device_key = spec.device_key;
  database::JobState& st = job->view.state;
  st.id = job_id;
  st.status = database::JobStatus::kPending;
  st.target = spec.target;
  st.spec = JobSpecToJson(spec);
  st.progress = "{}";
  st.trial_budget = spec.trials;
  TF_RETURN_IF_ERROR(db_->CreateJob(st));  // AlreadyExists when the id is taken
  TF_ASSIGN_OR_RETURN(auto stored, db_->GetJob(job_id));
  if (stored) st = *stored;
  spdlog::info("jobs: {} submitted ({} workload(s), {} trials, device key {})", job_id, spec.workloads.size(),
               spec.trials, spec.device_key);
  // Said in the reply, so a mistyped key shows at once (the job thread
  // clears it when a worker of the key connects).
  if (fleet_->WorkerCount(spec.device_key) == 0) job->view.warning = UnservedKeyWarning(spec.device_key);
  Start(job);
  return Get(job_id);
}

Result<std::string> JobManager::SubmitOrJoin(const JobSpec& spec) {
  std::lock_guard<std::mutex> serial(submit_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, job] : jobs_) {
      if (job->ended || job->view.finished()) continue;
      if (job->spec.workloads == spec.workloads && job->spec.target == spec.target &&
          job->spec.device_key == spec.device_key) {
        return id;
      }
    }
  }
  TF_ASSIGN_OR_RETURN(JobView view, Submit(spec, ""));
  return view.state.id;
}

Result<int> JobManager::ResumeStored() {
  TF_ASSIGN_OR_RETURN(auto stored, db_->ListJobs());
  int resumed = 0;
  for (const database::JobState& st : stored) {
    if (st.status != database::JobStatus::kPending && st.status != database::JobStatus::kRunning) continue;
    auto spec = JobSpecFromJson(st.spec);
    auto job = std::make_shared<Job>();
    job->view.state = st;
    if (!spec.ok()) {
      job->view.state.status = database::JobStatus::kFailed;
      job->view.state.error = spec.status().message();
      TF_RETURN_IF_ERROR(db_->UpdateJob(job->view.state));
      continue;
    }
    job->spec = *spec;
    auto tasks = ParseJobWorkloads(*spec);
    if (tasks.ok()) {
      job->tasks = std::move(tasks).value();
    } else {
      job->tasks_status = tasks.status();
    }
    job->view.device_key = spec->device_key;
    job->view.tasks = JobProgressFromJson(st.progress);
    spdlog::info("jobs: resuming {} ({} of {} trials done)", st.id, st.trials_done, st.trial_budget);
    Start(job);
    ++resumed;
  }
  return resumed;
}

void JobManager::Start(std::shared_ptr<Job> job) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[job->view.state.id] = job;
  job->thread = std::thread([this, job] { RunJob(job); });
}

std::string JobManager::UnservedKeyWarning(const std::string& device_key) {
  return "no connected worker serves device key '" + device_key + "' (served keys: " +
         KeyList(fleet_->ServedKeys()) + "); the job waits up to " + Seconds(options_.device_key_wait_s) +
         " for one, pending, without taking a running slot";
}

Status JobManager::WaitForDeviceKey(Job& job) {
  const std::string& key = job.spec.device_key;
  Status st = Status::OK();
  if (fleet_->WorkerCount(key) == 0 && !job.stop) {
    std::string warning = UnservedKeyWarning(key);
    spdlog::warn("jobs: {}: {}", job.view.state.id, warning);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job.view.warning = std::move(warning);
      ++job.view.version;
    }
    cv_.notify_all();
    // Outside mu_: other jobs take and free slots meanwhile.
    const auto wait = std::chrono::milliseconds(std::llround(options_.device_key_wait_s * 1000));
    if (!fleet_->WaitForWorker(key, wait, &job.stop) && !job.stop) {
      st = Status::FailedPrecondition("no worker served device key '" + key + "' within " +
                                      Seconds(options_.device_key_wait_s) +
                                      "; served keys: " + KeyList(fleet_->ServedKeys()));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!job.view.warning.empty()) {
      job.view.warning.clear();
      ++job.view.version;
    }
  }
  cv_.notify_all();
  return st;
}

void JobManager::RunJob(std::shared_ptr<Job> job) {
  // A job whose key no worker serves waits here, pending: it must not hold
  // one of the max_running_jobs slots that jobs with workers need.
  Status st = WaitForDeviceKey(*job);
  const bool got_slot = st.ok() && TakeRunningSlot(*job);
  if (got_slot && !job->stop) st = Tune(*job);
  Finish(*job, st, got_slot);
}

bool JobManager::TakeRunningSlot(Job& job) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return running_ < options_.max_running_jobs || job.stop; });
  if (job.stop) return false;
  ++running_;
  job.view.state.status = database::JobStatus::kRunning;
  ++job.view.version;
  return true;
}

void JobManager::NoteProgress(Job& job, const Progress& p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job.view.tasks = *p.tasks;
    job.view.state.trials_done = p.trials_done;
    job.view.state.progress = JobProgressToJson(*p.tasks);
    job.view.elapsed_s = p.elapsed_s;
    job.view.eta_s = p.eta_s;
    ++job.view.version;
  }
  cv_.notify_all();
  Status s = Store(job);
  if (!s.ok()) spdlog::error("jobs: {}: cannot store progress: {}", job.view.state.id, s.message());
}

void JobManager::Finish(Job& job, const Status& st, bool got_slot) {
  const std::string& id = job.view.state.id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    database::JobState& state = job.view.state;
    bool completed = st.ok() && state.trials_done >= state.trial_budget;
    bool draining = job.stop && !job.cancelled && !completed;
    if (job.cancelled) {
      state.status = database::JobStatus::kCancelled;
    } else if (draining) {
      // Shutting down: stays pending/running in the log, resumed on restart.
    } else if (st.ok()) {
      state.status = database::JobStatus::kDone;
    } else {
      state.status = database::JobStatus::kFailed;
      state.error = st.message();
    }
    ++job.view.version;
  }
  Status stored = Store(job);
  if (!stored.ok()) spdlog::error("jobs: {}: cannot store its final state: {}", id, stored.message());
  spdlog::info("jobs: {} {} ({} of {} trials){}", id, database::JobStatusName(job.view.state.status),
               job.view.state.trials_done, job.view.state.trial_budget, st.ok() ? "" : ": " + st.message());
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (got_slot) --running_;
    job.ended = true;
  }
  cv_.notify_all();
}

Result<JobView> JobManager::Get(const std::string& job_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it != jobs_.end()) return it->second->view;
  }
  TF_ASSIGN_OR_RETURN(auto stored, db_->GetJob(job_id));
  if (!stored) return Status::NotFound("no job '" + job_id + "'");
  JobView view;
  view.state = *stored;
  view.tasks = JobProgressFromJson(stored->progress);
  if (auto spec = JobSpecFromJson(stored->spec); spec.ok()) view.device_key = spec->device_key;
  return view;
}

Result<std::vector<JobView>> JobManager::List(std::optional<database::JobStatus> status) {
  TF_ASSIGN_OR_RETURN(auto stored, db_->ListJobs(status));
  std::vector<JobView> out;
  for (const database::JobState& st : stored) {
    TF_ASSIGN_OR_RETURN(JobView v, Get(st.id));
    if (!status || v.state.status == *status) out.push_back(std::move(v));
  }
  return out;
}

Result<JobView> JobManager::Cancel(const std::string& job_id) {
  std::shared_ptr<Job> job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it != jobs_.end() && !it->second->ended) {
      job = it->second;
      job->cancelled = true;
      job->stop = true;
      // The batch in flight is abandoned: its candidates were not recorded,
      // so nothing measured is lost, and the user does not wait for it.
      job->abort = true;
    }
  }
  cv_.notify_all();
  if (!job) {
    TF_ASSIGN_OR_RETURN(JobView view, Get(job_id));  // NotFound for unknown ids
    if (view.finished()) return view;
    // Stored as running by an earlier life but not started here (draining).
    view.state.status = database::JobStatus::kCancelled;
    TF_RETURN_IF_ERROR(db_->UpdateJob(view.state));
    return view;
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::seconds(30), [&] { return job->ended; });
  return job->view;
}

Result<JobView> JobManager::WaitForChange(const std::string& job_id, uint64_t seen, double timeout_s) {
  std::shared_ptr<Job> job;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it != jobs_.end()) {
      job = it->second;
      cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                   [&] { return job->view.version > seen || job->ended; });
      return job->view;
    }
  }
  return Get(job_id);
}

void JobManager::Drain(double timeout_s) {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    draining_ = true;
    for (auto& [id, job] : jobs_) {
      job->stop = true;
      jobs.push_back(job);
    }
  }
  cv_.notify_all();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
      for (const auto& j : jobs) {
        if (!j->ended) return false;
      }
      return true;
    });
  }
  for (auto& job : jobs) job->abort = true;
  for (auto& job : jobs) {
    if (job->thread.joinable()) job->thread.join();
  }
}

}  // namespace tunefarm::daemon
