// The Fleet service's sessions (one callback reactor per stream) in process,
// on loopback, driven by raw streams: Registered comes first, even for
// candidates queued before the worker joined; protocol errors end the stream
// with their INVALID_ARGUMENT; a worker that goes away or falls silent for a
// lease has its candidates measured by another; after Shutdown, sessions end
// and a new worker is refused with UNAVAILABLE.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"

namespace tunefarm::daemon {
namespace {

using Stream = grpc::ClientReaderWriter<v1::WorkerMessage, v1::TunerMessage>;
const char* const kKey = "service-test";

// A service and its server on 127.0.0.1:0; streams open with a deadline, so
// a test that goes wrong fails instead of hanging.
class FleetServiceTest : public ::testing::Test {
 protected:
  void Start(rpc::FleetLimits limits = {}, std::vector<std::string> worker_tokens = {}) {
    security_.insecure = true;
    security_.worker_tokens = std::move(worker_tokens);
    service_ = std::make_unique<FleetServiceImpl>(&dispatcher_, security_, limits);
    auto server = rpc::StartServer("127.0.0.1:0", security_, limits.max_message_bytes, {service_.get()});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    stub_ = v1::Fleet::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_.port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (service_) service_->Shutdown();
    if (server_.server) server_.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.server.reset();
    service_.reset();
  }

  struct Call {
    grpc::ClientContext context;
    std::unique_ptr<Stream> stream;
  };
  std::unique_ptr<Call> Open(const std::string& token = "") {
    auto call = std::make_unique<Call>();
    call->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) call->context.AddMetadata("authorization", "Bearer " + token);
    call->stream = stub_->Connect(&call->context);
    return call;
  }
  static v1::WorkerMessage RegisterMessage(const std::string& host, int max_in_flight = 4) {
    v1::WorkerMessage msg;
    v1::Register* reg = msg.mutable_register_();
    reg->set_device_key(kKey);
    reg->set_device("test");
    reg->set_hostname(host);
    reg->set_max_in_flight(max_in_flight);
    return msg;
  }
  // Opens a stream and registers; the worker id, or "" (a failure is recorded).
  std::string Join(Call* call, const std::string& host) {
    v1::TunerMessage reply;
    EXPECT_TRUE(call->stream->Write(RegisterMessage(host)));
    EXPECT_TRUE(call->stream->Read(&reply));
    EXPECT_TRUE(reply.has_registered()) << reply.DebugString();
    EXPECT_EQ(reply.registered().lease_ms(), limits_lease_ms_);
    return reply.registered().worker_id();
  }
  // Sends `messages`, half-closes, and returns how the service ended the stream.
  grpc::Status Exchange(Call* call, const std::vector<v1::WorkerMessage>& messages) {
    for (const v1::WorkerMessage& m : messages) call->stream->Write(m);
    call->stream->WritesDone();
    v1::TunerMessage ignored;
    while (call->stream->Read(&ignored)) {
    }
    return call->stream->Finish();
  }
  static v1::WorkerMessage Answer(const v1::MeasureRequest& request) {
    v1::WorkerMessage msg;
    msg.mutable_results()->set_request_id(request.request_id());
    for (const v1::MeasureInput& in : request.inputs()) {
      v1::MeasureResult* r = msg.mutable_results()->add_results();
      r->set_candidate_id(in.candidate_id());
      r->add_repeat_seconds(1e-3);
    }
    return msg;
  }
  static std::vector<MeasureInput> Batch(int n) {
    std::vector<MeasureInput> inputs;
    for (int i = 0; i < n; ++i) inputs.push_back({"c" + std::to_string(i), "workload w() {}", "", "llvm"});
    return inputs;
  }

  // A batch measured on its own thread; abandoned (no results) when not done
  // within 30 s, and joined however the test ends (a failed assertion must
  // not leave a joinable thread).
  class Job {
   public:
    Job(FleetDispatcher* fleet, int n)
        : thread_([=, this] {
            results_ = fleet->Measure(kKey, Batch(n), {}, &abort_);
            done_ = true;
          }) {}
    ~Job() {
      abort_ = true;
      Results();
    }
    const std::vector<MeasureResult>& Results() {
      for (int i = 0; i < 3000 && !done_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      abort_ = true;
      if (thread_.joinable()) thread_.join();
      return results_;
    }

   private:
    std::atomic<bool> abort_{false}, done_{false};
    std::vector<MeasureResult> results_;
    std::thread thread_;
  };

