// JobSpec: what a daemon job tunes, as submitted and as the job table stores
// it (JSON in JobState::spec), and the checks every entry that creates or
// names a job applies (SubmitJob, a compile miss's tuning job, the job id of
// every Tuner call); and the job's progress as the table stores it.
//
// A job's workloads are parsed once, when it is submitted (ParseJobSpec) or,
// after a restart, resumed (ParseJobWorkloads): the job keeps the typed
// workloads with their canonical text and structural hash (tuner::TuneTask)
// and never parses or prints its workload texts again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::daemon {

// The most workloads one job tunes (a model's tasks count one each).
inline constexpr size_t kMaxJobWorkloads = 64;

// What a job tunes. Stored as JSON in JobState::spec.
struct JobSpec {
  std::vector<std::string> workloads;  // workload texts
  // Each workload's weight for the task scheduler (tuner::TuneTask::weight):
  // a model's task weighs its calls. Empty: all 1; otherwise one per
  // workload, each finite and > 0.
  std::vector<double> workload_weights;
  std::string target = "llvm";
  std::string device_key;
  int trials = 200;
  int batch_size = 16;
  uint64_t seed = 1;
  int repeat = 3;
  double min_repeat_ms = 20;
  int num_threads = 0;
};

// Checks a spec (workloads parse, weights, target parses, ranges) and returns
// its workloads parsed, in order, each with its weight, as the tuning loop
// takes them. InvalidArgument names the field: "workloads[1]:
// <file:line:col: message>", "workload_weights[2]: ...".
Result<std::vector<tuner::TuneTask>> ParseJobSpec(const JobSpec& spec);
// ParseJobSpec's verdict alone.
Status ValidateJobSpec(const JobSpec& spec);
// The workloads of a stored spec (a job resumed after a restart), parsed as
// at submission, each with its stored weight; a text that no longer parses
// is the parser's error, its source named "workloads[i]". The weights are
// checked again (as at submission); the other fields are not.
Result<std::vector<tuner::TuneTask>> ParseJobWorkloads(const JobSpec& spec);

// A job id as every Tuner call takes it (SubmitJob's job_id, GetJob, WatchJob,
// CancelJob): 1 to 64 of [A-Za-z0-9_.-]. InvalidArgument naming `field` and
// quoting the value, bounded (common/quote.h).
Status ValidateJobId(std::string_view id, std::string_view field = "job_id");
// A spec stored before jobs had weights reads with none (all 1); stored
// weights whose count is not the workloads' are Corruption.
std::string JobSpecToJson(const JobSpec& spec);
Result<JobSpec> JobSpecFromJson(const std::string& json);

// A job's progress as JobState::progress stores it ({"tasks": [...]}): how a
// view of a job from an earlier daemon life gets its tasks back. Progress
// that does not read is no tasks.
std::string JobProgressToJson(const std::vector<tuner::TaskStatus>& tasks);
std::vector<tuner::TaskStatus> JobProgressFromJson(const std::string& progress);

}  // namespace tunefarm::daemon
