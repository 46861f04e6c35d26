// The tuner daemon (daemon.h): wiring of log, fleet, jobs and services.
#include "tunefarm/daemon/daemon.h"

#include <spdlog/spdlog.h>

#include "tunefarm/database/database.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/compile_service.h"
#include "tunefarm/daemon/fleet_service.h"
#include "tunefarm/daemon/job_manager.h"
#include "tunefarm/daemon/log_service.h"
#include "tunefarm/daemon/tuner_service.h"

namespace tunefarm::daemon {

struct Daemon::Parts {
  std::unique_ptr<database::LayeredDatabase> log;  // the user's log, over the optional system log
  database::Database* db = nullptr;                // log->user()
  FleetDispatcher dispatcher;
  std::unique_ptr<FleetServiceImpl> fleet_service;
  std::unique_ptr<JobManager> jobs;
  std::unique_ptr<TunerServiceImpl> tuner_service;
  std::unique_ptr<CompileServiceImpl> compile_service;
  std::unique_ptr<TuningLogServiceImpl> log_service;
  rpc::RunningServer server;
  int resumed = 0;
  bool drained = false;
};

Daemon::Daemon(rpc::FleetConfig config) : config_(std::move(config)) {}

Daemon::~Daemon() { Drain(); }

Status Daemon::Start() {
  TF_RETURN_IF_ERROR(rpc::ValidateFleetConfig(config_));
  // Every file the server needs (TLS certificate, key, CA) is read before the
  // log is opened: a daemon that cannot start leaves no new database behind.
  TF_RETURN_IF_ERROR(rpc::MakeServerCredentials(config_.security, config_.listen).status());
  auto parts = std::make_unique<Parts>();
  database::OpenOptions open;
  open.power_safe = true;  // a daemon's log outlives power cuts too
  TF_ASSIGN_OR_RETURN(parts->log, database::LayeredDatabase::Open(config_.db, config_.system_db, open,
                                                                  /*system_required=*/!config_.system_db.empty()));
  parts->db = &parts->log->user();
  parts->fleet_service = std::make_unique<FleetServiceImpl>(&parts->dispatcher, config_.security, config_.limits);
  JobManagerOptions jo;
  jo.config_dir = config_.config_dir;
  jo.max_running_jobs = config_.limits.max_running_jobs;
  jo.device_key_wait_s = config_.limits.device_key_wait_s;
  jo.tuner_built_device_keys = config_.builders.tuner_built;
  jo.tuner_build.build_threads = config_.builders.build_threads;
  // An object may fill half of a candidate's share of a request to a worker;
  // the other half is room for its workload and trace texts.
  jo.tuner_build.max_object_bytes =
      size_t(config_.limits.max_message_bytes) / size_t(2 * config_.limits.max_in_flight_per_worker);
  parts->jobs = std::make_unique<JobManager>(parts->db, &parts->dispatcher, jo);
  parts->tuner_service = std::make_unique<TunerServiceImpl>(parts->jobs.get(), &parts->dispatcher, config_.security);
  // A compile miss with tune_on_miss joins the job already tuning that
  // workload for that target and device key, or starts one.
  JobManager* jobs = parts->jobs.get();
  auto start_tuning = [jobs](const std::vector<std::string>& texts, const std::string& target,
                             const std::string& device_key, int trials) -> Result<std::string> {
    JobSpec spec;
    spec.workloads = texts;
    spec.target = target.empty() ? "llvm" : target;
    spec.device_key = device_key;
    spec.trials = trials > 0 ? trials : 200;
    return jobs->SubmitOrJoin(spec);
  };
  parts->compile_service = std::make_unique<CompileServiceImpl>(
      parts->log.get(), config_.security, size_t(config_.limits.compile_cache_entries), start_tuning);
  parts->log_service = std::make_unique<TuningLogServiceImpl>(parts->log.get(), config_.security);
  std::vector<grpc::Service*> services = {parts->fleet_service.get(), parts->tuner_service.get(),
                                          parts->compile_service.get(), parts->log_service.get()};
  TF_ASSIGN_OR_RETURN(parts->server,
                      rpc::StartServer(config_.listen, config_.security, config_.limits.max_message_bytes, services));
  TF_ASSIGN_OR_RETURN(parts->resumed, parts->jobs->ResumeStored());
  spdlog::info("serve: listening on {} (port {}, {}), log {}, {} job(s) resumed", config_.listen, parts->server.port,
               config_.security.insecure ? "plaintext, loopback only" : "TLS", config_.db, parts->resumed);
  parts_ = std::move(parts);
  return Status::OK();
}

int Daemon::port() const { return parts_ ? parts_->server.port : 0; }
int Daemon::resumed_jobs() const { return parts_ ? parts_->resumed : 0; }

void Daemon::Drain() {
  if (!parts_ || parts_->drained) return;
  parts_->drained = true;
  spdlog::info("serve: draining (up to {} s for batches in flight)", config_.limits.drain_timeout_s);
  rpc::SetNotServing(parts_->server.server.get());
  parts_->jobs->Drain(config_.limits.drain_timeout_s);
  parts_->fleet_service->Shutdown();
  parts_->server.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  parts_->server.server->Wait();
  spdlog::info("serve: stopped; unfinished jobs resume on the next start");
}

}  // namespace tunefarm::daemon
