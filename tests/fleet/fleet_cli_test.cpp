// `tunefarm jobs` and `tunefarm fleet status` against a running daemon, and
// every user-facing error of these clients (a message saying what to do,
// exit code 1).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "../run_command.h"
#include "fleet_harness.h"
#include "tunefarm/database/database.h"

namespace tunefarm::fleet_test {
namespace {

using Output = testing_support::CommandOutput;

Output RunCli(const std::string& args) { return testing_support::RunCommand(TunefarmBinary() + " " + args); }

// The N of "(N trial(s) measured a new best again)" in `jobs get` output; 0 when
// the line is absent.
int ConfirmationsShown(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\\((\\d+) (trials?) measured a new best again\\)"))) return 0;
  const int n = std::stoi(m[1].str());
  EXPECT_EQ(m[2].str(), n == 1 ? "trial" : "trials") << text;
  return n;
}

// How many records of the log repeat a trace measured before.
int MeasuredAgain(const fs::path& db_path) {
  database::OpenOptions o;
  o.read_only = true;
  auto db = database::Database::Open(db_path.string(), o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return -1;
  std::map<std::string, int> per_trace;
  Status st = (*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
    ++per_trace[r.trace];
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  int again = 0;
  for (const auto& [trace, count] : per_trace) again += count - 1;
  return again;
}

class FleetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_fleetcli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    port_ = FreePort();
    DaemonOptions o;
    o.tls = false;  // loopback plaintext with tokens: what one machine runs
    daemon_ = StartDaemon(WriteFleetConfig(dir_, port_, dir_ / "farm.db", o), dir_ / "daemon.log");
    std::ofstream(dir_ / "client.token") << "client-token-0123456789\n";
    std::ofstream(dir_ / "mm.tf") << SmallMatmul(32, 16, 16);
    client_ = " --insecure --tuner 127.0.0.1:" + std::to_string(port_) + " --token-file " + P("client.token");
  }
  void TearDown() override {
    worker_.reset();
    daemon_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  int port_ = 0;
  std::string client_;
  std::unique_ptr<Child> daemon_, worker_;
};

TEST_F(FleetCli, SubmitWatchListGetStatusAndCancel) {
  WorkerOptions wo;
  wo.tls = false;
  worker_ = StartWorker(dir_, port_, wo, dir_ / "worker.log");
  Output submit = RunCli("jobs submit " + P("mm.tf") + " --device-key test-key --trials 24 --job-id cli-job --watch" + client_);
  ASSERT_EQ(submit.code, 0) << submit.text << daemon_->Log() << worker_->Log();
  EXPECT_NE(submit.text.find("cli-job"), std::string::npos);
  EXPECT_TRUE(std::regex_search(submit.text, std::regex("cli-job +done +24/24"))) << submit.text;
  EXPECT_NE(submit.text.find("GFLOP/s"), std::string::npos);

  Output list = RunCli("jobs list --status done" + client_);
  ASSERT_EQ(list.code, 0) << list.text;
  EXPECT_NE(list.text.find("cli-job"), std::string::npos) << list.text;
  Output get = RunCli("jobs get cli-job" + client_);
  EXPECT_EQ(get.code, 0);
  EXPECT_NE(get.text.find("record #"), std::string::npos) << get.text;
  // The confirmations line names as many trials as the log holds second
  // measurements of a trace, and is absent when there are none.
  EXPECT_EQ(ConfirmationsShown(get.text), MeasuredAgain(dir_ / "farm.db")) << get.text;

  Output fleet = RunCli("fleet status" + client_);
  ASSERT_EQ(fleet.code, 0) << fleet.text;
  EXPECT_NE(fleet.text.find("test-key"), std::string::npos) << fleet.text;
  EXPECT_NE(fleet.text.find("1 worker(s)"), std::string::npos) << fleet.text;

  // No worker has this key: the job waits, says so, and cancelling it ends it.
  Output waiting = RunCli("jobs submit " + P("mm.tf") + " --device-key nobody --trials 8 --job-id stuck" + client_);
  ASSERT_EQ(waiting.code, 0) << waiting.text;
  EXPECT_NE(waiting.text.find("warning: no connected worker serves device key 'nobody' (served keys: test-key)"),
            std::string::npos)
      << waiting.text;
  Output cancel = RunCli("jobs cancel stuck" + client_);
  ASSERT_EQ(cancel.code, 0) << cancel.text;
  EXPECT_TRUE(std::regex_search(cancel.text, std::regex("stuck +cancelled"))) << cancel.text;
  Output cancelled = RunCli("jobs list --status cancelled" + client_);
  EXPECT_NE(cancelled.text.find("stuck"), std::string::npos) << cancelled.text;
}

// A mistyped device key: the reply and `jobs get` say at once that no worker
// serves it and which keys the fleet serves; after [limits] device_key_wait_s
// the job fails saying why.
TEST_F(FleetCli, AJobOnAKeyNoWorkerServesSaysSoAndFailsAfterTheWait) {
  daemon_.reset();
  port_ = FreePort();
  DaemonOptions o;
  o.tls = false;
  o.extra_toml = "device_key_wait_s = 2\n";  // appended to [limits]
  daemon_ = StartDaemon(WriteFleetConfig(dir_, port_, dir_ / "farm.db", o), dir_ / "daemon2.log");
  client_ = " --insecure --tuner 127.0.0.1:" + std::to_string(port_) + " --token-file " + P("client.token");
  WorkerOptions wo;
  wo.tls = false;
  wo.device_key = "cpu-znver4";
  worker_ = StartWorker(dir_, port_, wo, dir_ / "worker.log");
  Output fleet;
  for (int i = 0; i < 100 && fleet.text.find("1 worker(s)") == std::string::npos; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fleet = RunCli("fleet status" + client_);
  }
  ASSERT_NE(fleet.text.find("1 worker(s)"), std::string::npos) << fleet.text << worker_->Log();

  Output submit = RunCli("jobs submit " + P("mm.tf") + " --device-key cpu-znvr4 --trials 8 --job-id typo" + client_);
  ASSERT_EQ(submit.code, 0) << submit.text;  // accepted: a worker may still be starting
  EXPECT_NE(submit.text.find("warning: no connected worker serves device key 'cpu-znvr4' (served keys: cpu-znver4)"),
            std::string::npos)
      << submit.text;
  Output get = RunCli("jobs get typo" + client_);
  EXPECT_TRUE(std::regex_search(get.text, std::regex("typo +pending"))) << get.text;
  EXPECT_NE(get.text.find("warning: no connected worker serves device key 'cpu-znvr4'"), std::string::npos) << get.text;

  for (int i = 0; i < 100 && get.text.find("failed") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    get = RunCli("jobs get typo" + client_);
  }
  EXPECT_TRUE(std::regex_search(get.text, std::regex("typo +failed"))) << get.text << daemon_->Log();
  EXPECT_NE(get.text.find("error: no worker served device key 'cpu-znvr4' within 2 s; served keys: cpu-znver4"),
            std::string::npos)
      << get.text;
  EXPECT_EQ(get.text.find("warning:"), std::string::npos) << get.text;
}

TEST_F(FleetCli, ClientMistakesGetClearMessages) {
  // Nothing listens there.
  Output down = RunCli("jobs list --insecure --tuner 127.0.0.1:" + std::to_string(FreePort()) + " --timeout 3");
  EXPECT_EQ(down.code, 1);
  EXPECT_NE(down.text.find("is `tunefarm serve` running at"), std::string::npos) << down.text;
  // No token, a wrong token.
  Output anonymous = RunCli("jobs list --insecure --tuner 127.0.0.1:" + std::to_string(port_));
  EXPECT_EQ(anonymous.code, 1);
  EXPECT_NE(anonymous.text.find("--token-file"), std::string::npos) << anonymous.text;
  std::ofstream(dir_ / "wrong.token") << "this-is-not-the-token\n";
  Output wrong = RunCli("jobs list --insecure --tuner 127.0.0.1:" + std::to_string(port_) + " --token-file " + P("wrong.token"));
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.text.find("not valid"), std::string::npos) << wrong.text;
  // Missing token file, empty token file.
  Output missing = RunCli("jobs list --insecure --tuner 127.0.0.1:1 --token-file " + P("nope.token"));
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.text.find("nope.token"), std::string::npos) << missing.text;
  std::ofstream(dir_ / "empty.token") << "\n";
  Output empty = RunCli("jobs list --insecure --tuner 127.0.0.1:1 --token-file " + P("empty.token"));
  EXPECT_EQ(empty.code, 1);
  EXPECT_NE(empty.text.find("is empty"), std::string::npos) << empty.text;
  // TLS without --ca; plaintext to a remote address.
  Output no_ca = RunCli("jobs list --tuner farm.example:7878");
  EXPECT_EQ(no_ca.code, 1);
  EXPECT_NE(no_ca.text.find("--ca"), std::string::npos) << no_ca.text;
  Output remote_plain = RunCli("jobs list --insecure --tuner 10.1.2.3:7878");
  EXPECT_EQ(remote_plain.code, 1);
  EXPECT_NE(remote_plain.text.find("loopback"), std::string::npos) << remote_plain.text;
  // A broken workload: the daemon names the line and column.
  std::ofstream(dir_ / "broken.tf") << "workload w(M = 4) {\n  A = input f32[M]\n  B[i] = A[i] +\n  output B\n}\n";
  Output broken = RunCli("jobs submit " + P("broken.tf") + " --device-key k" + client_);
  EXPECT_EQ(broken.code, 1);
  EXPECT_TRUE(std::regex_search(broken.text, std::regex("workloads\\[0\\]:[0-9]+:[0-9]+"))) << broken.text;
  // Unknown job.
  Output unknown = RunCli("jobs watch no-such-job" + client_);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.text.find("no job 'no-such-job'"), std::string::npos) << unknown.text;
  // Worker mistakes: no certificate over TLS, plaintext to a remote tuner.
  Output worker_tls = RunCli("worker --tuner 127.0.0.1:1 --ca " + P("nothing.pem"));
  EXPECT_EQ(worker_tls.code, 1) << worker_tls.text;
  Output worker_remote = RunCli("worker --tuner 10.1.2.3:7878 --insecure");
  EXPECT_EQ(worker_remote.code, 1) << worker_remote.text;
  EXPECT_NE(worker_remote.text.find("loopback"), std::string::npos) << worker_remote.text;
}

