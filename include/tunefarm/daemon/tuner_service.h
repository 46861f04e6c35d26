// TunerServiceImpl: the Tuner gRPC service (proto/tunefarm/v1/tuner.proto) on
// top of a JobManager and the fleet's dispatcher. Every handler authorizes
// the caller as a client first and validates its request (INVALID_ARGUMENT
// naming the field). Borrowed pointers must outlive the service.
#pragma once

#include "tunefarm/rpc/security.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/job_manager.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::daemon {

class TunerServiceImpl final : public v1::Tuner::Service {
 public:
  TunerServiceImpl(JobManager* jobs, FleetDispatcher* fleet, rpc::ServerSecurity security)
      : jobs_(jobs), fleet_(fleet), security_(std::move(security)) {}

  grpc::Status SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request, v1::Job* response) override;
  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request, v1::Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                        grpc::ServerWriter<v1::Job>* writer) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const v1::GetJobRequest* request, v1::Job* response) override;
  grpc::Status FleetStatus(grpc::ServerContext* context, const v1::FleetStatusRequest* request,
                           v1::FleetStatusResponse* response) override;

 private:
  JobManager* jobs_;
  FleetDispatcher* fleet_;
  const rpc::ServerSecurity security_;
};

// The wire form of a job.
v1::Job ToProto(const JobView& view);
// A SubmitJobRequest as a JobSpec (defaults filled in; not yet validated).
JobSpec JobSpecFromRequest(const v1::SubmitJobRequest& request);

}  // namespace tunefarm::daemon