  FleetDispatcher dispatcher_;
  rpc::ServerSecurity security_;
  std::unique_ptr<FleetServiceImpl> service_;
  rpc::RunningServer server_;
  std::unique_ptr<v1::Fleet::Stub> stub_;
  int limits_lease_ms_ = rpc::FleetLimits().lease_ms;
};

TEST_F(FleetServiceTest, RegisteredComesFirstThenTheCandidatesQueuedBeforeTheWorkerJoined) {
  Start();
  Job job(&dispatcher_, 3);
  auto call = Open();
  const std::string id = Join(call.get(), "early");
  ASSERT_FALSE(id.empty());
  v1::TunerMessage msg;
  int answered = 0;
  while (answered < 3 && call->stream->Read(&msg)) {
    ASSERT_TRUE(msg.has_measure()) << msg.DebugString();
    answered += msg.measure().inputs_size();
    ASSERT_TRUE(call->stream->Write(Answer(msg.measure())));
  }
  const std::vector<MeasureResult>& results = job.Results();
  ASSERT_EQ(results.size(), 3u);
  for (const MeasureResult& r : results) {
    EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.error_message;
    EXPECT_EQ(r.worker, id);
    EXPECT_TRUE(r.synthetic) << "a test device's results are synthetic whatever they say";
  }
  EXPECT_TRUE(Exchange(call.get(), {}).ok());
  EXPECT_EQ(dispatcher_.WorkerCount(), 0) << "a worker that closed its stream is still registered";
}

// A board worker under qemu: its results are emulated whatever they say,
// whether its Register says so or only its fingerprint's arch ("-emulated",
// a worker of an older version). A real worker's results are not.
TEST_F(FleetServiceTest, AnEmulatedWorkersResultsAreEmulated) {
  Start();
  for (const char* how : {"register", "fingerprint", "real"}) {
    SCOPED_TRACE(how);
    Job job(&dispatcher_, 2);
    auto call = Open();
    v1::WorkerMessage hello = RegisterMessage(std::string("board-") + how);
    v1::Register* reg = hello.mutable_register_();
    reg->set_device("cpu");
    reg->mutable_fingerprint()->set_isa("aarch64");
    reg->mutable_fingerprint()->set_arch(std::string(how) == "fingerprint" ? "cortex-a72-emulated" : "cortex-a72");
    reg->set_emulated(std::string(how) == "register");
    ASSERT_TRUE(call->stream->Write(hello));
    v1::TunerMessage msg;
    ASSERT_TRUE(call->stream->Read(&msg));
    ASSERT_TRUE(msg.has_registered()) << msg.DebugString();
    int answered = 0;
    while (answered < 2 && call->stream->Read(&msg)) {
      ASSERT_TRUE(msg.has_measure()) << msg.DebugString();
      answered += msg.measure().inputs_size();
      ASSERT_TRUE(call->stream->Write(Answer(msg.measure())));  // results that do not say emulated
    }
    const std::vector<MeasureResult>& results = job.Results();
    ASSERT_EQ(results.size(), 2u);
    for (const MeasureResult& r : results) {
      EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.error_message;
      EXPECT_EQ(r.emulated, std::string(how) != "real");
      EXPECT_FALSE(r.synthetic);
    }
    EXPECT_TRUE(Exchange(call.get(), {}).ok());
  }
}

TEST_F(FleetServiceTest, ProtocolErrorsEndTheStreamWithTheirMessage) {
  Start({}, {"worker-token-0123456789"});
  struct Case {
    std::vector<v1::WorkerMessage> messages;
    grpc::StatusCode code;
    std::string message;
  };
  v1::WorkerMessage heartbeat;
  heartbeat.mutable_heartbeat();
  v1::WorkerMessage bad = RegisterMessage("bad");
  bad.mutable_register_()->set_max_in_flight(0);
  v1::WorkerMessage measuring = RegisterMessage("measuring");
  measuring.mutable_register_()->set_device("cpu");
  const std::vector<Case> cases = {
      {{}, grpc::StatusCode::CANCELLED, "the worker closed before registering"},
      {{heartbeat}, grpc::StatusCode::INVALID_ARGUMENT, "the first message on Fleet.Connect must be Register"},
      {{bad}, grpc::StatusCode::INVALID_ARGUMENT, "register.max_in_flight must be in 1..1024, got 0"},
      {{RegisterMessage("twice"), RegisterMessage("twice")}, grpc::StatusCode::INVALID_ARGUMENT,
       "Register may be sent only once per stream"},
      {{RegisterMessage("empty"), v1::WorkerMessage()}, grpc::StatusCode::INVALID_ARGUMENT,
       "an empty WorkerMessage (no heartbeat, results or register)"},
  };
  for (const Case& c : cases) {
    auto call = Open("worker-token-0123456789");
    grpc::Status st = Exchange(call.get(), c.messages);
    EXPECT_EQ(st.error_code(), c.code) << c.message << ": " << st.error_message();
    EXPECT_EQ(st.error_message(), c.message);
  }
  EXPECT_EQ(dispatcher_.WorkerCount(), 0) << "a stream that broke the protocol left its worker registered";

  auto stranger = Open();
  EXPECT_EQ(Exchange(stranger.get(), {RegisterMessage("stranger")}).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // A synthetic device holds the key: a measuring worker is refused on it.
  auto held = Open("worker-token-0123456789");
  ASSERT_FALSE(Join(held.get(), "synthetic").empty());
  auto refused = Open("worker-token-0123456789");
  grpc::Status st = Exchange(refused.get(), {measuring});
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_NE(st.error_message().find("device key 'service-test' is served by a synthetic test device"),
            std::string::npos)
      << st.error_message();
  EXPECT_TRUE(Exchange(held.get(), {}).ok());
}

// The candidates of a worker that cancels its stream, and of one that stays
// connected but silent past its lease, are measured by another worker.
TEST_F(FleetServiceTest, AGoneOrSilentWorkersCandidatesGoToAnotherWorker) {
  rpc::FleetLimits limits;
  limits.heartbeat_ms = 100;
  limits.lease_ms = limits_lease_ms_ = 600;
  Start(limits);
  for (const bool cancel : {true, false}) {
    SCOPED_TRACE(cancel ? "cancelled" : "silent");
    auto lost = Open();
    const std::string lost_id = Join(lost.get(), "lost");
    Job job(&dispatcher_, 4);
    v1::TunerMessage msg;
    ASSERT_TRUE(lost->stream->Read(&msg) && msg.has_measure()) << msg.DebugString();
    EXPECT_EQ(msg.measure().inputs_size(), 4);
    if (cancel) lost->context.TryCancel();  // else: no heartbeat, no results until the lease runs out
    // The other worker joins after the candidates went out, and heartbeats.
    auto other = Open();
    const std::string other_id = Join(other.get(), "other");
    std::atomic<bool> stop{false};
    std::mutex write_mu;  // one write at a time on a stream
    std::thread beats([&] {
      v1::WorkerMessage beat;
      beat.mutable_heartbeat();
      while (!stop) {
        {
          std::lock_guard<std::mutex> lock(write_mu);
          other->stream->Write(beat);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    int answered = 0;
    while (answered < 4 && other->stream->Read(&msg)) {
      EXPECT_TRUE(msg.has_measure());
      answered += msg.measure().inputs_size();
      std::lock_guard<std::mutex> lock(write_mu);
      other->stream->Write(Answer(msg.measure()));
    }
    stop = true;
    beats.join();
    const std::vector<MeasureResult>& results = job.Results();
    ASSERT_EQ(results.size(), 4u);
    for (const MeasureResult& r : results) EXPECT_EQ(r.worker, other_id) << r.candidate_id;
    if (!cancel) {
      // The silent worker's stream was ended by the service.
      while (lost->stream->Read(&msg)) {
      }
      EXPECT_FALSE(lost->stream->Finish().ok());
    }
    EXPECT_EQ(dispatcher_.WorkerCount(), 1);
    EXPECT_TRUE(Exchange(other.get(), {}).ok());
    EXPECT_EQ(dispatcher_.WorkerCount(), 0);
  }
  EXPECT_EQ(dispatcher_.Snapshot().redispatched, 8);
}

TEST_F(FleetServiceTest, ShutdownEndsTheSessionsAndRefusesNewWorkers) {
  Start();
  auto call = Open();
  ASSERT_FALSE(Join(call.get(), "before").empty());
  EXPECT_EQ(service_->OpenStreams(), 1);
  service_->Shutdown();
  v1::TunerMessage msg;
  EXPECT_FALSE(call->stream->Read(&msg)) << "the session outlived Shutdown";
  EXPECT_EQ(call->stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  auto late = Open();
  grpc::Status st = Exchange(late.get(), {RegisterMessage("late")});
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  EXPECT_EQ(st.error_message(), "the tuner is shutting down");
  EXPECT_EQ(dispatcher_.WorkerCount(), 0);
}

}  // namespace
}  // namespace tunefarm::daemon
