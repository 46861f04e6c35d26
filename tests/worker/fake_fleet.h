// A fake tuner for FleetWorker tests: an in-process Fleet service that
// authorizes like the daemon, answers Register with Registered, records
// everything the worker sends, and lets the test push MeasureRequests.
// Also a helper that runs a FleetWorker on its own thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/v1/fleet.grpc.pb.h"
#include "tunefarm/worker/fleet_worker.h"

namespace tunefarm::testing {

using namespace std::chrono_literals;
using FleetStream = grpc::ServerReaderWriter<v1::TunerMessage, v1::WorkerMessage>;

class FakeFleet final : public v1::Fleet::Service {
 public:
  explicit FakeFleet(rpc::ServerSecurity security) : security_(std::move(security)) {}

  grpc::Status Connect(grpc::ServerContext* context, FleetStream* stream) override {
    grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kWorker);
    if (!auth.ok()) {
      Update([&] { ++rejected; });
      return auth;
    }
    v1::WorkerMessage first;
    if (!stream->Read(&first)) return grpc::Status(grpc::StatusCode::CANCELLED, "no first message");
    if (!first.has_register_()) {
      Update([&] { ++protocol_errors; });
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Register must come first");
    }
    v1::TunerMessage reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      registers.push_back(first.register_());
      reply.mutable_registered()->set_worker_id("fake#" + std::to_string(registers.size()));
    }
    reply.mutable_registered()->set_heartbeat_period_ms(100);
    reply.mutable_registered()->set_lease_ms(2000);
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      stream->Write(reply);
      current_ = stream;
    }
    cv_.notify_all();
    v1::WorkerMessage msg;
    while (stream->Read(&msg)) {
      Update([&] {
        if (msg.has_heartbeat()) heartbeats.push_back(msg.heartbeat().in_flight());
        if (msg.has_results()) results.push_back(msg.results());
        if (msg.has_register_()) ++protocol_errors;  // Register only once per stream
      });
    }
    {
      std::lock_guard<std::mutex> lock(write_mu_);
      current_ = nullptr;
    }
    Update([&] { ++streams_ended; });
    return grpc::Status::OK;
  }

  // Sends a request down the live stream; false when no worker is connected.
  bool Send(const v1::MeasureRequest& request) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (current_ == nullptr) return false;
    v1::TunerMessage m;
    *m.mutable_measure() = request;
    return current_->Write(m);
  }

  // Waits until `done` (called with the lock held) holds; false on timeout.
  bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, done);
  }
  template <typename F>
  auto Read(F f) {
    std::lock_guard<std::mutex> lock(mu_);
    return f();
  }

  // Every candidate id answered so far, with how often.
  std::map<std::string, int> AnsweredLocked() const {
    std::map<std::string, int> ids;
    for (const auto& m : results) {
      for (const auto& r : m.results()) ++ids[r.candidate_id()];
    }
    return ids;
  }

  // GUARDED_BY(mu_): what the worker sent.
  std::vector<v1::Register> registers;
  std::vector<int> heartbeats;  // in_flight of each heartbeat
  std::vector<v1::MeasureResults> results;
  int rejected = 0, protocol_errors = 0, streams_ended = 0;

 private:
  template <typename F>
  void Update(F f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      f();
    }
    cv_.notify_all();
  }

  const rpc::ServerSecurity security_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::mutex write_mu_;
  FleetStream* current_ = nullptr;  // GUARDED_BY(write_mu_)
};

// A FakeFleet served on 127.0.0.1 (port 0: any free port), plaintext, with
// worker token "good-token".
struct FakeTuner {
  std::unique_ptr<FakeFleet> fleet;
  rpc::RunningServer running;

  explicit FakeTuner(int port = 0) {
    rpc::ServerSecurity security;
    security.insecure = true;
    security.worker_tokens = {"good-token"};
    fleet = std::make_unique<FakeFleet>(security);
    auto started = rpc::StartServer("127.0.0.1:" + std::to_string(port), security, 16 << 20, {fleet.get()});
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (started.ok()) running = std::move(started).value();
  }
  ~FakeTuner() { Shutdown(); }
  void Shutdown() {
    if (!running.server) return;
    // A short deadline cancels the open stream, as a killed tuner would.
    running.server->Shutdown(std::chrono::system_clock::now() + 100ms);
    running.server->Wait();
    running.server.reset();
  }
  int port() const { return running.port; }
};

// A FleetWorker running on its own thread, its log captured.
class WorkerThread {
 public:
  explicit WorkerThread(FleetWorkerOptions options) {
    options.log = [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.emplace_back(line);
    };
    auto created = FleetWorker::Create(std::move(options));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return;
    worker_ = std::move(created).value();
    thread_ = std::thread([this] { run_status_ = worker_->Run(); });
  }
  ~WorkerThread() { (void)Stop(); }
  // Stops the worker and waits for Run to return; its status.
  Status Stop() {
    if (worker_) worker_->Stop();
    if (thread_.joinable()) thread_.join();
    return run_status_;
  }
  FleetWorker* worker() { return worker_.get(); }
  bool Logged(const std::string& part) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& line : log_) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  }
  std::string Log() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const auto& line : log_) all += line + "\n";
    return all;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> log_;
  std::unique_ptr<FleetWorker> worker_;
  std::thread thread_;
  Status run_status_;
};

inline FleetWorkerOptions LoopbackOptions(int port, const std::string& device,
                                          const std::string& token = "good-token") {
  FleetWorkerOptions o;
  o.tuner_address = "127.0.0.1:" + std::to_string(port);
  o.security.insecure = true;
  o.security.token = token;
  o.device = device;
  o.initial_backoff = 50ms;
  o.max_backoff = 400ms;
  return o;
}

// Polls `done` until it holds or `timeout` passes.
inline bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

}  // namespace tunefarm::testing
