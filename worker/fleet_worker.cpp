// The fleet worker: connection loop with backoff, the Fleet.Connect session
// (register, heartbeats, reading requests), and the measuring thread
// (fleet_worker.h).
#include "tunefarm/worker/fleet_worker.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

#include "tunefarm/rpc/convert.h"
#include "tunefarm/rpc/tls_probe.h"
#include "tunefarm/v1/fleet.grpc.pb.h"

namespace tunefarm {

namespace {

using Clock = std::chrono::steady_clock;
using Stream = grpc::ClientReaderWriter<v1::WorkerMessage, v1::TunerMessage>;

// Every tunefarm call has a deadline; the Fleet stream is meant to live for
// days, so its deadline is a week: reconnecting then costs one re-register.
constexpr double kStreamDeadlineS = 7 * 24 * 3600.0;
// A tuner that accepts the stream but never answers Register is broken.
constexpr auto kRegisterTimeout = std::chrono::seconds(30);
// After a clean half-close, how long the tuner gets to end the stream.
constexpr auto kCloseGrace = std::chrono::seconds(3);
// Waits poll at this period: the external stop flag is set from a signal
// handler, which cannot notify a condition variable.
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr int kDefaultHeartbeatMs = 1000;
constexpr int kMinHeartbeatMs = 20;
// How long the protocol probe behind an UNAVAILABLE tuner may take.
constexpr auto kProbeTimeout = std::chrono::milliseconds(1500);

}  // namespace

struct FleetWorker::Session {
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream;
  bool half_closed = false;  // GUARDED_BY(FleetWorker::write_mu_): WritesDone sent

  std::mutex mu;  // wakes the supervisor; guards the fields below
  std::condition_variable cv;
  bool registered = false;
  bool ended = false;  // the reader is done: the supervisor exits
  int heartbeat_ms = kDefaultHeartbeatMs;
  std::string cancel_reason;  // why the supervisor cancelled, if it did
};

bool FleetWorker::Stopping() const { return stop_.load() || (options_.stop != nullptr && options_.stop->load()); }

void FleetWorker::Stop() {
  stop_ = true;
  queue_cv_.notify_all();
}

FleetWorkerStats FleetWorker::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void FleetWorker::Log(const std::string& line) const {
  if (options_.log) return options_.log(line);
  std::string out = "tunefarm worker: " + line + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);  // one write: lines from threads do not interleave
}

Status FleetWorker::Run() {
  if (ran_.exchange(true)) return Status::FailedPrecondition("FleetWorker::Run may be called only once");
  Log("device " + options_.device + " as '" + options_.device_key + "', up to " +
      std::to_string(options_.max_in_flight) + " in flight, dialling " + options_.tuner_address +
      (options_.security.insecure ? " (plaintext, loopback)" : " (TLS)"));
  if (!fault_name_.empty()) {
    Log("TEST ONLY: injecting fault '" + fault_name_ + "' into 1 of every " + std::to_string(options_.inject_every) +
        " candidates");
  }
  std::thread measuring([this] { MeasureLoop(); });
  std::mt19937 rng(std::random_device{}());
  auto backoff = options_.initial_backoff;
  std::string last_failure;
  bool quiet = false;
  Status result;
  while (!Stopping()) {
    bool registered = false;
    Status why = RunSession(&registered);
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.last_error = why.ToString();
    }
    if (Stopping()) break;
    // Plaintext to a TLS tuner (or TLS to a plaintext one) fails the same way
    // every time, and gRPC's message names neither: say so and stop.
    if (!registered && why.code() == StatusCode::kUnavailable && why.ToString() != last_failure) {
      result = ProtocolMismatch();
      if (!result.ok()) {
        Log(result.message());
        break;
      }
    }
    if (registered) backoff = options_.initial_backoff;
    // Jitter, so a fleet that lost its tuner does not reconnect in lockstep.
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    auto delay =
        std::min(options_.max_backoff, std::chrono::milliseconds(int64_t(double(backoff.count()) * jitter(rng))));
    std::string reason = why.ToString();
    // An unreachable tuner is one state, not a line every five seconds.
    bool repeat = !registered && reason == last_failure && backoff >= options_.max_backoff;
    if (!repeat) {
      const char* hint =
          why.code() == StatusCode::kUnauthenticated ? " (check this worker's token or client certificate)" : "";
      Log((registered ? "lost connection to " : "cannot connect to ") + options_.tuner_address + ": " + reason + hint);
      Log("retrying in " + std::to_string(delay.count()) + " ms");
      quiet = false;
    } else if (!quiet) {
      Log("still failing the same way; retrying about every " + std::to_string(options_.max_backoff.count()) +
          " ms, quietly until something changes");
      quiet = true;
    }
    last_failure = registered ? std::string() : reason;
    if (!WaitBackoff(delay)) break;
    backoff = std::min(options_.max_backoff, backoff * 2);
  }
  stop_ = true;
  queue_cv_.notify_all();
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (measuring_candidates_ > 0) Log("stopping: finishing the batch being measured");
  }
  measuring.join();
  Log("stopped");
  return result;
}

