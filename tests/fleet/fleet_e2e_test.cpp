// The fleet end to end, with real processes on loopback: `tunefarm serve`
// with TLS, `tunefarm worker` children, clients with and without credentials.
// Faults are real: workers and the daemon are SIGKILLed mid-job.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "../run_command.h"
#include "fleet_harness.h"
#include "tunefarm/database/database.h"
#include "tunefarm/v1/compile.grpc.pb.h"

namespace tunefarm::fleet_test {
namespace {

class FleetE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_fleet_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    MakeTlsMaterial(dir_);
    port_ = FreePort();
    db_ = dir_ / "farm.db";
  }
  void TearDown() override {
    workers_.clear();
    daemon_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  void StartFleet(int workers, const WorkerOptions& wo, const DaemonOptions& dopt = {}) {
    config_ = WriteFleetConfig(dir_, port_, db_, dopt);
    daemon_ = StartDaemon(config_, dir_ / "daemon.log");
    for (int i = 0; i < workers; ++i) {
      workers_.push_back(StartWorker(dir_, port_, wo, dir_ / ("worker" + std::to_string(i) + ".log")));
    }
    sec_ = ClientCreds(dir_, dopt.tls, "client-token-0123456789");
    stub_ = TunerStub(port_, sec_);
    ASSERT_TRUE(WaitForWorkers(workers)) << Logs();
  }
  bool WaitForWorkers(int n) {
    for (int i = 0; i < 300; ++i) {
      if (FleetStatus().workers_size() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  v1::FleetStatusResponse FleetStatus() {
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 5);
    v1::FleetStatusResponse resp;
    (void)stub_->FleetStatus(&ctx, {}, &resp);
    return resp;
  }
  grpc::Status Submit(const std::string& id, int trials, v1::Job* job, const std::string& key = "test-key") {
    v1::SubmitJobRequest req;
    req.add_workloads(SmallMatmul());
    req.set_device_key(key);
    req.set_trials(trials);
    req.set_batch_size(16);
    req.set_job_id(id);
    req.mutable_measure()->set_repeat(2);
    req.mutable_measure()->set_min_repeat_ms(1);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 10);
    return stub_->SubmitJob(&ctx, req, job);
  }
  // Every record of the job's workload in the log, read-only.
  std::vector<database::TuningRecord> Records(const std::string& hash) { return ReadRecords(db_, hash); }
  std::string Logs() {
    std::string s = "--- daemon\n" + (daemon_ ? daemon_->Log() : "");
    for (size_t i = 0; i < workers_.size(); ++i) s += "--- worker " + std::to_string(i) + "\n" + workers_[i]->Log();
    return s.substr(s.size() > 20000 ? s.size() - 20000 : 0);
  }
  // `records` in commit order. Past the budget there may be confirmations
  // only: a best still measured once at the end is measured again
  // (tuning_loop.h, confirm_best), never a new kernel.
  static void ExpectOneRecordPerTrial(const std::vector<database::TuningRecord>& records, size_t trials) {
    EXPECT_GE(records.size(), trials);
    std::set<std::string> uids;
    std::map<std::string, int> per_trace;
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      if (i >= trials) {
        EXPECT_EQ(per_trace.count(r.trace), 1u) << "record " << i + 1 << " past the budget is a new kernel";
      }
      uids.insert(r.uid);
      ++per_trace[r.trace];
    }
    EXPECT_EQ(uids.size(), records.size()) << "a record was written twice";
    // A trace is measured again only to confirm a new best, and only once.
    for (const auto& [trace, count] : per_trace) EXPECT_LE(count, 2) << "a candidate was measured again and again";
  }

  fs::path dir_, db_, config_;
  int port_ = 0;
  std::unique_ptr<Child> daemon_;
  std::vector<std::unique_ptr<Child>> workers_;
  rpc::ClientSecurity sec_;
  std::unique_ptr<v1::Tuner::Stub> stub_;
};

TEST_F(FleetE2E, FourWorkersOneKilledMidJobEveryTrialRecordedOnce) {
  // Real CPU workers: candidates are compiled, run isolated, checked and timed.
  WorkerOptions wo;
  wo.device = "cpu";
  wo.device_key = "cpu-e2e";
  StartFleet(4, wo);
  v1::Job job;
  grpc::Status st = Submit("four", 96, &job, "cpu-e2e");
  ASSERT_TRUE(st.ok()) << st.error_message();
  // Kill a worker while every worker holds candidates, past the first batches.
  bool killed = false;
  for (int i = 0; i < 600 && !killed; ++i) {
    v1::FleetStatusResponse fs = FleetStatus();
    job = WaitForJob(*stub_, sec_, "four", 1, [](const v1::Job&) { return true; });
    int busy = 0;
    for (const auto& w : fs.workers()) busy += w.in_flight() > 0;
    if (job.trials_done() >= 32 && busy == 4) {
      workers_[1]->Kill(SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(killed) << Logs();
  job = WaitForJob(*stub_, sec_, "four", 240, [](const v1::Job& j) { return j.status() != "running" && j.status() != "pending"; });
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  v1::FleetStatusResponse fs = FleetStatus();
  EXPECT_EQ(fs.workers_size(), 3);
  EXPECT_GE(fs.redispatched(), 1) << "the killed worker's candidates were not re-dispatched";
  ASSERT_EQ(job.tasks_size(), 1);
  EXPECT_GT(job.tasks(0).speedup(), 1.0) << "tuning found nothing faster than the default schedule";
  auto records = Records(job.tasks(0).workload_hash());
  ExpectOneRecordPerTrial(records, 96);
  // Real CPUs time noisily: a confirmation of a new best may go past the
  // budget (TuningLoop::ConfirmLastBests), and it counts as a trial.
  EXPECT_GE(job.trials_done(), 96);
  EXPECT_EQ(size_t(job.trials_done()), records.size()) << "every trial is recorded once";
  std::map<std::string, int> per_trace;
  for (const auto& r : records) ++per_trace[r.trace];
  int measured_again = 0;
  for (const auto& [trace, count] : per_trace) measured_again += count - 1;
  EXPECT_EQ(job.tasks(0).confirmations(), measured_again) << "the job's progress miscounts its confirmations";
  int ok = 0;
  for (const auto& r : records) ok += r.ok();
  EXPECT_GE(ok, 90) << "measurements failed on healthy workers";
  std::set<std::string> measured_by;
  for (const auto& r : records) measured_by.insert(r.worker);
  EXPECT_GE(measured_by.size(), 4u) << "all four workers measured before one was killed";
}

TEST_F(FleetE2E, DaemonKilledMidJobResumesAndWorkersReconnect) {
  WorkerOptions wo;
  wo.device = "cpu";
  wo.device_key = "cpu-e2e";
  StartFleet(2, wo);
  v1::Job job;
  ASSERT_TRUE(Submit("resume", 80, &job, "cpu-e2e").ok());
  job = WaitForJob(*stub_, sec_, "resume", 120, [](const v1::Job& j) { return j.trials_done() >= 32; });
  ASSERT_GE(job.trials_done(), 32) << Logs();
  std::string hash = job.tasks(0).workload_hash();
  daemon_->Kill(SIGKILL);
  auto before = Records(hash);
  ASSERT_GE(before.size(), 32u);
  ASSERT_LT(before.size(), 80u);
  daemon_ = StartDaemon(config_, dir_ / "daemon2.log");
  ASSERT_TRUE(WaitForWorkers(2)) << "the workers did not reconnect by themselves\n" << Logs();
  EXPECT_NE(daemon_->Log().find("1 job(s) resumed"), std::string::npos) << daemon_->Log();
  job = WaitForJob(*stub_, sec_, "resume", 240, [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  auto after = Records(hash);
  ExpectOneRecordPerTrial(after, 80);
  std::set<std::string> uids;
  for (const auto& r : after) uids.insert(r.uid);
  for (const auto& r : before) EXPECT_TRUE(uids.count(r.uid)) << "record " << r.uid << " was lost";
  // SIGTERM drains and exits cleanly.
  daemon_->Kill(SIGTERM);
  EXPECT_EQ(daemon_->Wait(60), 0) << daemon_->Log();
}

TEST_F(FleetE2E, WorkerWithCrashingAndHangingKernelsKeepsServing) {
  WorkerOptions crash;
  crash.device = "cpu";
  crash.device_key = "cpu-faulty";
  crash.extra = {"--inject-faults", "crash", "--inject-every", "3"};
  StartFleet(1, crash);
  WorkerOptions hang = crash;
  hang.extra = {"--inject-faults", "hang", "--inject-every", "7"};
  workers_.push_back(StartWorker(dir_, port_, hang, dir_ / "worker-hang.log"));
  ASSERT_TRUE(WaitForWorkers(2)) << Logs();
  v1::Job job;
  ASSERT_TRUE(Submit("faulty", 24, &job, "cpu-faulty").ok());
  job = WaitForJob(*stub_, sec_, "faulty", 300, [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  auto records = Records(job.tasks(0).workload_hash());
  ExpectOneRecordPerTrial(records, 24);
  int crashed = 0, timed_out = 0, ok = 0;
  for (const auto& r : records) {
    crashed += r.error_kind == database::ErrorKind::kRuntimeError;
    timed_out += r.error_kind == database::ErrorKind::kTimeout;
    ok += r.ok();
  }
  EXPECT_GE(crashed, 1) << Logs();
  EXPECT_GE(timed_out, 1) << Logs();
  EXPECT_GE(ok, 10);
  EXPECT_TRUE(workers_[0]->Alive());
  EXPECT_TRUE(workers_[1]->Alive());
  EXPECT_EQ(FleetStatus().workers_size(), 2);
}

// [builders]: a device key whose candidates the daemon builds. The worker
// (a real CPU runner) gets objects, loads and checks them; the job completes
// with measured records as with worker-side builds.
TEST_F(FleetE2E, TunerBuiltDeviceKeyMeasuresObjectsBuiltByTheDaemon) {
  WorkerOptions wo;
  wo.device = "cpu";
  wo.device_key = "cpu-tuner-built";
  DaemonOptions dopt;
  dopt.extra_toml = "[builders]\ntuner_built = [\"cpu-tuner-built\"]\nbuild_threads = 2\n";
  StartFleet(1, wo, dopt);
  v1::Job job;
  grpc::Status st = Submit("tuner-built", 16, &job, "cpu-tuner-built");
  ASSERT_TRUE(st.ok()) << st.error_message();
  job = WaitForJob(*stub_, sec_, "tuner-built", 240, [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  EXPECT_NE(daemon_->Log().find("candidates are built on the tuner"), std::string::npos) << Logs();
  ASSERT_EQ(job.tasks_size(), 1);
  auto records = Records(job.tasks(0).workload_hash());
  ExpectOneRecordPerTrial(records, 16);
  int ok = 0;
  for (const auto& r : records) {
    if (!r.ok()) continue;
    ++ok;
    EXPECT_NE(r.worker.find("cpu"), std::string::npos) << "measured by " << r.worker;
  }
  EXPECT_GE(ok, 12) << Logs();
}

// With tuner_built, the daemon's build made the timed code: the records name
// its toolchain, not the one the worker reported (a test device reports
// "none (test device)").
TEST_F(FleetE2E, TunerBuiltRecordsNameTheDaemonsToolchain) {
  WorkerOptions wo;
  wo.device_key = "test-tuner-built";
  DaemonOptions dopt;
  dopt.extra_toml = "[builders]\ntuner_built = [\"test-tuner-built\"]\nbuild_threads = 2\n";
  StartFleet(1, wo, dopt);
  v1::Job job;
  grpc::Status st = Submit("tuner-built-test", 8, &job, "test-tuner-built");
  ASSERT_TRUE(st.ok()) << st.error_message();
  job = WaitForJob(*stub_, sec_, "tuner-built-test", 240,
                   [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  ASSERT_EQ(job.tasks_size(), 1);
  auto records = Records(job.tasks(0).workload_hash());
  ExpectOneRecordPerTrial(records, 8);
  // "llvm-16 lowering-r2" (CodegenToolchain) of the daemon's build.
  for (const auto& r : records) {
    EXPECT_EQ(r.target.fingerprint.toolchain.rfind("llvm-", 0), 0u) << r.target.fingerprint.toolchain;
    EXPECT_NE(r.target.fingerprint.toolchain.find(" lowering-r"), std::string::npos) << r.target.fingerprint.toolchain;
    // The toolchain no longer says test device; the worker's registration does.
    EXPECT_TRUE(r.synthetic) << "a test device's time was stored as measured";
  }
}

// The Compile service on a running daemon: a miss with tune_on_miss starts a
// job on the fleet (many clients missing at once share it). Tuned on test
// devices, the workload is still a miss: their invented times are never
// served. Once a worker that measures has tuned it, the answer is that job's
// best record. (tests/daemon/compile_service_test.cpp links and runs the
// returned kernels against the reference.)
TEST_F(FleetE2E, CompileMissTunesOnTheFleetAndServesOnlyMeasuredRecords) {
  WorkerOptions wo;
  // Slow enough answers that the job outlives the four concurrent misses
  // even on a loaded machine (4 batches of 16, 8 on each worker at 70 ms
  // a candidate: >= 0.5 s a batch).
  wo.extra = {"--test-latency-ms", "70"};
  StartFleet(2, wo);
  auto channel = rpc::MakeChannel("127.0.0.1:" + std::to_string(port_), sec_);
  ASSERT_TRUE(channel.ok());
  auto compile = v1::Compile::NewStub(*channel);
  auto call = [&](bool require_tuned, bool tune_on_miss, v1::CompileResponse* resp) {
    v1::CompileRequest req;
    req.set_workload_text(SmallMatmul(48, 32, 16));
    req.set_require_tuned(require_tuned);
    req.set_tune_on_miss(tune_on_miss);
    req.set_tune_trials(64);
    req.set_device_key("test-key");
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 60);
    return compile->Compile(&ctx, req, resp);
  };
  v1::CompileResponse first;
  grpc::Status st = call(false, false, &first);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(first.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  ASSERT_GE(first.binary().size(), 4u);
  EXPECT_EQ(first.binary().substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(call(true, false, &first).error_code(), grpc::StatusCode::NOT_FOUND);
  // Four clients miss at once: one job for all of them.
  std::vector<std::string> job_ids(4);
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      v1::CompileResponse resp;
      grpc::Status s = call(false, true, &resp);
      EXPECT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(resp.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
      job_ids[i] = resp.tuning_job_id();
    });
  }
  for (auto& t : clients) t.join();
  ASSERT_FALSE(job_ids[0].empty());
  for (const auto& id : job_ids) EXPECT_EQ(id, job_ids[0]);
  v1::Job job = WaitForJob(*stub_, sec_, job_ids[0], 180, [](const v1::Job& j) { return j.status() == "done"; });
  ASSERT_EQ(job.status(), "done") << job.error() << Logs();
  ASSERT_EQ(job.tasks_size(), 1);
  for (const auto& r : Records(job.tasks(0).workload_hash())) EXPECT_TRUE(r.synthetic) << r.uid;
  v1::CompileResponse tuned;
  st = call(true, false, &tuned);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND)
      << "served a test device's record #" << tuned.record_id() << " (source " << tuned.source() << ")";
  st = call(false, false, &tuned);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(tuned.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  EXPECT_EQ(tuned.record_id(), 0);
  // The CLI reads the same log (the daemon has it open): the default schedule
  // with its warning, or exit 3 with --require-tuned.
  const fs::path w = dir_ / "mm.tf";
  std::ofstream(w) << SmallMatmul(48, 32, 16);
  const std::string compile_cli = TunefarmBinary() + " compile " + w.string() + " --db " + db_.string() + " -o " +
                              (dir_ / "mm.o").string();
  testing_support::CommandOutput required = testing_support::RunCommand(compile_cli + " --require-tuned");
  EXPECT_EQ(required.code, 3) << required.text;
  testing_support::CommandOutput fallback = testing_support::RunCommand(compile_cli);
  EXPECT_EQ(fallback.code, 0) << fallback.text;
  EXPECT_NE(fallback.text.find("warning: no tuning record"), std::string::npos) << fallback.text;
  testing_support::CommandOutput shown =
      testing_support::RunCommand(TunefarmBinary() + " show " + w.string() + " --db " + db_.string());
  EXPECT_EQ(shown.code, 0) << shown.text;
  EXPECT_NE(shown.text.find("no tuning record"), std::string::npos) << shown.text;

  // A worker that measures, on a key of its own (a test device's key refuses it).
  WorkerOptions cpu;
  cpu.device = "cpu";
  cpu.device_key = "cpu-e2e";
  workers_.push_back(StartWorker(dir_, port_, cpu, dir_ / "worker-cpu.log"));
  ASSERT_TRUE(WaitForWorkers(3)) << Logs();
  v1::SubmitJobRequest req;
  req.add_workloads(SmallMatmul(48, 32, 16));
  req.set_device_key("cpu-e2e");
  req.set_trials(8);
  req.set_job_id("measured");
  {
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 10);
    ASSERT_TRUE(stub_->SubmitJob(&ctx, req, &job).ok());
  }
  job = WaitForJob(*stub_, sec_, "measured", 180, [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  ASSERT_EQ(job.status(), "done") << job.error() << Logs();
  st = call(true, false, &tuned);
  ASSERT_TRUE(st.ok()) << st.error_message();
  // The cpu worker runs on this daemon's host: the same device.
  EXPECT_EQ(tuned.source(), v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE);
  EXPECT_EQ(tuned.record_id(), job.tasks(0).best_record_id());
  EXPECT_EQ(tuned.binary().substr(0, 4), "\x7f" "ELF");
  EXPECT_GT(tuned.latency_seconds(), 0);
}

}  // namespace
}  // namespace tunefarm::fleet_test
