// One worker's Fleet stream on the callback API (fleet_session.h). Map:
//   Session / OnReadDone / Register / Serve / End -- the read chain
//   Send / StartNextWriteLocked / OnWriteDone     -- one write in flight, the rest queued
//   MaybeFinishLocked / OnDone                    -- the end of the stream
#include "fleet_session.h"

#include <spdlog/spdlog.h>

#include "tunefarm/rpc/convert.h"
#include "tunefarm/daemon/log_service.h"

namespace tunefarm::daemon {

namespace {

grpc::Status Invalid(const std::string& m) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, m); }

v1::TunerMessage RequestMessage(const Dispatch& d) {
  v1::TunerMessage msg;
  v1::MeasureRequest* req = msg.mutable_measure();
  req->set_request_id(d.request_id);
  *req->mutable_options() = rpc::ToProto(d.options);
  for (const MeasureInput& in : d.inputs) *req->add_inputs() = rpc::ToProto(in);
  return msg;
}

}  // namespace

FleetServiceImpl::Session::Session(FleetServiceImpl* service, grpc::CallbackServerContext* context)
    : service_(service), context_(context) {
  grpc::Status auth = rpc::Authorize(*context, service_->security_, rpc::Role::kWorker);
  if (!auth.ok()) {
    End(auth, "");
    return;
  }
  StartRead(&incoming_);
}

void FleetServiceImpl::Session::OnReadDone(bool ok) {
  if (worker_id_.empty()) {
    Register(ok);
    return;
  }
  if (!ok) {
    End(grpc::Status::OK, context_->IsCancelled() ? "the stream was cancelled (lease expired, shutdown or network)"
                                                  : "the worker closed its stream");
    return;
  }
  Serve();
}

void FleetServiceImpl::Session::Register(bool ok) {
  if (!ok) {
    End(grpc::Status(grpc::StatusCode::CANCELLED, "the worker closed before registering"), "");
    return;
  }
  if (incoming_.kind_case() != v1::WorkerMessage::kRegister) {
    End(Invalid("the first message on Fleet.Connect must be Register"), "");
    return;
  }
  const v1::Register& reg = incoming_.register_();
  if (grpc::Status valid = ValidateRegister(reg); !valid.ok()) {
    End(valid, "");
    return;
  }
  const rpc::FleetLimits& limits = service_->limits_;
  WorkerInfo info;
  info.device_key = reg.device_key();
  info.device = reg.device();
  info.hostname = reg.hostname();
  info.max_in_flight = std::min(reg.max_in_flight(), limits.max_in_flight_per_worker);
  info.fingerprint = FingerprintFromProto(reg.fingerprint());
  if (reg.targets_size() > 0) info.host_target = reg.targets(0);
  info.trace_instructions = TraceInstructionsOf(reg);
  info.loop_annotations = LoopAnnotationsOf(reg);
  info.tunefarm_version = reg.tunefarm_version();
  // A test device of an older version does not say it is synthetic; its
  // device name and fingerprint do.
  info.synthetic = reg.synthetic() || reg.device() == "test" ||
                   reg.fingerprint().toolchain() == database::kTestDeviceToolchain;
  synthetic_ = info.synthetic;
  // A board worker of an older version does not say it is emulated; its
  // fingerprint's arch ("generic-emulated") does.
  emulated_ = reg.emulated() || IsEmulatedFingerprint(info.fingerprint);
  FleetDispatcher* dispatcher = service_->dispatcher_;
  // A device key names interchangeable hardware: invented and measured times
  // on one key would be one job's search and best. (Checked against the
  // workers connected now; two that register at the same instant may both pass.)
  if (std::optional<std::string> other = dispatcher->OtherKindWorker(info.device_key, info.synthetic)) {
    End(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                     "device key '" + info.device_key + "' is served by " +
                         (info.synthetic ? "workers that measure (" + *other + ")" :
                                           "a synthetic test device (" + *other + ")") +
                         ": a " + (info.synthetic ? "synthetic device" : "measuring worker") +
                         " needs a device key of its own (--device-key)"),
        "");
    return;
  }
  if (service_->Stopping()) {
    End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the tuner is shutting down"), "");
    return;
  }
  // Requests the dispatcher sends meanwhile wait in outgoing_ until
  // Registered is out (registered_ is still false).
  std::string id = dispatcher->AddWorker(info, [this](Dispatch d) { Send(std::move(d)); });
  worker_id_ = id;
  service_->AddSession(id, this);
  spdlog::info("fleet: worker {} joined (device key {}, {} in flight)", id, info.device_key, info.max_in_flight);
  {
    std::lock_guard<std::mutex> lock(mu_);
    registered_ = true;
    // Nothing was written before: writes start only once registered_.
    in_flight_.Clear();
    in_flight_.mutable_registered()->set_worker_id(id);
    in_flight_.mutable_registered()->set_heartbeat_period_ms(limits.heartbeat_ms);
    in_flight_.mutable_registered()->set_lease_ms(limits.lease_ms);
    writing_ = true;
    StartWrite(&in_flight_);
  }
  StartRead(&incoming_);
}

