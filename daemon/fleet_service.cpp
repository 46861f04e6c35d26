// The Fleet service: worker sessions over one bidirectional stream each
// (fleet_service.h). Map:
//   ValidateRegister        -- what a registration must look like
//   Connect                 -- one session: register, writer thread, read loop
//   MonitorLeases/Shutdown  -- ending silent sessions
#include "tunefarm/daemon/fleet_service.h"

#include <deque>

#include <spdlog/spdlog.h>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/rpc/convert.h"
#include "tunefarm/daemon/log_service.h"

namespace tunefarm::daemon {

namespace {

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':';
}

grpc::Status Invalid(const std::string& m) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, m); }

// What the writer thread sends, filled by the dispatcher under its lock.
struct Outbox {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Dispatch> items;  // GUARDED_BY(mu)
  bool closed = false;         // GUARDED_BY(mu)
};

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
  return grpc::Status::OK;
}

std::set<std::string> TraceInstructionsOf(const v1::Register& reg) {
  std::set<std::string> out(reg.trace_instructions().begin(), reg.trace_instructions().end());
  if (!out.empty()) return out;
  // A worker from before Register listed its instructions replays these and
  // no others: fixed, so that instructions added later are not taken to be
  // known to it.
  return {"get_block",   "get_loops",          "split",          "reorder",
          "fuse",        "parallel",           "vectorize",      "unroll",
          "bind",        "annotate",           "compute_at",     "reverse_compute_at",
          "compute_inline", "reverse_compute_inline", "cache_read", "cache_write",
          "pack_layout", "storage_align",      "rfactor",        "sample_compute_location",
          "sample_perfect_tile", "sample_categorical"};
}

FleetServiceImpl::FleetServiceImpl(FleetDispatcher* dispatcher, rpc::ServerSecurity security, rpc::FleetLimits limits)
    : dispatcher_(dispatcher), security_(std::move(security)), limits_(limits) {
  monitor_ = std::thread([this] { MonitorLeases(); });
}

FleetServiceImpl::~FleetServiceImpl() { Shutdown(); }

void FleetServiceImpl::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !monitor_.joinable()) return;
    stopping_ = true;
    for (auto& [id, context] : sessions_) context->TryCancel();
  }
  stop_cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
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
      if (it != sessions_.end()) it->second->TryCancel();  // unblocks its Read
      lock.unlock();
      dispatcher_->RemoveWorker(id, "lease expired");
      lock.lock();
    }
  }
}

