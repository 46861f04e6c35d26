// FleetServiceImpl: the gRPC side of the fleet (proto/tunefarm/v1/fleet.proto).
//
// Each worker's Connect stream is one session: the handler thread reads
// (registration, heartbeats, results) and a writer thread sends the measure
// requests the dispatcher puts in the session's outbox. A monitor thread ends
// sessions whose worker has been silent for a whole lease; the dispatcher
// then re-dispatches that worker's candidates.
//
// Lifetime: the dispatcher must outlive the service; Shutdown() (or the
// destructor) stops the monitor and ends every open session.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "tunefarm/rpc/fleet_config.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/v1/fleet.grpc.pb.h"

namespace tunefarm::daemon {

class FleetServiceImpl final : public v1::Fleet::Service {
 public:
  FleetServiceImpl(FleetDispatcher* dispatcher, rpc::ServerSecurity security, rpc::FleetLimits limits);
  ~FleetServiceImpl() override;

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::TunerMessage, v1::WorkerMessage>* stream) override;

  // Ends every session (their workers will reconnect to whoever listens next).
  void Shutdown();

 private:
  void MonitorLeases();

  FleetDispatcher* dispatcher_;
  const rpc::ServerSecurity security_;
  const rpc::FleetLimits limits_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;                                      // GUARDED_BY(mu_)
  std::map<std::string, grpc::ServerContext*> sessions_;       // GUARDED_BY(mu_): worker id -> its call
  std::thread monitor_;
};

// Checks a registration; INVALID_ARGUMENT naming the bad field otherwise.
grpc::Status ValidateRegister(const v1::Register& reg);
// The schedule instructions a registering worker replays: those it lists, or,
// for a worker of a version that lists none, the 22 instructions such
// versions replay (all of today's but pad_input, added after them).
std::set<std::string> TraceInstructionsOf(const v1::Register& reg);

}  // namespace tunefarm::daemon