Status FleetWorker::ProtocolMismatch() const {
  rpc::PortProtocol spoken = rpc::ProbePortProtocol(options_.tuner_address, kProbeTimeout);
  if (options_.security.insecure && spoken == rpc::PortProtocol::kTls) {
    return Status::FailedPrecondition(
        "the tuner at " + options_.tuner_address +
        " speaks TLS, and this worker dials in plaintext (--insecure): run it with --ca CA.pem --cert WORKER.pem "
        "--key WORKER.key instead (docs/fleet.md, Trust)");
  }
  if (!options_.security.insecure && spoken == rpc::PortProtocol::kPlaintext) {
    return Status::FailedPrecondition("the tuner at " + options_.tuner_address +
                                      " does not speak TLS (a daemon started with --insecure?): run this worker "
                                      "with --insecure on the tuner's machine, or start the tuner with TLS");
  }
  return Status::OK();
}

bool FleetWorker::WaitBackoff(std::chrono::milliseconds delay) {
  auto until = Clock::now() + delay;
  while (!Stopping() && Clock::now() < until) {
    std::this_thread::sleep_for(std::min<Clock::duration>(kPoll, until - Clock::now()));
  }
  return !Stopping();
}

Status FleetWorker::RunSession(bool* registered) {
  // A fresh channel per attempt: the retry schedule is ours (gRPC's own
  // reconnect backoff grows to minutes), and rotated PEM files are re-read.
  TF_ASSIGN_OR_RETURN(auto channel, rpc::MakeChannel(options_.tuner_address, options_.security));
  auto stub = v1::Fleet::NewStub(channel);
  Session session;
  rpc::PrepareCall(&session.context, options_.security, kStreamDeadlineS);
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.connect_attempts;
  }
  session.stream = stub->Connect(&session.context);
  std::thread supervisor([this, &session] { Supervise(&session); });

  {
    // A failed write shows up as a failed Read below, with the real status.
    std::lock_guard<std::mutex> lock(write_mu_);
    (void)session.stream->Write(*hello_);
  }
  Status protocol_error;
  v1::TunerMessage msg;
  if (session.stream->Read(&msg)) {
    if (msg.has_registered()) {
      OnRegistered(&session, msg.registered());
      *registered = true;
      while (session.stream->Read(&msg)) {
        // Other kinds (a repeated Registered, or kinds from a newer tuner) are ignored.
        if (msg.has_measure()) Enqueue(msg.measure());
      }
    } else {
      protocol_error = Status::FailedPrecondition("the tuner sent a message other than Registered first");
      session.context.TryCancel();
    }
  }
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (live_ == &session) live_ = nullptr;
  }
  std::string cancel_reason;
  {
    std::lock_guard<std::mutex> lock(session.mu);
    session.ended = true;
    cancel_reason = session.cancel_reason;
  }
  session.cv.notify_all();
  supervisor.join();
  grpc::Status finished = session.stream->Finish();
  int dropped = 0;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    dropped = queued_candidates_;
    queue_.clear();
    queued_candidates_ = 0;
  }
  if (dropped > 0) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.candidates_dropped += dropped;
  }
  if (dropped > 0 && !Stopping()) {
    Log("dropped " + std::to_string(dropped) +
        " queued candidate(s) of the broken stream (the tuner re-dispatches them)");
  }
  if (!protocol_error.ok()) return protocol_error;
  if (!cancel_reason.empty()) return Status::Unavailable(cancel_reason);
  if (!finished.ok()) return rpc::FromGrpc(finished);
  return Status::Unavailable(*registered ? "the tuner ended the stream"
                                         : "the tuner ended the stream before Registered");
}

void FleetWorker::OnRegistered(Session* session, const v1::Registered& registered) {
  int resent = 0;
  {
    // Results kept from a broken stream go first, before anything new.
    std::lock_guard<std::mutex> lock(write_mu_);
    while (!unsent_.empty()) {
      v1::WorkerMessage m;
      *m.mutable_results() = *unsent_.front();
      if (!session->stream->Write(m)) break;
      unsent_.erase(unsent_.begin());
      ++resent;
    }
    live_ = session;
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.registrations;
    stats_.worker_id = registered.worker_id();
    stats_.results_sent += resent;
    stats_.results_resent += resent;
  }
  int heartbeat_ms = registered.heartbeat_period_ms() > 0 ? registered.heartbeat_period_ms() : kDefaultHeartbeatMs;
  heartbeat_ms = std::max(heartbeat_ms, kMinHeartbeatMs);
  Log("connected to " + options_.tuner_address + " as worker id " + registered.worker_id() + " (heartbeat " +
      std::to_string(heartbeat_ms) + " ms, lease " + std::to_string(registered.lease_ms()) + " ms)");
  if (resent > 0) Log("re-sent " + std::to_string(resent) + " result message(s) measured while disconnected");
  {
    std::lock_guard<std::mutex> lock(session->mu);
    session->heartbeat_ms = heartbeat_ms;
    session->registered = true;
  }
  session->cv.notify_all();
}