// While a fleet is upgraded: a worker of a version that does not list the
// instructions it replays (a raw Register without them, as such a worker
// sends) is named by `fleet status` with what it cannot replay, instructions
// and loop annotations; an up-to-date worker is not.
TEST_F(FleetCli, FleetStatusNamesAnOlderWorkerAndWhatItCannotReplay) {
  WorkerOptions wo;
  wo.tls = false;
  worker_ = StartWorker(dir_, port_, wo, dir_ / "worker.log");
  rpc::ClientSecurity sec = ClientCreds(dir_, false, "worker-token-0123456789");
  auto channel = rpc::MakeChannel("127.0.0.1:" + std::to_string(port_), sec);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  auto stub = v1::Fleet::NewStub(*channel);
  grpc::ClientContext ctx;
  rpc::PrepareCall(&ctx, sec, 60);
  auto stream = stub->Connect(&ctx);
  v1::WorkerMessage hello;
  v1::Register* reg = hello.mutable_register_();
  reg->set_device_key("test-key");
  reg->set_device("test");
  reg->set_hostname("old-board");
  reg->set_max_in_flight(1);
  reg->set_tunefarm_version("0.0.9");
  ASSERT_TRUE(stream->Write(hello));
  v1::TunerMessage registered;
  ASSERT_TRUE(stream->Read(&registered)) << daemon_->Log();
  ASSERT_TRUE(registered.has_registered());
  // Heartbeats keep its lease while the test runs, however slow the machine.
  std::atomic<bool> stop{false};
  std::thread heartbeats([&] {
    v1::WorkerMessage beat;
    beat.mutable_heartbeat()->set_in_flight(0);
    while (!stop && stream->Write(beat)) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  struct Stop {
    std::atomic<bool>& stop;
    grpc::ClientContext& ctx;
    std::thread& t;
    ~Stop() {
      stop = true;
      ctx.TryCancel();
      t.join();
    }
  } stop_heartbeats{stop, ctx, heartbeats};

  // The up-to-date worker registers on its own time.
  Output fleet;
  for (int i = 0; i < 100 && fleet.text.find("2 worker(s)") == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fleet = RunCli("fleet status" + client_);
    ASSERT_EQ(fleet.code, 0) << fleet.text;
  }
  ASSERT_NE(fleet.text.find("2 worker(s)"), std::string::npos) << fleet.text << worker_->Log();
  EXPECT_TRUE(std::regex_search(fleet.text, std::regex("worker old-board/test#[0-9]+ \\(tunefarm 0\\.0\\.9\\) cannot "
                                                       "replay pad_input, pad_axis, split_phases: .* upgrade it")))
      << fleet.text;
  EXPECT_EQ(fleet.text.find("cannot replay", fleet.text.find("cannot replay") + 1), std::string::npos)
      << "only the older worker is named: " << fleet.text;
  // Nor does it list the loop annotation keys it knows: it is taken to know
  // those from before the int8 dot products.
  const std::regex lacks_dot("worker old-board/test#[0-9]+ \\(tunefarm 0\\.0\\.9\\) lacks the loop annotations "
                             "[^:]*pragma_dot_product[^:]*: .* upgrade it");
  EXPECT_TRUE(std::regex_search(fleet.text, lacks_dot)) << fleet.text;
  EXPECT_EQ(fleet.text.find("lacks the loop annotations", fleet.text.find("lacks the loop annotations") + 1),
            std::string::npos)
      << "only the older worker is named: " << fleet.text;
}

}  // namespace
}  // namespace tunefarm::fleet_test