grpc::Status FleetServiceImpl::Connect(grpc::ServerContext* context,
                                       grpc::ServerReaderWriter<v1::TunerMessage, v1::WorkerMessage>* stream) {
  grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kWorker);
  if (!auth.ok()) return auth;
  v1::WorkerMessage first;
  if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "the worker closed before registering");
  if (first.kind_case() != v1::WorkerMessage::kRegister) {
    return Invalid("the first message on Fleet.Connect must be Register");
  }
  const v1::Register& reg = first.register_();
  grpc::Status valid = ValidateRegister(reg);
  if (!valid.ok()) return valid;

  WorkerInfo info;
  info.device_key = reg.device_key();
  info.device = reg.device();
  info.hostname = reg.hostname();
  info.max_in_flight = std::min(reg.max_in_flight(), limits_.max_in_flight_per_worker);
  info.fingerprint = FingerprintFromProto(reg.fingerprint());
  if (reg.targets_size() > 0) info.host_target = reg.targets(0);
  info.trace_instructions = TraceInstructionsOf(reg);
  info.tunefarm_version = reg.tunefarm_version();
  // A test device of an older version does not say it is synthetic; its
  // device name and fingerprint do.
  info.synthetic = reg.synthetic() || reg.device() == "test" ||
                   reg.fingerprint().toolchain() == database::kTestDeviceToolchain;
  // A device key names interchangeable hardware: invented and measured times
  // on one key would be one job's search and best. (Checked against the
  // workers connected now; two that register at the same instant may both pass.)
  for (const WorkerSnapshot& w : dispatcher_->Snapshot().workers) {
    if (w.info.device_key != info.device_key || w.info.synthetic == info.synthetic) continue;
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "device key '" + info.device_key + "' is served by " +
                            (info.synthetic ? "workers that measure (" + w.worker_id + ")" :
                                              "a synthetic test device (" + w.worker_id + ")") +
                            ": a " + (info.synthetic ? "synthetic device" : "measuring worker") +
                            " needs a device key of its own (--device-key)");
  }
  auto outbox = std::make_shared<Outbox>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the tuner is shutting down");
  }
  // Requests queued for the worker wait in the outbox until Registered is out.
  std::string worker_id = dispatcher_->AddWorker(info, [outbox](Dispatch d) {
    std::lock_guard<std::mutex> lock(outbox->mu);
    outbox->items.push_back(std::move(d));
    outbox->cv.notify_one();
  });
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[worker_id] = context;
    if (stopping_) context->TryCancel();
  }
  spdlog::info("fleet: worker {} joined (device key {}, {} in flight)", worker_id, info.device_key, info.max_in_flight);

  v1::TunerMessage hello;
  hello.mutable_registered()->set_worker_id(worker_id);
  hello.mutable_registered()->set_heartbeat_period_ms(limits_.heartbeat_ms);
  hello.mutable_registered()->set_lease_ms(limits_.lease_ms);
  bool writable = stream->Write(hello);

  std::thread writer([&, outbox] {
    while (writable) {
      Dispatch d;
      {
        std::unique_lock<std::mutex> lock(outbox->mu);
        outbox->cv.wait(lock, [&] { return outbox->closed || !outbox->items.empty(); });
        if (outbox->closed) return;
        d = std::move(outbox->items.front());
        outbox->items.pop_front();
      }
      v1::TunerMessage msg;
      v1::MeasureRequest* req = msg.mutable_measure();
      req->set_request_id(d.request_id);
      *req->mutable_options() = rpc::ToProto(d.options);
      for (const MeasureInput& in : d.inputs) *req->add_inputs() = rpc::ToProto(in);
      if (!stream->Write(msg)) {
        context->TryCancel();  // the reader notices and the session ends
        return;
      }
    }
  });

  std::string reason = "the worker closed its stream";
  grpc::Status result = grpc::Status::OK;
  v1::WorkerMessage msg;
  while (stream->Read(&msg)) {
    dispatcher_->Touch(worker_id);
    if (msg.kind_case() == v1::WorkerMessage::kResults) {
      std::vector<MeasureResult> results;
      results.reserve(msg.results().results_size());
      for (const v1::MeasureResult& r : msg.results().results()) {
        if (r.candidate_id().empty()) continue;  // cannot be matched to anything: dropped
        results.push_back(rpc::FromProto(r));
        // A synthetic worker's results are synthetic whatever they say.
        results.back().synthetic = results.back().synthetic || info.synthetic;
      }
      dispatcher_->OnResults(worker_id, results);
    } else if (msg.kind_case() == v1::WorkerMessage::kRegister) {
      result = Invalid("Register may be sent only once per stream");
      reason = "registered twice";
      break;
    } else if (msg.kind_case() == v1::WorkerMessage::KIND_NOT_SET) {
      result = Invalid("an empty WorkerMessage (no heartbeat, results or register)");
      reason = "sent an empty message";
      break;
    }
  }
  if (context->IsCancelled() && result.ok()) reason = "the stream was cancelled (lease expired, shutdown or network)";
  {
    std::lock_guard<std::mutex> lock(outbox->mu);
    outbox->closed = true;
  }
  outbox->cv.notify_all();
  writer.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(worker_id);
  }
  dispatcher_->RemoveWorker(worker_id, reason);
  spdlog::info("fleet: worker {} left: {}", worker_id, reason);
  return result;
}

}  // namespace tunefarm::daemon
