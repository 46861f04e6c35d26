// JobSpec validation, parsing and JSON, and a job's progress JSON (job_spec.h):
// every entry that creates or names a job checks it here, the same way.
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <sstream>
#include <string>

#include "tunefarm/common/quote.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/daemon/job_spec.h"

namespace tunefarm::daemon {

using nlohmann::json;

namespace {

constexpr size_t kMaxWorkloadBytes = 64 * 1024;

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Workload i of the spec, parsed, with its canonical text, structural hash
// and weight; the parser's error names it "workloads[i]". Callers have
// checked that the weights are none or one per workload.
Result<tuner::TuneTask> ParseJobWorkload(const JobSpec& spec, size_t i) {
  ParseOptions po;
  po.source_name = "workloads[" + std::to_string(i) + "]";
  TF_ASSIGN_OR_RETURN(Workload w, ParseWorkload(spec.workloads[i], po));
  return tuner::MakeTuneTask(w, spec.workload_weights.empty() ? 1.0 : spec.workload_weights[i]);
}

// None (all 1), or one per workload, each finite and > 0: the task
// scheduler multiplies a task's expected gain by it.
Status ValidateWeights(const JobSpec& spec) {
  const std::vector<double>& weights = spec.workload_weights;
  if (weights.empty()) return Status::OK();
  if (weights.size() != spec.workloads.size()) {
    return Status::InvalidArgument("workload_weights: " + std::to_string(weights.size()) + " given for " +
                                   std::to_string(spec.workloads.size()) +
                                   " workload(s); give one per workload, or none for all 1");
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] <= 0) {
      std::ostringstream got;
      got << weights[i];
      return Status::InvalidArgument("workload_weights[" + std::to_string(i) + "]: must be a finite number > 0, got " +
                                     got.str());
    }
  }
  return Status::OK();
}

json TasksToJson(const std::vector<tuner::TaskStatus>& tasks) {
  json arr = json::array();
  for (const tuner::TaskStatus& t : tasks) {
    arr.push_back({{"name", t.name}, {"hash", t.hash}, {"flops", t.flops}, {"trials", t.trials},
                   {"errors", t.errors}, {"best_seconds", t.best_seconds}, {"best_record_id", t.best_record_id},
                   {"default_seconds", t.default_seconds}, {"confirmations", t.confirmations},
                   {"weight", t.weight}});
  }
  return arr;
}

}  // namespace

Status ValidateJobId(std::string_view id, std::string_view field) {
  if (ValidId(std::string(id))) return Status::OK();
  if (id.empty()) return Status::InvalidArgument(std::string(field) + ": is required");
  return Status::InvalidArgument(std::string(field) + ": " + QuoteInput(id) + " is not a job id (use 1 to 64 of [A-Za-z0-9_.-])");
}

