// TestDeviceStreams: many Fleet.Connect worker streams from one process, for
// the many-streams test (tests/daemon/fleet_many_streams_test.cpp) and bench
// (bench/fleet/stream_capacity.cpp). Each stream behaves as a `--device test`
// worker: it registers (synthetic, on one device key) and answers every
// MeasureRequest at once with a synthetic time; it sends no heartbeats, so
// the daemon under test needs a lease longer than the run.
//
// Streams are client reactors of gRPC's callback API (no thread per stream),
// spread round-robin over `channels` channels, each with a connection of its
// own (a local subchannel pool), so no one HTTP/2 connection carries more than
// streams / channels of them.
//
// Thread safety: the counters are atomics; Close() and the destructor must
// not race each other. Lifetime: each stream is owned by this object and
// deleted by it after its OnDone; the destructor cancels every stream and
// waits for all of them.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/v1/fleet.grpc.pb.h"

namespace tunefarm::daemon::testing {

class TestDeviceStreams {
 public:
  struct Counters {
    std::atomic<int> registered{0};     // streams that received Registered
    std::atomic<int> with_work{0};      // streams that received at least one MeasureRequest
    std::atomic<int64_t> answered{0};   // candidates answered
    std::atomic<int> done{0};           // streams ended (OnDone)
    std::atomic<int> failed{0};         // streams that ended with a status other than OK or CANCELLED
  };

  TestDeviceStreams(const std::string& address, int streams, int channels, const std::string& device_key,
                    int max_in_flight) {
    for (int c = 0; c < channels; ++c) {
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per channel
      auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
      stubs_.push_back(v1::Fleet::NewStub(channel));
    }
    for (int i = 0; i < streams; ++i) {
      v1::WorkerMessage hello;
      v1::Register* reg = hello.mutable_register_();
      reg->set_device_key(device_key);
      reg->set_device("test");
      reg->set_hostname("stream" + std::to_string(i));
      reg->set_max_in_flight(max_in_flight);
      reg->set_synthetic(true);
      streams_.push_back(std::make_unique<Stream>(&counters_, std::move(hello)));
    }
    // Started after all are built: a stream is reachable by gRPC from StartCall on.
    for (int i = 0; i < streams; ++i) streams_[i]->Start(stubs_[i % channels].get());
  }

  ~TestDeviceStreams() { Close(); }

  const Counters& counters() const { return counters_; }
  int size() const { return int(streams_.size()); }

  // Waits until `pred` holds, up to `timeout`; false if it did not.
  template <class Pred>
  static bool WaitFor(Pred pred, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= end) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Cancels every stream (as a worker that goes away) and waits until all
  // have ended; idempotent.
  void Close() {
    for (auto& s : streams_) s->Cancel();
    for (auto& s : streams_) s->AwaitDone();
  }

 private:
  class Stream final : public grpc::ClientBidiReactor<v1::WorkerMessage, v1::TunerMessage> {
   public:
    Stream(Counters* counters, v1::WorkerMessage hello) : counters_(counters) { outgoing_.push_back(std::move(hello)); }

    void Start(v1::Fleet::Stub* stub) {
      stub->async()->Connect(&context_, this);
      {
        std::lock_guard<std::mutex> lock(mu_);
        StartNextWriteLocked();
      }
      StartRead(&incoming_);
      StartCall();
    }

    void Cancel() { context_.TryCancel(); }

    void AwaitDone() {
      std::unique_lock<std::mutex> lock(mu_);
      done_cv_.wait(lock, [&] { return done_; });
    }

    void OnReadDone(bool ok) override {
      if (!ok) return;  // the call is ending: OnDone follows
      if (incoming_.has_registered()) {
        ++counters_->registered;
      } else if (incoming_.has_measure()) {
        if (!got_work_) {
          got_work_ = true;
          ++counters_->with_work;
        }
        v1::WorkerMessage answer;
        v1::MeasureResults* results = answer.mutable_results();
        results->set_request_id(incoming_.measure().request_id());
        for (const v1::MeasureInput& in : incoming_.measure().inputs()) {
          v1::MeasureResult* r = results->add_results();
          r->set_candidate_id(in.candidate_id());
          r->add_repeat_seconds(1e-4);
          r->set_synthetic(true);
        }
        counters_->answered += incoming_.measure().inputs_size();
        std::lock_guard<std::mutex> lock(mu_);
        outgoing_.push_back(std::move(answer));
        StartNextWriteLocked();
      }
      StartRead(&incoming_);
    }

    void OnWriteDone(bool ok) override {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (ok) StartNextWriteLocked();
    }

    void OnDone(const grpc::Status& status) override {
      if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) ++counters_->failed;
      ++counters_->done;
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
      done_cv_.notify_all();
    }

   private:
    void StartNextWriteLocked() {
      if (writing_ || outgoing_.empty()) return;
      in_flight_ = std::move(outgoing_.front());
      outgoing_.pop_front();
      writing_ = true;
      StartWrite(&in_flight_);
    }

    Counters* const counters_;
    grpc::ClientContext context_;
    v1::TunerMessage incoming_;  // the read chain's (one read at a time)
    bool got_work_ = false;      // the read chain's
    std::mutex mu_;
    std::condition_variable done_cv_;
    std::deque<v1::WorkerMessage> outgoing_;  // GUARDED_BY(mu_)
    v1::WorkerMessage in_flight_;             // GUARDED_BY(mu_): being written, while writing_
    bool writing_ = false;                    // GUARDED_BY(mu_)
    bool done_ = false;                       // GUARDED_BY(mu_)
  };

  Counters counters_;
  std::vector<std::unique_ptr<v1::Fleet::Stub>> stubs_;
  std::vector<std::unique_ptr<Stream>> streams_;
};

}  // namespace tunefarm::daemon::testing
