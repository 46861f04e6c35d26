// Who may talk to the daemon, and what it does with bad requests: strangers
// (no credentials, wrong CA, bad token, workers without a client certificate)
// are rejected and create nothing; a certificate acts only in its role; 200+ malformed, truncated and oversized
// requests all get error statuses and the daemon keeps serving.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <random>
#include <thread>

#include <grpcpp/generic/generic_stub.h>

#include "fleet_harness.h"

namespace tunefarm::fleet_test {
namespace {

class FleetSecurity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("tunefarm_fleetsec_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    MakeTlsMaterial(*dir_);
    port_ = FreePort();
    DaemonOptions o;
    config_ = new fs::path(WriteFleetConfig(*dir_, port_, *dir_ / "farm.db", o));
    daemon_ = StartDaemon(*config_, *dir_ / "daemon.log").release();
  }
  static void TearDownTestSuite() {
    delete daemon_;
    fs::remove_all(*dir_);
    delete dir_;
    delete config_;
  }
  static std::string Addr() { return "127.0.0.1:" + std::to_string(port_); }
  static rpc::ClientSecurity Good() { return ClientCreds(*dir_, true, "client-token-0123456789"); }

  static grpc::Status Submit(const rpc::ClientSecurity& sec, const v1::SubmitJobRequest& req) {
    auto stub = TunerStub(port_, sec);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 10);
    v1::Job job;
    return stub->SubmitJob(&ctx, req, &job);
  }
  static v1::SubmitJobRequest ValidRequest() {
    v1::SubmitJobRequest req;
    req.add_workloads(SmallMatmul());
    req.set_device_key("nobody-has-this-key");
    req.set_trials(8);
    return req;
  }
  static int JobCount() {
    auto sec = Good();
    auto stub = TunerStub(port_, sec);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 10);
    v1::ListJobsResponse resp;
    grpc::Status st = stub->ListJobs(&ctx, {}, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.jobs_size();
  }
  // A unary call with raw bytes as the request.
  static grpc::Status RawCall(const rpc::ClientSecurity& sec, const std::string& method, const std::string& bytes,
                              std::string* response = nullptr) {
    auto channel = rpc::MakeChannel(Addr(), sec);
    grpc::GenericStub stub(*channel);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 10);
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1), reply;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &reply, [&](grpc::Status s) { done.set_value(s); });
    grpc::Status st = done.get_future().get();
    if (response && st.ok()) {
      std::vector<grpc::Slice> slices;
      (void)reply.Dump(&slices);
      response->clear();
      for (const auto& s : slices) response->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    return st;
  }
  static bool Serving() {
    std::string reply;
    grpc::Status st = RawCall(Good(), "/grpc.health.v1.Health/Check", "", &reply);
    return st.ok() && reply == std::string("\x08\x01", 2);  // HealthCheckResponse{status: SERVING}
  }
  // Opens Fleet.Connect with `sec`, sends `first`, returns the final status.
  static grpc::Status FleetCall(const rpc::ClientSecurity& sec, const std::vector<v1::WorkerMessage>& messages) {
    auto channel = rpc::MakeChannel(Addr(), sec);
    auto stub = v1::Fleet::NewStub(*channel);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 10);
    auto stream = stub->Connect(&ctx);
    for (const auto& m : messages) {
      if (!stream->Write(m)) break;
    }
    stream->WritesDone();
    v1::TunerMessage reply;
    while (stream->Read(&reply)) {
    }
    return stream->Finish();
  }
  static v1::WorkerMessage ValidRegister() {
    v1::WorkerMessage m;
    v1::Register* r = m.mutable_register_();
    r->set_device_key("sec-test");
    r->set_device("test");
    r->set_hostname("h");
    r->set_max_in_flight(2);
    return m;
  }

  static fs::path* dir_;
  static fs::path* config_;
  static int port_;
  static Child* daemon_;
};

fs::path* FleetSecurity::dir_ = nullptr;
fs::path* FleetSecurity::config_ = nullptr;
int FleetSecurity::port_ = 0;
Child* FleetSecurity::daemon_ = nullptr;

