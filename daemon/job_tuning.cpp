// One job's tuning loop on the daemon (JobManager::Tune, job_manager.h):
// what the device key's workers are, the TuneOptions the job tunes with
// (what every worker of the key replays, the fingerprints its records name),
// the measurer -- the fleet, or candidates built here for a tuner-built key --
// and what the job's log says once the loop has run.
#include <spdlog/spdlog.h>

#include "job.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/daemon/job_manager.h"

namespace tunefarm::daemon {

using tuner::MachineSpeed;
using tuner::Progress;
using tuner::TaskStatus;
using tuner::TuneOptions;
using tuner::TuningLoop;

namespace {

// What a job's log says once its loop has run: stale records measured again,
// batches timed on a slowed worker, the cost model's transfer dropped.
void LogTuningSummary(const std::string& id, const TuningLoop& loop, const costmodel::XGBoostCostModel& model) {
  for (const TaskStatus& t : loop.status()) {
    if (t.stale_records == 0) continue;
    spdlog::info("jobs: {}: {}: {} of the log's records were timed with {}; measured the {} fastest of them again",
                 id, t.name, t.stale_records, t.stale_from, t.refreshed);
  }
  // Compared per worker: each machine of the key against its own fastest probe.
  const MachineSpeed::Summary speed = loop.machine_speed().Summarize();
  if (speed.slow_batches > 0) {
    spdlog::warn("jobs: {}: {} of {} batches ({} kernels) were timed while a worker ran below {:.0f}% of its "
                 "fastest speed in this job, the slowest at {:.0f}% (speed probe): those kernels look slower "
                 "than they are",
                 id, speed.slow_batches, speed.batches, speed.slow_results, MachineSpeed::kSlowSpeed * 100,
                 speed.slowest * 100);
  }
  const costmodel::TransferReport& transfer = model.transfer_report();
  if (transfer.dropped) {
    spdlog::info("jobs: {}: the cost model dropped its {} transfer records after {} own records (pairwise on {} "
                 "measured pairs: {:.2f} own records alone, {:.2f} with transfer)",
                 id, transfer.transfer_records, transfer.own_records_at_drop, transfer.pairs, transfer.own_only,
                 transfer.with_transfer);
  }
}

}  // namespace

Status JobManager::Tune(Job& job) {
  TF_RETURN_IF_ERROR(Store(job));
  TF_RETURN_IF_ERROR(job.tasks_status);
  // What the device key's workers are: records carry their fingerprint, and
  // a target of plain "llvm" means their CPU, not this daemon's.
  std::optional<WorkerInfo> device;
  while (!device && !job.stop) {
    device = fleet_->DeviceKeyInfo(job.spec.device_key, std::chrono::seconds(1), &job.stop);
  }
  std::string target_text = job.spec.target;
  if (device && job.spec.target == "llvm" && !device->host_target.empty()) target_text = device->host_target;
  TF_ASSIGN_OR_RETURN(Target target, Target::Parse(target_text));
  if (!device || job.stop) return Status::OK();  // stopped while waiting

  const bool build_here = options_.tuner_built_device_keys.count(job.spec.device_key) > 0;
  TuneOptions options = JobTuneOptions(job, *device, target, build_here);
  FleetMeasurer fleet_measurer(fleet_, job.spec.device_key, &job.abort);
  TunerSideBuildMeasurer tuner_built(&fleet_measurer, options_.tuner_build);
  Measurer* measurer = build_here ? static_cast<Measurer*>(&tuner_built) : &fleet_measurer;
  costmodel::XGBoostCostModel model;
  TuningLoop loop(options, db_, measurer, &model);
  Status st = loop.Run(job.tasks, job.stop, [&](const Progress& p) { NoteProgress(job, p); });
  LogTuningSummary(job.view.state.id, loop, model);
  return st;
}

namespace {

// The instruction names and loop annotation keys every connected worker of
// `device_key` replays, as the search takes them (TuneOptions::
// replayable_instructions); unset when none of them is limited. Logs a
// warning for each rule's instruction and each annotation one of them lacks.
std::optional<std::set<std::string>> ReplayableByEveryWorker(FleetDispatcher& fleet, const std::string& id,
                                                              const std::string& device_key) {
  std::optional<std::set<std::string>> instructions = fleet.CommonInstructions(device_key);
  std::optional<std::set<std::string>> annotations = fleet.CommonLoopAnnotations(device_key);
  if (!instructions && !annotations) return std::nullopt;
  std::set<std::string> out = instructions.value_or(
      std::set<std::string>(ReplayedInstructionNames().begin(), ReplayedInstructionNames().end()));
  for (InstructionKind rule : {InstructionKind::kPadInput, InstructionKind::kPadAxis, InstructionKind::kSplitPhases}) {
    if (out.count(InstructionName(rule))) continue;
    spdlog::warn("jobs: {}: a worker of device key {} runs an older tunefarm that cannot replay {}: "
                 "this job's kernels are searched without it (upgrade the key's workers to search with it)",
                 id, device_key, InstructionName(rule));
  }
  for (const char* key : ir::kLoopAnnotations) {
    if (!annotations || annotations->count(key)) {
      out.insert(key);
      continue;
    }
    spdlog::warn("jobs: {}: a worker of device key {} runs an older tunefarm that cannot replay the loop "
                 "annotation {}: this job's kernels are searched without it (upgrade the key's workers to "
                 "search with it)",
                 id, device_key, key);
  }
  return out;
}

}  // namespace

TuneOptions JobManager::JobTuneOptions(const Job& job, const WorkerInfo& device, const Target& target,
                                       bool build_here) {
  const std::string& id = job.view.state.id;
  TuneOptions options;
  options.target = target;
  options.trials = job.spec.trials;
  options.batch_size = job.spec.batch_size;
  options.seed = job.spec.seed;
  options.config_dir = options_.config_dir;
  options.measure.repeat = job.spec.repeat;
  options.measure.min_repeat_ms = job.spec.min_repeat_ms;
  options.measure.num_threads = job.spec.num_threads;
  options.device = job.spec.device_key;
  options.device_fingerprint = device.fingerprint;
  options.synthetic = device.synthetic;  // a test device's key: its records are never served
  // While a fleet is upgraded, some workers of the key may be older: the
  // search keeps to what every one of them replays.
  options.replayable_instructions = ReplayableByEveryWorker(*fleet_, id, job.spec.device_key);
  // The records name the code generator that made the timed code: the
  // daemon's own when it builds the candidates.
  if (build_here && options.device_fingerprint) options.device_fingerprint->toolchain = CodegenToolchain();
  // Each record names the worker that measured it, and its fingerprint:
  // while a key's workers are upgraded, not every one is the worker read above.
  options.worker_fingerprint = [this, build_here](const std::string& worker) {
    std::optional<database::HardwareFingerprint> fp = fleet_->WorkerFingerprint(worker);
    if (fp && build_here) fp->toolchain = CodegenToolchain();
    return fp;
  };
  if (build_here) {
    spdlog::info("jobs: {}: candidates are built on the tuner for {} (device key {})", id, options.target.ToString(),
                 job.spec.device_key);
  }
  return options;
}

}  // namespace tunefarm::daemon
