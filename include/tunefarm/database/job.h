// JobState: what a tuning job needs stored so that a restarted tuner resumes it.
//
// The database treats `spec` and `progress` as opaque JSON text owned by the
// tuner (workloads, trial budget, options; per-task trial counts, search
// state). Unlike records, job rows are updated in place as the job advances.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/common/status.h"

namespace tunefarm::database {

enum class JobStatus { kPending, kRunning, kPaused, kDone, kFailed, kCancelled };

std::string_view JobStatusName(JobStatus status);  // "pending", "running", ...
Result<JobStatus> ParseJobStatus(std::string_view name);

struct JobState {
  std::string id;        // caller-chosen, unique: non-empty
  JobStatus status = JobStatus::kPending;
  std::string target;    // target string the job tunes for
  std::string spec;      // JSON: workloads, trial budget, options
  std::string progress;  // JSON: what has been done so far (resume point)
  int64_t trials_done = 0;
  int64_t trial_budget = 0;
  std::string error;          // why the job failed, if it did
  int64_t created_at_us = 0;  // set by CreateJob when 0
  int64_t updated_at_us = 0;  // set by CreateJob and UpdateJob

  bool operator==(const JobState&) const = default;
};

}  // namespace tunefarm::database
