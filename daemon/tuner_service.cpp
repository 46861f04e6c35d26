// The Tuner gRPC service (tuner_service.h): thin handlers over JobManager.
#include "tunefarm/daemon/tuner_service.h"

#include "tunefarm/common/quote.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/database/database.h"

namespace tunefarm::daemon {

// The search this file drives (tuner/).
using tuner::TaskStatus;

v1::Job ToProto(const JobView& view) {
  v1::Job job;
  const database::JobState& st = view.state;
  job.set_job_id(st.id);
  job.set_status(std::string(database::JobStatusName(st.status)));
  job.set_target(st.target);
  job.set_device_key(view.device_key);
  job.set_trials_done(st.trials_done);
  job.set_trial_budget(st.trial_budget);
  job.set_error(st.error);
  job.set_elapsed_s(view.elapsed_s);
  job.set_eta_s(view.eta_s);
  job.set_warning(view.warning);
  for (const TaskStatus& t : view.tasks) {
    v1::TaskProgress* p = job.add_tasks();
    p->set_name(t.name);
    p->set_workload_hash(t.hash);
    p->set_trials(t.trials);
    p->set_errors(t.errors);
    p->set_best_seconds(t.best_seconds);
    p->set_best_gflops(t.best_seconds > 0 ? t.flops / t.best_seconds / 1e9 : 0);
    p->set_speedup(t.best_seconds > 0 && t.default_seconds > 0 ? t.default_seconds / t.best_seconds : 0);
    p->set_best_record_id(t.best_record_id);
    p->set_confirmations(t.confirmations);
    p->set_weight(t.weight);
  }
  return job;
}

JobSpec JobSpecFromRequest(const v1::SubmitJobRequest& r) {
  JobSpec spec;
  spec.workloads.assign(r.workloads().begin(), r.workloads().end());
  spec.workload_weights.assign(r.workload_weights().begin(), r.workload_weights().end());
  if (!r.target().empty()) spec.target = r.target();
  spec.device_key = r.device_key();
  spec.trials = r.trials();
  if (r.batch_size() != 0) spec.batch_size = r.batch_size();
  if (r.seed() != 0) spec.seed = r.seed();
  if (r.has_measure()) {
    if (r.measure().repeat() != 0) spec.repeat = r.measure().repeat();
    if (r.measure().min_repeat_ms() != 0) spec.min_repeat_ms = r.measure().min_repeat_ms();
    spec.num_threads = r.measure().num_threads();
  }
  return spec;
}

grpc::Status TunerServiceImpl::SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request,
                                         v1::Job* response) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  auto view = jobs_->Submit(JobSpecFromRequest(*request), request->job_id());
  if (!view.ok()) return rpc::ToGrpc(view.status());
  *response = ToProto(*view);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                      v1::Job* response) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  if (Status id = ValidateJobId(request->job_id()); !id.ok()) return rpc::ToGrpc(id);
  auto view = jobs_->Get(request->job_id());
  if (!view.ok()) return rpc::ToGrpc(view.status());
  *response = ToProto(*view);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                                        v1::ListJobsResponse* response) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  std::optional<database::JobStatus> status;
  if (!request->status().empty()) {
    auto parsed = database::ParseJobStatus(request->status());
    if (!parsed.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "status " + QuoteInput(request->status()) +
                              " is not one of pending, running, done, failed, cancelled");
    }
    status = *parsed;
  }
  auto views = jobs_->List(status);
  if (!views.ok()) return rpc::ToGrpc(views.status());
  for (const JobView& v : *views) *response->add_jobs() = ToProto(v);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::WatchJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                        grpc::ServerWriter<v1::Job>* writer) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  if (Status id = ValidateJobId(request->job_id()); !id.ok()) return rpc::ToGrpc(id);
  uint64_t seen = 0;
  bool first = true;
  while (!context->IsCancelled()) {
    auto view = first ? jobs_->Get(request->job_id()) : jobs_->WaitForChange(request->job_id(), seen, 1.0);
    if (!view.ok()) return rpc::ToGrpc(view.status());
    if (first || view->version > seen || view->finished()) {
      if (!writer->Write(ToProto(*view))) return grpc::Status::OK;  // the watcher left
    }
    first = false;
    seen = view->version;
    if (view->finished()) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "the watch was cancelled");
}

grpc::Status TunerServiceImpl::CancelJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                         v1::Job* response) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  if (Status id = ValidateJobId(request->job_id()); !id.ok()) return rpc::ToGrpc(id);
  auto view = jobs_->Cancel(request->job_id());
  if (!view.ok()) return rpc::ToGrpc(view.status());
  *response = ToProto(*view);
  return grpc::Status::OK;
}

grpc::Status TunerServiceImpl::FleetStatus(grpc::ServerContext* context, const v1::FleetStatusRequest*,
                                           v1::FleetStatusResponse* response) {
  if (auto auth = rpc::Authorize(*context, security_, rpc::Role::kClient); !auth.ok()) return auth;
  FleetSnapshot s = fleet_->Snapshot();
  for (const WorkerSnapshot& w : s.workers) {
    v1::WorkerStatus* p = response->add_workers();
    p->set_worker_id(w.worker_id);
    p->set_device_key(w.info.device_key);
    p->set_device(w.info.device);
    p->set_hostname(w.info.hostname);
    p->set_max_in_flight(w.info.max_in_flight);
    p->set_in_flight(w.in_flight);
    p->set_measured(w.measured);
    p->set_errors(w.errors);
    p->set_results_per_s(w.connected_s > 0 ? double(w.measured) / w.connected_s : 0);
    p->set_connected_s(w.connected_s);
    p->set_last_seen_ms(w.last_seen_ms);
    p->set_tunefarm_version(w.info.tunefarm_version);
    if (!w.info.trace_instructions.empty()) {
      for (const std::string& n : ReplayedInstructionNames()) {
        if (!w.info.trace_instructions.count(n)) p->add_missing_instructions(n);
      }
    }
    if (!w.info.loop_annotations.empty()) {
      for (const char* key : ir::kLoopAnnotations) {
        if (!w.info.loop_annotations.count(key)) p->add_missing_annotations(key);
      }
    }
  }
  response->set_queued(s.queued);
  response->set_redispatched(s.redispatched);
  response->set_duplicates_dropped(s.duplicates_dropped);
  return grpc::Status::OK;
}

}  // namespace tunefarm::daemon
