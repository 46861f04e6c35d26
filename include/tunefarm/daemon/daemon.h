// Daemon: `tunefarm serve` as an object — the tuning log, the fleet, the jobs
// and the gRPC services (Tuner, Fleet, Compile, TuningLog, health) on one port.
//
// Start() opens the log (refusing a corrupt or foreign file), resumes stored
// jobs, and listens. Drain() is the SIGTERM path: health turns NOT_SERVING,
// no new jobs are taken, batches in flight get limits.drain_timeout_s to
// finish and be recorded, then the server stops; unfinished jobs stay in the
// log and resume on the next Start. Not copyable; destroy after Drain().
#pragma once

#include <memory>
#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/fleet_config.h"

namespace tunefarm::daemon {

class Daemon {
 public:
  explicit Daemon(rpc::FleetConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  Status Start();
  int port() const;  // the bound port, after Start
  int resumed_jobs() const;
  void Drain();

 private:
  struct Parts;
  rpc::FleetConfig config_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace tunefarm::daemon