// The supervisor sends heartbeats, enforces the registration timeout, and on
// stop half-closes the stream once the measuring thread has delivered its
// last batch (so the reader, blocked in Read, sees the tuner end the stream).
void FleetWorker::Supervise(Session* session) {
  const auto start = Clock::now();
  auto next_heartbeat = start;
  std::optional<Clock::time_point> half_closed_at;
  bool cancelled = false;
  std::unique_lock<std::mutex> lk(session->mu);
  while (!session->ended) {
    session->cv.wait_for(lk, kPoll);
    if (session->ended) break;
    const auto now = Clock::now();
    if (cancelled) continue;
    if (!session->registered) {
      if (Stopping() || now - start > kRegisterTimeout) {
        session->cancel_reason = Stopping() ? "stopped while registering" : "no Registered from the tuner within 30 s";
        session->context.TryCancel();
        cancelled = true;
      }
      continue;
    }
    if (half_closed_at) {
      if (now - *half_closed_at > kCloseGrace) {
        session->context.TryCancel();
        cancelled = true;
      }
      continue;
    }
    bool close = Stopping() && measure_loop_done_.load();
    if (!close && now < next_heartbeat) continue;
    lk.unlock();
    int in_flight = 0;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      in_flight = queued_candidates_ + measuring_candidates_;
    }
    bool wrote = false;
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      if (close) {
        session->half_closed = true;
        session->stream->WritesDone();
      } else {
        v1::WorkerMessage hb;
        hb.mutable_heartbeat()->set_in_flight(in_flight);
        wrote = session->stream->Write(hb);
      }
    }
    if (wrote) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.heartbeats_sent;
    }
    lk.lock();
    if (close) half_closed_at = now;
    next_heartbeat = now + std::chrono::milliseconds(session->heartbeat_ms);
  }
}

void FleetWorker::Enqueue(const v1::MeasureRequest& request) {
  Job job;
  job.request_id = request.request_id();
  job.options = rpc::FromProto(request.options());
  job.inputs.reserve(size_t(request.inputs_size()));
  for (const v1::MeasureInput& in : request.inputs()) job.inputs.push_back(rpc::FromProto(in));
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.requests_received;
  }
  std::lock_guard<std::mutex> lock(queue_mu_);
  if (!fault_name_.empty()) {
    // TEST ONLY: the runner (started with test faults enabled) acts on this line.
    for (MeasureInput& in : job.inputs) {
      if (++inject_counter_ % options_.inject_every != 0) continue;
      if (!in.trace_text.empty() && in.trace_text.back() != '\n') in.trace_text += '\n';
      in.trace_text += "# tunefarm-test-fault: " + fault_name_ + "\n";
    }
  }
  queued_candidates_ += int(job.inputs.size());
  queue_.push_back(std::move(job));
  queue_cv_.notify_all();
}

void FleetWorker::MeasureLoop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lk(queue_mu_);
      while (queue_.empty() && !Stopping()) queue_cv_.wait_for(lk, kPoll);
      // Requests not started when stopping are left to the tuner to re-dispatch.
      if (Stopping()) break;
      job = std::move(queue_.front());
      queue_.pop_front();
      queued_candidates_ -= int(job.inputs.size());
      measuring_candidates_ = int(job.inputs.size());
    }
    std::vector<MeasureResult> results;
    if (!job.inputs.empty()) results = measurer_->Measure(job.inputs, job.options);
    v1::MeasureResults message;
    message.set_request_id(job.request_id);
    for (size_t i = 0; i < job.inputs.size(); ++i) {
      MeasureResult r;
      if (i < results.size()) {
        r = std::move(results[i]);
      } else {
        r.error = MeasureErrorKind::kWorkerLost;  // a Measurer that broke its contract
        r.error_message = "the measurer returned no result for this candidate";
      }
      r.candidate_id = job.inputs[i].candidate_id;  // one result per candidate, by id
      r.synthetic = r.synthetic || IsSyntheticDevice(options_.device);
      r.emulated = r.emulated || hello_->register_().emulated();  // this worker runs under qemu
      *message.add_results() = rpc::ToProto(r);
    }
    Deliver(std::move(message));
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      measuring_candidates_ = 0;
    }
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.candidates_measured += int64_t(job.inputs.size());
  }
  measure_loop_done_ = true;
}

void FleetWorker::Deliver(v1::MeasureResults results) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (live_ != nullptr && !live_->half_closed) {
    v1::WorkerMessage m;
    m.mutable_results()->Swap(&results);
    if (live_->stream->Write(m)) {
      std::lock_guard<std::mutex> stats_lock(stats_mu_);
      ++stats_.results_sent;
      return;
    }
    m.mutable_results()->Swap(&results);
  }
  // Not written: kept for the next connection (the tuner drops duplicates).
  unsent_.push_back(std::make_unique<v1::MeasureResults>(std::move(results)));
}

}  // namespace tunefarm
