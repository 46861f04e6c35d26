// A tuning job as the daemon's JobManager holds it (job_manager.cpp runs its
// life, job_tuning.cpp its tuning loop). Private to daemon/.
//
// Ownership: JobManager::jobs_ holds each Job by shared_ptr; the job's thread
// holds another until it ends. Fields marked GUARDED_BY are read and written
// under JobManager::mu_; the rest are set before the thread starts, except
// the atomics.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/daemon/job_manager.h"

namespace tunefarm::daemon {

struct JobManager::Job {
  JobSpec spec;
  // The spec's workloads, parsed once (at submission, or when resumed), with
  // their canonical texts and hashes: what the tuning loop tunes.
  std::vector<tuner::TuneTask> tasks;
  // Why a resumed job's stored workloads no longer parse: the job fails with
  // it when it would start tuning.
  Status tasks_status;
  JobView view;                      // GUARDED_BY(JobManager::mu_)
  std::atomic<bool> stop{false};     // end after the batch in flight
  std::atomic<bool> abort{false};    // abandon the batch in flight
  bool cancelled = false;            // GUARDED_BY(JobManager::mu_): by a user
  bool ended = false;                // GUARDED_BY(JobManager::mu_): its thread is done
  std::thread thread;
};

}  // namespace tunefarm::daemon