void FleetServiceImpl::Session::Serve() {
  FleetDispatcher* dispatcher = service_->dispatcher_;
  dispatcher->Touch(worker_id_);
  switch (incoming_.kind_case()) {
    case v1::WorkerMessage::kResults: {
      std::vector<MeasureResult> results;
      results.reserve(incoming_.results().results_size());
      for (const v1::MeasureResult& r : incoming_.results().results()) {
        if (r.candidate_id().empty()) continue;  // cannot be matched to anything: dropped
        results.push_back(rpc::FromProto(r));
        // A synthetic worker's results are synthetic whatever they say.
        results.back().synthetic = results.back().synthetic || synthetic_;
        // An emulated worker's results are emulated whatever they say.
        results.back().emulated = results.back().emulated || emulated_;
      }
      dispatcher->OnResults(worker_id_, results);
      break;
    }
    case v1::WorkerMessage::kHeartbeat:
      break;  // Touch renewed the lease
    case v1::WorkerMessage::kRegister:
      End(Invalid("Register may be sent only once per stream"), "registered twice");
      return;
    case v1::WorkerMessage::KIND_NOT_SET:
      End(Invalid("an empty WorkerMessage (no heartbeat, results or register)"), "sent an empty message");
      return;
  }
  StartRead(&incoming_);
}

void FleetServiceImpl::Session::End(const grpc::Status& status, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ending_ = true;
    outgoing_.clear();  // still in the worker's in-flight set: RemoveWorker queues them again
  }
  if (!worker_id_.empty()) {
    service_->RemoveSession(worker_id_);
    service_->dispatcher_->RemoveWorker(worker_id_, reason);
    spdlog::info("fleet: worker {} left: {}", worker_id_, reason);
  }
  std::lock_guard<std::mutex> lock(mu_);
  status_ = status;
  finish_ready_ = true;
  MaybeFinishLocked();
}

void FleetServiceImpl::Session::Send(Dispatch d) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ending_) return;  // the worker is being removed, and these candidates with it
  outgoing_.push_back(std::move(d));
  StartNextWriteLocked();
}

void FleetServiceImpl::Session::StartNextWriteLocked() {
  if (writing_ || ending_ || !registered_ || outgoing_.empty()) return;
  // A request becomes a message only when its write starts: behind a write
  // in flight that is in OnWriteDone, on a gRPC thread, rather than in Send
  // with the dispatcher's mutex held.
  in_flight_ = RequestMessage(outgoing_.front());
  outgoing_.pop_front();
  writing_ = true;
  StartWrite(&in_flight_);
}

void FleetServiceImpl::Session::OnWriteDone(bool ok) {
  bool cancel = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (ending_) {
      MaybeFinishLocked();
      return;
    }
    if (ok) {
      StartNextWriteLocked();
      return;
    }
    ending_ = true;  // the stream is broken: nothing more is written
    cancel = true;
  }
  // The read in flight fails with the call and ends the session.
  if (cancel) context_->TryCancel();
}

void FleetServiceImpl::Session::MaybeFinishLocked() {
  if (!finish_ready_ || writing_ || finished_) return;
  finished_ = true;
  Finish(status_);
}

void FleetServiceImpl::Session::OnDone() {
  service_->SessionDone(this);
  delete this;
}

}  // namespace tunefarm::daemon
