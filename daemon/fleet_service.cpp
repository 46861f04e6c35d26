// The Fleet service: worker sessions over one bidirectional stream each
// (fleet_service.h; a session itself is fleet_session.cpp). Map:
//   ValidateRegister / TraceInstructionsOf / LoopAnnotationsOf -- what a registration must hold, and means
//   Connect / AddSession / RemoveSession / SessionDone  -- the sessions the service knows
//   MonitorLeases / Shutdown / ~FleetServiceImpl        -- ending silent sessions, and all of them
#include "tunefarm/daemon/fleet_service.h"

#include <spdlog/spdlog.h>

#include "fleet_session.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/daemon/log_service.h"

namespace tunefarm::daemon {

namespace {

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':';
}

grpc::Status Invalid(const std::string& m) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, m); }

}  // namespace

grpc::Status ValidateRegister(const v1::Register& reg) {
  if (reg.device_key().empty() || reg.device_key().size() > 128) {
    return Invalid("register.device_key must have 1 to 128 characters");
  }
  for (char c : reg.device_key()) {
    if (!IsKeyChar(c)) return Invalid("register.device_key may hold only letters, digits and - _ . :");
  }
  if (reg.device().empty() || reg.device().size() > 64) return Invalid("register.device must have 1 to 64 characters");
  if (reg.hostname().size() > 256) return Invalid("register.hostname is longer than 256 characters");
  if (reg.max_in_flight() < 1 || reg.max_in_flight() > 1024) {
    return Invalid("register.max_in_flight must be in 1..1024, got " + std::to_string(reg.max_in_flight()));
  }
  if (Status fp = CheckFingerprint(reg.fingerprint(), "register.fingerprint"); !fp.ok()) return Invalid(fp.message());
  if (reg.targets_size() > 16) return Invalid("register.targets: at most 16");
  for (int i = 0; i < reg.targets_size(); ++i) {
    const std::string& t = reg.targets(i);
    auto parsed = t.size() <= 512 ? Target::Parse(t) : Result<Target>(Status::InvalidArgument("longer than 512 characters"));
    if (!parsed.ok()) {
      return Invalid("register.targets[" + std::to_string(i) + "]: " + parsed.status().message());
    }
  }
  if (reg.trace_instructions_size() > 256) return Invalid("register.trace_instructions: at most 256");
  for (int i = 0; i < reg.trace_instructions_size(); ++i) {
    const std::string& n = reg.trace_instructions(i);
    if (n.empty() || n.size() > 64) {
      return Invalid("register.trace_instructions[" + std::to_string(i) + "] must have 1 to 64 characters");
    }
  }
  if (reg.loop_annotations_size() > 256) return Invalid("register.loop_annotations: at most 256");
  for (int i = 0; i < reg.loop_annotations_size(); ++i) {
    const std::string& k = reg.loop_annotations(i);
    if (k.empty() || k.size() > 64) {
      return Invalid("register.loop_annotations[" + std::to_string(i) + "] must have 1 to 64 characters");
    }
  }
  return grpc::Status::OK;
}

std::set<std::string> TraceInstructionsOf(const v1::Register& reg) {
  std::set<std::string> out(reg.trace_instructions().begin(), reg.trace_instructions().end());
  if (!out.empty()) return out;
  // A worker from before Register listed its instructions replays a fixed
  // set, so that instructions added later are not taken to be known to it.
  return UnlistedWorkerInstructionNames();
}

const std::set<std::string>& UnlistedWorkerLoopAnnotations() {
  // Written out, not derived from ir::kLoopAnnotations: it is what builds
  // from before the list replay, and stays so whatever keys are added since.
  // Without pragma_dot_product: a build from before it answers a trace that
  // uses it "unknown annotation", and a worker that lists nothing cannot say
  // whether it is one (builds between that key and the list are taken as
  // older: they are sent no such candidate, rather than fail it).
  static const std::set<std::string> kBeforeTheList = {ir::kAutoUnrollMaxStepAnnotation,
                                                       ir::kUnrollExplicitAnnotation};
  return kBeforeTheList;
}

std::set<std::string> LoopAnnotationsOf(const v1::Register& reg) {
  std::set<std::string> out(reg.loop_annotations().begin(), reg.loop_annotations().end());
  return out.empty() ? UnlistedWorkerLoopAnnotations() : out;
}

FleetServiceImpl::FleetServiceImpl(FleetDispatcher* dispatcher, rpc::ServerSecurity security, rpc::FleetLimits limits)
    : dispatcher_(dispatcher), security_(std::move(security)), limits_(limits) {
  monitor_ = std::thread([this] { MonitorLeases(); });
}

FleetServiceImpl::~FleetServiceImpl() {
  Shutdown();
  // A session still open refers to this service: cancel the streams still
  // registering too, and wait for every OnDone.
  std::unique_lock<std::mutex> lock(mu_);
  for (Session* session : open_) session->Cancel();
  done_cv_.wait(lock, [&] { return open_.empty(); });
}

void FleetServiceImpl::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !monitor_.joinable()) return;
    stopping_ = true;
    for (auto& [id, session] : sessions_) session->Cancel();
  }
  stop_cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
}

int FleetServiceImpl::OpenStreams() {
  std::lock_guard<std::mutex> lock(mu_);
  return int(open_.size());
}

void FleetServiceImpl::MonitorLeases() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(std::max(50, limits_.heartbeat_ms / 2)));
    lock.unlock();
    auto silent = dispatcher_->SilentWorkers(std::chrono::milliseconds(limits_.lease_ms));
    lock.lock();
    for (const std::string& id : silent) {
      auto it = sessions_.find(id);
      spdlog::warn("fleet: worker {} silent for more than {} ms: lease expired, its candidates go to other workers",
                   id, limits_.lease_ms);
      if (it != sessions_.end()) it->second->Cancel();  // fails its read: the session ends
      lock.unlock();
      dispatcher_->RemoveWorker(id, "lease expired");
      lock.lock();
    }
  }
}

grpc::ServerBidiReactor<v1::WorkerMessage, v1::TunerMessage>* FleetServiceImpl::Connect(
    grpc::CallbackServerContext* context) {
  // Known to the service before gRPC can call any of its reactions (the
  // first runs after Connect returns), so before its OnDone.
  auto* session = new Session(this, context);
  std::lock_guard<std::mutex> lock(mu_);
  open_.insert(session);
  return session;
}

bool FleetServiceImpl::Stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void FleetServiceImpl::AddSession(const std::string& worker_id, Session* session) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_[worker_id] = session;
  if (stopping_) session->Cancel();
}

void FleetServiceImpl::RemoveSession(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(worker_id);
}

void FleetServiceImpl::SessionDone(Session* session) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(session);
  done_cv_.notify_all();
}

}  // namespace tunefarm::daemon