Result<std::vector<tuner::TuneTask>> ParseJobWorkloads(const JobSpec& spec) {
  // JobSpecFromJson refuses a stored count that does not match; a spec built
  // otherwise is checked here, so no weight is read past the end.
  TF_RETURN_IF_ERROR(ValidateWeights(spec));
  std::vector<tuner::TuneTask> tasks;
  for (size_t i = 0; i < spec.workloads.size(); ++i) {
    TF_ASSIGN_OR_RETURN(tuner::TuneTask task, ParseJobWorkload(spec, i));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Status ValidateJobSpec(const JobSpec& spec) { return ParseJobSpec(spec).status(); }

Result<std::vector<tuner::TuneTask>> ParseJobSpec(const JobSpec& spec) {
  if (spec.workloads.empty()) return Status::InvalidArgument("workloads: a job needs at least one workload");
  if (spec.workloads.size() > kMaxJobWorkloads) {
    return Status::InvalidArgument("workloads: at most " + std::to_string(kMaxJobWorkloads) + " per job, got " +
                                   std::to_string(spec.workloads.size()));
  }
  TF_RETURN_IF_ERROR(ValidateWeights(spec));
  std::vector<tuner::TuneTask> tasks;
  for (size_t i = 0; i < spec.workloads.size(); ++i) {
    if (spec.workloads[i].size() > kMaxWorkloadBytes) {
      return Status::InvalidArgument("workloads[" + std::to_string(i) + "]: larger than 64 KiB");
    }
    auto task = ParseJobWorkload(spec, i);
    if (!task.ok()) return Status::InvalidArgument(task.status().message());
    tasks.push_back(std::move(task).value());
  }
  auto target = ParseTargetField("target", spec.target);
  if (!target.ok()) return target.status();
  if (spec.device_key.empty()) return Status::InvalidArgument("device_key: required (the workers that measure the job)");
  for (char c : spec.device_key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != ':') {
      return Status::InvalidArgument("device_key: may hold only letters, digits and - _ . :");
    }
  }
  if (spec.device_key.size() > 128) return Status::InvalidArgument("device_key: longer than 128 characters");
  if (spec.trials < 1 || spec.trials > 100000) return Status::InvalidArgument("trials: must be in 1..100000");
  if (spec.batch_size < 1 || spec.batch_size > 1024) return Status::InvalidArgument("batch_size: must be in 1..1024");
  if (spec.repeat < 1 || spec.repeat > 100) return Status::InvalidArgument("measure.repeat: must be in 1..100");
  if (!(spec.min_repeat_ms >= 0 && spec.min_repeat_ms <= 10000)) {
    return Status::InvalidArgument("measure.min_repeat_ms: must be in 0..10000");
  }
  if (spec.num_threads < 0 || spec.num_threads > 1024) return Status::InvalidArgument("measure.num_threads: must be in 0..1024");
  return tasks;
}

std::string JobSpecToJson(const JobSpec& s) {
  json j = {{"workloads", s.workloads}, {"target", s.target}, {"device_key", s.device_key},
            {"trials", s.trials}, {"batch_size", s.batch_size}, {"seed", s.seed},
            {"repeat", s.repeat}, {"min_repeat_ms", s.min_repeat_ms}, {"num_threads", s.num_threads}};
  // Written only when set: a spec without weights reads the same to a daemon
  // from before weights.
  if (!s.workload_weights.empty()) j["workload_weights"] = s.workload_weights;
  return j.dump();
}

Result<JobSpec> JobSpecFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("a stored job spec is not a JSON object");
  JobSpec s;
  try {
    s.workloads = j.at("workloads").get<std::vector<std::string>>();
    s.target = j.at("target").get<std::string>();
    s.device_key = j.at("device_key").get<std::string>();
    s.trials = j.at("trials").get<int>();
    s.batch_size = j.at("batch_size").get<int>();
    s.seed = j.at("seed").get<uint64_t>();
    s.repeat = j.at("repeat").get<int>();
    s.min_repeat_ms = j.at("min_repeat_ms").get<double>();
    s.num_threads = j.at("num_threads").get<int>();
    // Absent in specs stored before jobs had weights: all 1.
    if (j.contains("workload_weights")) s.workload_weights = j.at("workload_weights").get<std::vector<double>>();
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("a stored job spec is incomplete: ") + e.what());
  }
  if (!s.workload_weights.empty() && s.workload_weights.size() != s.workloads.size()) {
    return Status::Corruption("a stored job spec has " + std::to_string(s.workload_weights.size()) +
                              " workload weights for " + std::to_string(s.workloads.size()) + " workloads");
  }
  return s;
}

std::string JobProgressToJson(const std::vector<tuner::TaskStatus>& tasks) {
  return json{{"tasks", TasksToJson(tasks)}}.dump();
}

std::vector<tuner::TaskStatus> JobProgressFromJson(const std::string& progress) {
  std::vector<tuner::TaskStatus> tasks;
  json j = json::parse(progress, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array()) return tasks;
  for (const json& t : j["tasks"]) {
    if (!t.is_object()) continue;
    tuner::TaskStatus s;
    s.name = t.value("name", "");
    s.hash = t.value("hash", "");
    s.flops = t.value("flops", 0.0);
    s.trials = t.value("trials", 0);
    s.errors = t.value("errors", 0);
    s.best_seconds = t.value("best_seconds", 0.0);
    s.best_record_id = t.value("best_record_id", int64_t(0));
    s.default_seconds = t.value("default_seconds", 0.0);
    s.confirmations = t.value("confirmations", 0);
    s.weight = t.value("weight", 1.0);  // progress stored before jobs had weights: 1
    tasks.push_back(std::move(s));
  }
  return tasks;
}

}  // namespace tunefarm::daemon
