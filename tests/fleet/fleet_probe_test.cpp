// A daemon seen by standard gRPC tools and by careless or hostile callers:
// server reflection lists its four services (without credentials, and grants
// nothing else), the health service answers for each service, job ids and
// filters of any length get short errors, an unknown target triple is
// refused by SubmitJob and `jobs submit` as by Compile, a worker's fingerprint
// is checked field by field, and `serve` checks its TLS files before it
// creates a database.
#include <gtest/gtest.h>

#include <fstream>

#include "../grpc_probes.h"
#include "../run_command.h"
#include "fleet_harness.h"
#include "tunefarm/v1/compile.grpc.pb.h"

namespace tunefarm::fleet_test {
namespace {

using grpc_probes::Health;

constexpr char kToken[] = "client-token-0123456789";
const char* const kServices[] = {"tunefarm.v1.Tuner", "tunefarm.v1.Fleet", "tunefarm.v1.Compile",
                                 "tunefarm.v1.TuningLog"};

class FleetProbe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("tunefarm_fleetprobe_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    MakeTlsMaterial(*dir_);
    port_ = FreePort();
    daemon_ = StartDaemon(WriteFleetConfig(*dir_, port_, *dir_ / "farm.db", DaemonOptions()), *dir_ / "daemon.log")
                  .release();
    std::ofstream(*dir_ / "client.token") << kToken << "\n";
  }
  static void TearDownTestSuite() {
    delete daemon_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Addr() { return "127.0.0.1:" + std::to_string(port_); }
  static rpc::ClientSecurity Good() { return ClientCreds(*dir_, true, kToken); }
  // TLS that verifies the daemon, but no token and no client certificate.
  static rpc::ClientSecurity Stranger() { return ClientCreds(*dir_, true, ""); }
  static std::shared_ptr<grpc::Channel> Channel(const rpc::ClientSecurity& sec) {
    auto channel = rpc::MakeChannel(Addr(), sec);
    EXPECT_TRUE(channel.ok()) << channel.status().ToString();
    return *channel;
  }
  static int JobCount() {
    auto stub = TunerStub(port_, Good());
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, Good(), 10);
    v1::ListJobsResponse resp;
    grpc::Status st = stub->ListJobs(&ctx, {}, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.jobs_size();
  }
  static testing_support::CommandOutput Cli(const std::string& args) {
    return testing_support::RunCommand(TunefarmBinary() + " " + args);
  }

  static fs::path* dir_;
  static int port_;
  static Child* daemon_;
};

fs::path* FleetProbe::dir_ = nullptr;
int FleetProbe::port_ = 0;
Child* FleetProbe::daemon_ = nullptr;

TEST_F(FleetProbe, ReflectionListsTheFourServicesWithoutCredentialsAndGrantsNothingElse) {
  int jobs_before = JobCount();
  auto channel = Channel(Stranger());
  grpc_probes::ReflectionAnswer list = grpc_probes::Reflect(channel, Stranger(), "list_services", "*");
  ASSERT_TRUE(list.status.ok()) << list.status.error_message() << "\n" << daemon_->Log();
  for (const char* service : kServices) {
    EXPECT_NE(std::find(list.services.begin(), list.services.end(), service), list.services.end()) << service;
  }
  // The schema of each, as grpcurl would fetch it to build a request.
  grpc_probes::ReflectionAnswer tuner =
      grpc_probes::Reflect(channel, Stranger(), "file_containing_symbol", "tunefarm.v1.Tuner");
  ASSERT_TRUE(tuner.status.ok()) << tuner.status.error_message();
  bool has_submit = false;
  for (const auto& file : tuner.files) {
    for (const auto& service : file.service()) {
      for (const auto& method : service.method()) has_submit |= service.name() == "Tuner" && method.name() == "SubmitJob";
    }
  }
  EXPECT_TRUE(has_submit) << tuner.error;

  // Knowing the schema grants nothing: the same caller can call no tunefarm method.
  auto stub = TunerStub(port_, Stranger());
  grpc::ClientContext c1, c2;
  rpc::PrepareCall(&c1, Stranger(), 10);
  rpc::PrepareCall(&c2, Stranger(), 10);
  v1::SubmitJobRequest submit;
  submit.add_workloads(SmallMatmul());
  submit.set_device_key("probe-key");
  submit.set_trials(4);
  v1::Job job;
  EXPECT_EQ(stub->SubmitJob(&c1, submit, &job).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  v1::ListJobsResponse jobs;
  EXPECT_EQ(stub->ListJobs(&c2, {}, &jobs).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto compile = v1::Compile::NewStub(channel);
  grpc::ClientContext c3;
  rpc::PrepareCall(&c3, Stranger(), 10);
  v1::CompileRequest request;
  request.set_workload_text(SmallMatmul());
  v1::CompileResponse compiled;
  EXPECT_EQ(compile->Compile(&c3, request, &compiled).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(JobCount(), jobs_before);
}

TEST_F(FleetProbe, HealthAnswersForTheServerAndEachService) {
  auto channel = Channel(Stranger());
  Health health;
  grpc::Status server = grpc_probes::CheckHealth(channel, Stranger(), "", &health);
  ASSERT_TRUE(server.ok()) << server.error_message();
  EXPECT_EQ(health, Health::kServing);
  for (const char* service : kServices) {
    grpc::Status st = grpc_probes::CheckHealth(channel, Stranger(), service, &health);
    ASSERT_TRUE(st.ok()) << service << ": " << st.error_message();
    EXPECT_EQ(health, Health::kServing) << service;
  }
  EXPECT_EQ(grpc_probes::CheckHealth(channel, Stranger(), "tunefarm.v1.NoSuchService", &health).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(FleetProbe, JobIdsAndFiltersOfAnyLengthGetShortErrors) {
  auto stub = TunerStub(port_, Good());
  for (size_t length : {size_t(65), size_t(7000), size_t(20000)}) {
    v1::GetJobRequest request;
    request.set_job_id(std::string(length, 'j'));
    std::vector<std::pair<std::string, grpc::Status>> answers;
    {
      grpc::ClientContext ctx;
      rpc::PrepareCall(&ctx, Good(), 10);
      v1::Job job;
      answers.emplace_back("GetJob", stub->GetJob(&ctx, request, &job));
    }
    {
      grpc::ClientContext ctx;
      rpc::PrepareCall(&ctx, Good(), 10);
      v1::Job job;
      answers.emplace_back("CancelJob", stub->CancelJob(&ctx, request, &job));
    }
    {
      grpc::ClientContext ctx;
      rpc::PrepareCall(&ctx, Good(), 10);
      auto reader = stub->WatchJob(&ctx, request);
      v1::Job job;
      while (reader->Read(&job)) {
      }
      answers.emplace_back("WatchJob", reader->Finish());
    }
    {
      grpc::ClientContext ctx;
      rpc::PrepareCall(&ctx, Good(), 10);
      v1::ListJobsRequest list;
      list.set_status(std::string(length, 's'));
      v1::ListJobsResponse jobs;
      answers.emplace_back("ListJobs", stub->ListJobs(&ctx, list, &jobs));
    }
    for (const auto& [call, st] : answers) {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << call << " " << length << ": " << st.error_message();
      EXPECT_LT(st.error_message().size(), 200u) << call << " " << length << ": " << st.error_message();
      EXPECT_NE(st.error_message().find("(" + std::to_string(length) + " bytes)"), std::string::npos)
          << call << ": " << st.error_message();
      EXPECT_NE(st.error_message().find(call == "ListJobs" ? "status" : "job_id"), std::string::npos) << st.error_message();
    }
  }
  EXPECT_TRUE(daemon_->Alive());
}

TEST_F(FleetProbe, AnUnknownTripleIsRefusedBySubmitJobAndJobsSubmit) {
  int jobs_before = JobCount();
  auto stub = TunerStub(port_, Good());
  grpc::ClientContext ctx;
  rpc::PrepareCall(&ctx, Good(), 10);
  v1::SubmitJobRequest submit;
  submit.add_workloads(SmallMatmul());
  submit.set_device_key("probe-key");
  submit.set_trials(4);
  submit.set_target("llvm -mtriple=banana");
  v1::Job job;
  grpc::Status st = stub->SubmitJob(&ctx, submit, &job);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string expected = "target: unknown triple 'banana' in 'llvm -mtriple=banana'";
  EXPECT_EQ(st.error_message().rfind(expected, 0), 0u) << st.error_message();

  // Compile says the same of the same target.
  auto compile = v1::Compile::NewStub(Channel(Good()));
  grpc::ClientContext c2;
  rpc::PrepareCall(&c2, Good(), 10);
  v1::CompileRequest request;
  request.set_workload_text(SmallMatmul());
  request.set_target("llvm -mtriple=banana");
  v1::CompileResponse compiled;
  grpc::Status cst = compile->Compile(&c2, request, &compiled);
  EXPECT_EQ(cst.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(cst.error_message(), st.error_message());

  std::ofstream(*dir_ / "mm.tf") << SmallMatmul();
  auto out = Cli("jobs submit " + (*dir_ / "mm.tf").string() + " --device-key probe-key --trials 4" +
                 " --target 'llvm -mtriple=banana' --tuner " + Addr() + " --ca " + (*dir_ / "ca.pem").string() +
                 " --token-file " + (*dir_ / "client.token").string());
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find(expected), std::string::npos) << out.text;
  EXPECT_EQ(JobCount(), jobs_before) << "a job was created for a target nothing can compile";
}

TEST_F(FleetProbe, AWorkersFingerprintIsCheckedFieldByField) {
  rpc::ClientSecurity worker = ClientCreds(*dir_, true, "", "ca.pem", "worker");
  auto session = [&](const std::function<void(v1::HardwareFingerprint*)>& edit) {
    auto stub = v1::Fleet::NewStub(Channel(worker));
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, worker, 10);
    auto stream = stub->Connect(&ctx);
    v1::WorkerMessage hello;
    v1::Register* reg = hello.mutable_register_();
    reg->set_device_key("probe-fp");
    reg->set_device("test");
    reg->set_hostname("h");
    reg->set_max_in_flight(1);
    reg->mutable_fingerprint()->set_isa("x86_64");
    reg->mutable_fingerprint()->set_cores(4);
    edit(reg->mutable_fingerprint());
    stream->Write(hello);
    stream->WritesDone();
    v1::TunerMessage reply;
    while (stream->Read(&reply)) {
    }
    return stream->Finish();
  };
  grpc::Status negative = session([](auto* f) { f->set_cores(-1); });
  EXPECT_EQ(negative.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << negative.error_message();
  EXPECT_NE(negative.error_message().find("register.fingerprint.cores"), std::string::npos) << negative.error_message();
  grpc::Status feature = session([](auto* f) { f->add_features(std::string(1000, 'x')); });
  EXPECT_EQ(feature.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << feature.error_message();
  EXPECT_NE(feature.error_message().find("register.fingerprint.features[0]"), std::string::npos)
      << feature.error_message();
  EXPECT_LT(feature.error_message().size(), 200u);
}

TEST_F(FleetProbe, ServeChecksItsTlsFilesBeforeCreatingADatabaseAndNamesTheResolvedPath) {
  // A config given by a relative path, naming TLS files relative to its folder.
  fs::path conf_dir = *dir_ / "missing-tls";
  fs::create_directories(conf_dir);
  std::ofstream(conf_dir / "fleet.toml") << "[server]\nlisten = \"127.0.0.1:" << FreePort() << "\"\n"
                                         << "db = \"farm.db\"\n[tls]\nca = \"tls/ca.pem\"\ncert = \"tls/server.pem\"\n"
                                         << "key = \"tls/server.key\"\n";
  fs::path relative = fs::relative(conf_dir / "fleet.toml", fs::current_path());
  ASSERT_TRUE(relative.is_relative());
  Child serve({TunefarmBinary(), "serve", "--config", relative.string()}, *dir_ / "missing-tls.log");
  EXPECT_EQ(serve.Wait(30), 1) << serve.Log();
  EXPECT_FALSE(fs::exists(conf_dir / "farm.db")) << "serve created its database before failing";
  const std::string resolved = fs::weakly_canonical(conf_dir / "tls" / "ca.pem").string();
  EXPECT_NE(serve.Log().find("'" + resolved + "'"), std::string::npos) << serve.Log();
  EXPECT_NE(serve.Log().find("No such file or directory"), std::string::npos) << serve.Log();

  // With the CA present, the missing key is named the same way.
  fs::create_directories(conf_dir / "tls");
  fs::copy_file(*dir_ / "ca.pem", conf_dir / "tls" / "ca.pem");
  fs::copy_file(*dir_ / "server.pem", conf_dir / "tls" / "server.pem");
  Child again({TunefarmBinary(), "serve", "--config", relative.string()}, *dir_ / "missing-key.log");
  EXPECT_EQ(again.Wait(30), 1) << again.Log();
  EXPECT_FALSE(fs::exists(conf_dir / "farm.db"));
  EXPECT_NE(again.Log().find("'" + fs::weakly_canonical(conf_dir / "tls" / "server.key").string() + "'"),
            std::string::npos)
      << again.Log();
}

}  // namespace
}  // namespace tunefarm::fleet_test