TEST_F(FleetSecurity, StrangersAreRejectedAndCreateNothing) {
  ASSERT_TRUE(Serving()) << daemon_->Log();
  int jobs_before = JobCount();
  grpc::Status none = Submit(ClientCreds(*dir_, true, ""), ValidRequest());
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  grpc::Status bad_token = Submit(ClientCreds(*dir_, true, "not-the-token-at-all"), ValidRequest());
  EXPECT_EQ(bad_token.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // A worker token is not a client token.
  EXPECT_EQ(Submit(ClientCreds(*dir_, true, "worker-token-0123456789"), ValidRequest()).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // Trusting another CA: the daemon's certificate does not verify.
  grpc::Status wrong_ca = Submit(ClientCreds(*dir_, true, "client-token-0123456789", "other-ca.pem"), ValidRequest());
  EXPECT_EQ(wrong_ca.error_code(), grpc::StatusCode::UNAVAILABLE) << wrong_ca.error_message();
  // A client certificate from another CA fails the handshake, token or not.
  grpc::Status rogue = Submit(ClientCreds(*dir_, true, "client-token-0123456789", "ca.pem", "rogue"), ValidRequest());
  EXPECT_NE(rogue.error_code(), grpc::StatusCode::OK);
  // Plaintext to a TLS daemon.
  rpc::ClientSecurity plain;
  plain.insecure = true;
  plain.token = "client-token-0123456789";
  EXPECT_NE(Submit(plain, ValidRequest()).error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(JobCount(), jobs_before) << "a rejected caller created a job";
  // Workers: a token over TLS is not enough, a rogue certificate neither.
  grpc::Status no_cert = FleetCall(ClientCreds(*dir_, true, "worker-token-0123456789"), {ValidRegister()});
  EXPECT_EQ(no_cert.error_code(), grpc::StatusCode::UNAUTHENTICATED) << no_cert.error_message();
  EXPECT_NE(FleetCall(ClientCreds(*dir_, true, "", "ca.pem", "rogue"), {ValidRegister()}).error_code(),
            grpc::StatusCode::OK);
  // The right credentials work: a token, or a client certificate.
  EXPECT_TRUE(Submit(Good(), ValidRequest()).ok());
  v1::SubmitJobRequest by_cert = ValidRequest();
  EXPECT_TRUE(Submit(ClientCreds(*dir_, true, "", "ca.pem", "client"), by_cert).ok());
  EXPECT_EQ(JobCount(), jobs_before + 2);
}

// Workers of `device_key` the daemon lists now.
int WorkersOfKey(v1::Tuner::Stub& stub, const rpc::ClientSecurity& sec, const std::string& device_key) {
  grpc::ClientContext ctx;
  rpc::PrepareCall(&ctx, sec, 10);
  v1::FleetStatusResponse status;
  grpc::Status st = stub.FleetStatus(&ctx, {}, &status);
  EXPECT_TRUE(st.ok()) << st.error_message();
  int n = 0;
  for (const auto& w : status.workers()) n += w.device_key() == device_key;
  return n;
}

// Roles in certificates (rpc/security.h): only a certificate with the worker
// role registers a worker; a client's, or one without a role, is refused
// with PERMISSION_DENIED before anything is registered. A worker's
// certificate is refused as a client unless a client token comes with it.
TEST_F(FleetSecurity, ACertificateActsOnlyInItsRole) {
  ASSERT_TRUE(Serving()) << daemon_->Log();
  auto tuner = TunerStub(port_, Good());
  v1::WorkerMessage reg = ValidRegister();
  reg.mutable_register_()->set_device_key("role-test");
  // Registers with `cert`, and while the stream is open counts the daemon's
  // workers of the key; returns the stream's status.
  auto connect = [&](const std::string& cert, int* registered) {
    rpc::ClientSecurity sec = ClientCreds(*dir_, true, "", "ca.pem", cert);
    auto channel = rpc::MakeChannel(Addr(), sec);
    auto stub = v1::Fleet::NewStub(*channel);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 10);
    auto stream = stub->Connect(&ctx);
    stream->Write(reg);
    v1::TunerMessage reply;
    bool answered = stream->Read(&reply);
    *registered = WorkersOfKey(*tuner, Good(), "role-test");
    if (answered) {
      EXPECT_TRUE(reply.has_registered());
      stream->WritesDone();
      while (stream->Read(&reply)) {
      }
    }
    return stream->Finish();
  };
  int registered = -1;
  grpc::Status worker = connect("worker", &registered);
  EXPECT_TRUE(worker.ok()) << worker.error_message();
  EXPECT_EQ(registered, 1) << "the worker certificate did not register";
  for (const std::string cert : {"client", "plain"}) {
    grpc::Status refused = connect(cert, &registered);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << cert << ": " << refused.error_message();
    EXPECT_NE(refused.error_message().find("tunefarm:role=worker"), std::string::npos) << refused.error_message();
    EXPECT_EQ(registered, 0) << "a " << cert << " certificate registered a worker";
  }
  EXPECT_EQ(daemon_->Log().find("(device key role-test"), daemon_->Log().rfind("(device key role-test"))
      << "more than the one worker joined:\n" << daemon_->Log();

  int jobs_before = JobCount();
  grpc::Status as_client = Submit(ClientCreds(*dir_, true, "", "ca.pem", "worker"), ValidRequest());
  EXPECT_EQ(as_client.error_code(), grpc::StatusCode::PERMISSION_DENIED) << as_client.error_message();
  EXPECT_NE(as_client.error_message().find("worker"), std::string::npos) << as_client.error_message();
  EXPECT_EQ(JobCount(), jobs_before) << "a worker certificate created a job";
  // A client certificate, one without a role (issued before roles existed),
  // and a worker's with a client token all act as clients.
  EXPECT_TRUE(Submit(ClientCreds(*dir_, true, "", "ca.pem", "client"), ValidRequest()).ok());
  EXPECT_TRUE(Submit(ClientCreds(*dir_, true, "", "ca.pem", "plain"), ValidRequest()).ok());
  EXPECT_TRUE(Submit(ClientCreds(*dir_, true, "client-token-0123456789", "ca.pem", "worker"), ValidRequest()).ok());
  EXPECT_EQ(JobCount(), jobs_before + 3);
}

// A device key names interchangeable hardware: while a test device serves a
// key, a worker that measures cannot join it, nor a test device a key whose
// workers measure (their times would be one job's search and best).
TEST_F(FleetSecurity, TestDevicesAndMeasuringWorkersNeverShareAKey) {
  rpc::ClientSecurity sec = ClientCreds(*dir_, true, "", "ca.pem", "worker");
  auto open = [&](const std::string& device, const std::string& key, grpc::ClientContext* ctx) {
    auto channel = rpc::MakeChannel(Addr(), sec);
    auto stub = v1::Fleet::NewStub(*channel);
    rpc::PrepareCall(ctx, sec, 10);
    auto stream = stub->Connect(ctx);
    v1::WorkerMessage reg = ValidRegister();
    reg.mutable_register_()->set_device(device);
    reg.mutable_register_()->set_device_key(key);
    stream->Write(reg);
    return stream;
  };
  for (const auto& [first, second] : {std::pair<std::string, std::string>{"test", "cpu"}, {"cpu", "test"}}) {
    const std::string key = "mixed-" + first;
    grpc::ClientContext held_ctx;
    auto held = open(first, key, &held_ctx);
    v1::TunerMessage reply;
    ASSERT_TRUE(held->Read(&reply) && reply.has_registered()) << first;
    grpc::ClientContext ctx;
    auto refused = open(second, key, &ctx);
    refused->WritesDone();
    while (refused->Read(&reply)) {
    }
    grpc::Status st = refused->Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << second << " joined " << key;
    EXPECT_NE(st.error_message().find("device key '" + key + "'"), std::string::npos) << st.error_message();
    held->WritesDone();
    while (held->Read(&reply)) {
    }
    EXPECT_TRUE(held->Finish().ok());
  }
}

TEST_F(FleetSecurity, TwoHundredMalformedRequestsGetErrorsAndTheDaemonKeepsServing) {
  int jobs_before = JobCount();
  std::mt19937 rng(7);
  int sent = 0, errors = 0, invalid_argument = 0;
  auto expect_error = [&](const grpc::Status& st, const std::string& what) {
    ++sent;
    if (!st.ok()) ++errors;
    if (st.error_code() == grpc::StatusCode::INVALID_ARGUMENT) ++invalid_argument;
    EXPECT_FALSE(st.ok()) << what << " was accepted";
  };
  // 1. Truncated workload texts (70): every prefix misses the closing brace.
  const std::string text = SmallMatmul();
  for (int i = 0; i < 70; ++i) {
    v1::SubmitJobRequest req = ValidRequest();
    req.set_workloads(0, text.substr(0, rng() % (text.size() - 3)));
    grpc::Status st = Submit(Good(), req);
    expect_error(st, "a truncated workload");
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(st.error_message().find("workloads[0]"), std::string::npos) << st.error_message();
  }
  // 2. Garbage inside the workload text (40).
  for (int i = 0; i < 40; ++i) {
    v1::SubmitJobRequest req = ValidRequest();
    std::string t = text;
    t.insert(t.find("sum"), std::string(1 + rng() % 3, "@#$%^&;{}"[rng() % 9]));
    req.set_workloads(0, t);
    expect_error(Submit(Good(), req), "a workload with garbage");
  }
  // 3. Fields out of range (30).
  std::vector<std::function<void(v1::SubmitJobRequest&)>> breakers = {
      [](auto& r) { r.set_trials(0); },
      [](auto& r) { r.set_trials(-5); },
      [](auto& r) { r.set_trials(100001); },
      [](auto& r) { r.set_batch_size(-1); },
      [](auto& r) { r.set_batch_size(5000); },
      [](auto& r) { r.set_device_key(""); },
      [](auto& r) { r.set_device_key("bad key!"); },
      [](auto& r) { r.set_device_key(std::string(200, 'k')); },
      [](auto& r) { r.set_job_id("has space"); },
      [](auto& r) { r.set_job_id(std::string(65, 'j')); },
      [](auto& r) { r.clear_workloads(); },
      [](auto& r) { for (int i = 0; i < 65; ++i) r.add_workloads(SmallMatmul()); },
      [](auto& r) { r.set_target("no-such-backend -mcpu=what"); },
      [](auto& r) { r.mutable_measure()->set_repeat(1000); },
      [](auto& r) { r.mutable_measure()->set_min_repeat_ms(-3); },
  };
  for (int i = 0; i < 30; ++i) {
    v1::SubmitJobRequest req = ValidRequest();
    breakers[i % breakers.size()](req);
    grpc::Status st = Submit(Good(), req);
    expect_error(st, "breaker " + std::to_string(i % breakers.size()));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  }
  // 4. Oversized: a workload over 64 KiB (10), a message over the 16 MiB limit (3).
  for (int i = 0; i < 10; ++i) {
    v1::SubmitJobRequest req = ValidRequest();
    req.set_workloads(0, text + "\n# " + std::string(70 * 1024 + i, 'x') + "\n");
    expect_error(Submit(Good(), req), "a 70 KiB workload");
  }
  for (int i = 0; i < 3; ++i) {
    v1::SubmitJobRequest req = ValidRequest();
    req.set_workloads(0, std::string(17 << 20, 'w'));
    grpc::Status st = Submit(Good(), req);
    expect_error(st, "a 17 MiB request");
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  }
  // 5. Bytes that are not protobuf at all, to every unary method (40).
  const char* methods[] = {"/tunefarm.v1.Tuner/SubmitJob", "/tunefarm.v1.Tuner/GetJob", "/tunefarm.v1.Tuner/CancelJob",
                           "/tunefarm.v1.Tuner/ListJobs"};
  for (int i = 0; i < 40; ++i) {
    std::string junk(1 + rng() % 64, '\0');
    for (char& c : junk) c = char(0x80 | (rng() & 0x7f));  // truncated varints everywhere
    expect_error(RawCall(Good(), methods[i % 4], junk), "junk bytes");
  }
  // 6. Job lookups and filters that make no sense (12).
  for (int i = 0; i < 4; ++i) {
    auto stub = TunerStub(port_, Good());
    grpc::ClientContext c1, c2, c3;
    auto sec = Good();
    rpc::PrepareCall(&c1, sec, 5);
    rpc::PrepareCall(&c2, sec, 5);
    rpc::PrepareCall(&c3, sec, 5);
    v1::Job job;
    v1::GetJobRequest empty, unknown;
    unknown.set_job_id("no-such-job-" + std::to_string(i));
    expect_error(stub->GetJob(&c1, empty, &job), "an empty job id");
    expect_error(stub->CancelJob(&c2, unknown, &job), "an unknown job id");
    v1::ListJobsRequest bad;
    bad.set_status("sleeping");
    v1::ListJobsResponse list;
    expect_error(stub->ListJobs(&c3, bad, &list), "an unknown status filter");
  }
  // 7. Broken worker sessions, with a valid worker certificate (30).
  rpc::ClientSecurity worker = ClientCreds(*dir_, true, "", "ca.pem", "worker");
  for (int i = 0; i < 30; ++i) {
    std::vector<v1::WorkerMessage> msgs;
    v1::WorkerMessage reg = ValidRegister();
    switch (i % 6) {
      case 0: msgs.push_back(v1::WorkerMessage()); break;  // empty first message
      case 1: { v1::WorkerMessage hb; hb.mutable_heartbeat()->set_in_flight(1); msgs.push_back(hb); break; }
      case 2: reg.mutable_register_()->set_max_in_flight(0); msgs.push_back(reg); break;
      case 3: reg.mutable_register_()->set_device_key("bad key"); msgs.push_back(reg); break;
      case 4: msgs = {reg, reg}; break;                     // registers twice
      case 5: reg.mutable_register_()->set_device(""); msgs.push_back(reg); break;
    }
    grpc::Status st = FleetCall(worker, msgs);
    expect_error(st, "worker session case " + std::to_string(i % 6));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "case " << i % 6 << ": " << st.error_message();
  }
  EXPECT_GE(sent, 200);
  EXPECT_EQ(errors, sent);
  EXPECT_GE(invalid_argument, 150);
  EXPECT_TRUE(daemon_->Alive()) << daemon_->Log();
  EXPECT_TRUE(Serving());
  EXPECT_EQ(JobCount(), jobs_before) << "a malformed request created a job";
  EXPECT_TRUE(Submit(Good(), ValidRequest()).ok()) << "the daemon stopped serving good requests";
}

TEST_F(FleetSecurity, PlaintextOnlyOnLoopbackAndConfigTyposAreErrors) {
  fs::path bad = *dir_ / "public.toml";
  std::ofstream(bad) << "[server]\nlisten = \"0.0.0.0:7878\"\ninsecure = true\n";
  Child public_insecure({TunefarmBinary(), "serve", "--config", bad.string()}, *dir_ / "public.log");
  EXPECT_EQ(public_insecure.Wait(30), 1);
  EXPECT_NE(public_insecure.Log().find("loopback"), std::string::npos) << public_insecure.Log();
  fs::path typo = *dir_ / "typo.toml";
  std::ofstream(typo) << "[server]\nlisten = \"127.0.0.1:0\"\ninsecure = true\n[auth]\nclient_token = [\"x\"]\n";
  Child typo_daemon({TunefarmBinary(), "serve", "--config", typo.string()}, *dir_ / "typo.log");
  EXPECT_EQ(typo_daemon.Wait(30), 1);
  EXPECT_NE(typo_daemon.Log().find("typo.toml:5"), std::string::npos) << typo_daemon.Log();
  EXPECT_NE(typo_daemon.Log().find("client_token"), std::string::npos);
  fs::path no_tls = *dir_ / "notls.toml";
  std::ofstream(no_tls) << "[server]\nlisten = \"127.0.0.1:0\"\n";
  Child no_tls_daemon({TunefarmBinary(), "serve", "--config", no_tls.string()}, *dir_ / "notls.log");
  EXPECT_EQ(no_tls_daemon.Wait(30), 1);
  EXPECT_NE(no_tls_daemon.Log().find("[tls]"), std::string::npos) << no_tls_daemon.Log();
}

}  // namespace
}  // namespace tunefarm::fleet_test
