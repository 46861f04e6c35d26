// FleetServiceImpl::Session: one worker's Fleet.Connect stream, as a reactor
// of gRPC's callback API (private to the Fleet service, fleet_service.h).
//
// Reads: exactly one read is in flight from the constructor until the session
// ends, and each OnReadDone handles its message before it starts the next
// read, so registration, results and the end of the session happen one after
// another on this "read chain" and never race each other. The first message
// must be Register; later ones are heartbeats and results. The session ends
// (End) only on the read chain: when a read fails (the worker closed its
// stream, or the call was cancelled: lease expired, shutdown, network, a
// failed write) or a message breaks the protocol. A cancellation needs no
// work of its own in OnCancel: it fails the read in flight, and OnReadDone
// ends the session.
//
// Writes: the dispatcher's SendFn (Send) appends to the outgoing queue; at
// most one write is in flight, and OnWriteDone starts the next. Registered
// goes out first: requests the dispatcher sends while the worker is being
// added wait in the queue until it is written. A request is converted to its
// message only when its write starts.
//
// Ending: End stops the writes, takes the worker out of the service and the
// dispatcher (RemoveWorker: its in-flight candidates go back to the queue for
// other workers), then calls Finish once no write is in flight.
//
// Lifetime: gRPC owns the session from FleetServiceImpl::Connect until
// OnDone, which runs after Finish and after every read and write completed;
// OnDone tells the service and deletes the session. The dispatcher cannot
// call Send on a deleted session: End removed the worker before Finish. The
// service's monitor and Shutdown call Cancel only with the service's mutex
// held and only on sessions in its maps, which OnDone leaves (under that
// mutex) before the delete.
//
// Locks: mu_ guards the write side and the end state. It is taken with the
// dispatcher's mutex held (Send) but never the other way round: nothing here
// calls the dispatcher or the service with mu_ held. gRPC runs no reaction
// inline from StartWrite, Finish or TryCancel (reactions run on its callback
// threads), so those are called with mu_ held.
#pragma once

#include <deque>
#include <mutex>
#include <string>

#include "tunefarm/daemon/fleet_service.h"

namespace tunefarm::daemon {

class FleetServiceImpl::Session final : public grpc::ServerBidiReactor<v1::WorkerMessage, v1::TunerMessage> {
 public:
  // Authorizes the caller (the stream ends at once if it may not act as a
  // worker) and starts the first read.
  Session(FleetServiceImpl* service, grpc::CallbackServerContext* context);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

  // Ends the stream from outside (lease expired, shutdown): the read in
  // flight fails and OnReadDone ends the session. Callers hold the service's
  // mutex, which keeps the session from being deleted meanwhile.
  void Cancel() { context_->TryCancel(); }

 private:
  // The read chain.
  void Register(bool ok);  // the first message
  void Serve();            // each later one
  void End(const grpc::Status& status, const std::string& reason);

  // The write side.
  void Send(Dispatch d);  // the dispatcher's SendFn: called with its mutex held, must not block
  void StartNextWriteLocked();
  void MaybeFinishLocked();

  FleetServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;

  // Read chain only (one read at a time; OnDone runs after the last one).
  v1::WorkerMessage incoming_;
  std::string worker_id_;  // "" until registered
  bool synthetic_ = false;  // the worker's device invents its times
  bool emulated_ = false;   // the worker runs under emulation (qemu): its times are not a real device's

  std::mutex mu_;
  bool registered_ = false;        // GUARDED_BY(mu_): Registered is out or in flight; requests may follow
  std::deque<Dispatch> outgoing_;  // GUARDED_BY(mu_): requests not yet written, oldest first
  v1::TunerMessage in_flight_;     // GUARDED_BY(mu_): the message being written, while writing_
  bool writing_ = false;           // GUARDED_BY(mu_)
  bool ending_ = false;            // GUARDED_BY(mu_): End began or a write failed; nothing more is written
  bool finish_ready_ = false;      // GUARDED_BY(mu_): End is done; Finish once no write is in flight
  bool finished_ = false;          // GUARDED_BY(mu_): Finish called (exactly once)
  grpc::Status status_;            // GUARDED_BY(mu_): what Finish reports
};

}  // namespace tunefarm::daemon
