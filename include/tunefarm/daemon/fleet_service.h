// FleetServiceImpl: the gRPC side of the fleet (proto/tunefarm/v1/fleet.proto).
//
// Each worker's Connect stream is one session, served on gRPC's callback API:
// a reactor per stream (FleetServiceImpl::Session, daemon/fleet_session.h)
// whose reads (registration, heartbeats, results) and writes (Registered, then
// the measure requests the dispatcher hands it) are driven by gRPC's
// completions, so an open stream holds no thread: thousands of workers cost
// gRPC's few callback threads plus one monitor thread here. The monitor ends
// sessions whose worker has been silent for a whole lease; the dispatcher then
// re-dispatches that worker's candidates.
//
// Lifetime: the dispatcher must outlive the service, and the service every
// session: gRPC owns a session from Connect until its OnDone, which deletes it.
// Shutdown() stops the monitor and ends every registered session; the
// destructor also cancels the streams still registering and waits until every
// session is done (shut the server down first, as the daemon does, and none
// are left by then).
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "tunefarm/rpc/fleet_config.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/v1/fleet.grpc.pb.h"

namespace tunefarm::daemon {

class FleetServiceImpl final : public v1::Fleet::CallbackService {
 public:
  FleetServiceImpl(FleetDispatcher* dispatcher, rpc::ServerSecurity security, rpc::FleetLimits limits);
  ~FleetServiceImpl() override;

  // A new session for the stream; gRPC owns it until its OnDone.
  grpc::ServerBidiReactor<v1::WorkerMessage, v1::TunerMessage>* Connect(grpc::CallbackServerContext* context) override;

  // Ends every session (their workers will reconnect to whoever listens next).
  void Shutdown();

  // Streams open now: registered sessions and those still registering.
  int OpenStreams();

 private:
  class Session;

  void MonitorLeases();
  // For sessions (each takes mu_, so a session calls them without its own lock).
  bool Stopping();
  void AddSession(const std::string& worker_id, Session* session);  // cancels it when stopping
  void RemoveSession(const std::string& worker_id);
  void SessionDone(Session* session);  // from its OnDone, just before it is deleted

  FleetDispatcher* dispatcher_;
  const rpc::ServerSecurity security_;
  const rpc::FleetLimits limits_;
  std::mutex mu_;
  std::condition_variable stop_cv_;  // wakes the monitor on Shutdown
  std::condition_variable done_cv_;  // a session finished (the destructor waits for all)
  bool stopping_ = false;                      // GUARDED_BY(mu_)
  std::map<std::string, Session*> sessions_;   // GUARDED_BY(mu_): worker id -> its session, while registered
  std::set<Session*> open_;                    // GUARDED_BY(mu_): every session from Connect to OnDone
  std::thread monitor_;
};

// Checks a registration; INVALID_ARGUMENT naming the bad field otherwise.
grpc::Status ValidateRegister(const v1::Register& reg);
// The schedule instructions a registering worker replays: those it lists, or,
// for a worker of a version that lists none, those such versions replay
// (UnlistedWorkerInstructionNames, compiler/schedule/trace_instructions.h).
std::set<std::string> TraceInstructionsOf(const v1::Register& reg);
// The loop annotation keys a worker that lists none replays: a tunefarm from
// before Register.loop_annotations, fixed to what that version's Annotate
// accepted, so that keys added later (pragma_dot_product on) are not taken to
// be known to it.
const std::set<std::string>& UnlistedWorkerLoopAnnotations();
// The loop annotation keys a registering worker replays: those it lists, or,
// for a worker that lists none, UnlistedWorkerLoopAnnotations().
std::set<std::string> LoopAnnotationsOf(const v1::Register& reg);

}  // namespace tunefarm::daemon
