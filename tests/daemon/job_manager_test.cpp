// JobManager over a FleetDispatcher with in-process fake workers: a job on a
// heterogeneous fleet is tuned for its workers' CPU and its records carry
// their fingerprint; cancel and drain keep what was measured; a job on a key
// no worker serves warns, waits without a running slot, and fails in time.
#include "tunefarm/daemon/job_manager.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <thread>

#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/database/database.h"
#include "job_manager_test_util.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::daemon {
namespace {

using testing::FakeWorker;

namespace fs = std::filesystem;

WorkerInfo ArmBoard() {
  WorkerInfo info;
  info.device_key = "arm-board";
  info.device = "cpu";
  info.hostname = "board-7";
  info.max_in_flight = 8;
  info.fingerprint.isa = "aarch64";
  info.fingerprint.arch = "neoverse-v1";
  info.fingerprint.features = {"neon", "sve"};
  info.fingerprint.cores = 64;
  info.fingerprint.toolchain = "llvm-16";
  info.host_target = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1";
  return info;
}

JobSpec SmallJob(const std::string& key, int trials) {
  JobSpec spec;
  spec.workloads = {"workload mm(M = 32, N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n"};
  spec.device_key = key;
  spec.trials = trials;
  spec.batch_size = 8;
  return spec;
}

class JobManagerTest : public testing::JobLogTest {
 protected:
  JobManagerTest() : JobLogTest("tunefarm_jobs_") {}
};

TEST_F(JobManagerTest, JobForPlainLlvmTunesForItsWorkersCpuAndRecordsTheirFingerprint) {
  FleetDispatcher fleet;
  JobManager jobs(db_.get(), &fleet, {});
  auto submitted = jobs.Submit(SmallJob("arm-board", 24), "arm-job");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(jobs.Get("arm-job")->state.trials_done, 0);  // no worker of that key yet: it waits
  FakeWorker board(&fleet, ArmBoard());
  JobView done = WaitEnded(jobs, "arm-job");
  ASSERT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  int records = 0;
  ASSERT_TRUE(db_->ForEachRecord({}, [&](const database::TuningRecord& r) {
                   ++records;
                   EXPECT_NE(r.target.target.find("aarch64"), std::string::npos) << r.target.target;
                   EXPECT_NE(r.target.target.find("neoverse-v1"), std::string::npos);
                   EXPECT_EQ(r.target.fingerprint.arch, "neoverse-v1");
                   EXPECT_EQ(r.target.fingerprint.cores, 64);
                   EXPECT_EQ(r.device, "arm-board");
                   EXPECT_NE(r.worker.find("board-7"), std::string::npos);
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(records, 24);
}

// While a key's workers are upgraded one at a time, two workers of one key
// report different toolchains: each record carries the fingerprint of the
// worker that measured it, not that of the worker the job read at its start.
TEST_F(JobManagerTest, EachRecordCarriesTheFingerprintOfTheWorkerThatMeasuredIt) {
  FleetDispatcher fleet;
  WorkerInfo older = ArmBoard();
  older.max_in_flight = 2;
  WorkerInfo upgraded = older;
  upgraded.hostname = "board-8";
  upgraded.fingerprint.toolchain = "llvm-16 lowering-r9";
  // Slow enough that neither takes a whole batch before the other is asked.
  FakeWorker first(&fleet, older, /*delay_ms=*/5);
  FakeWorker second(&fleet, upgraded, /*delay_ms=*/5);
  JobManager jobs(db_.get(), &fleet, {});
  ASSERT_TRUE(jobs.Submit(SmallJob("arm-board", 32), "mixed").ok());
  JobView done = WaitEnded(jobs, "mixed");
  ASSERT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  std::map<std::string, int> by_toolchain;
  ASSERT_TRUE(db_->ForEachRecord({}, [&](const database::TuningRecord& r) {
                   bool from_upgraded = r.worker.find("board-8") != std::string::npos;
                   EXPECT_EQ(r.target.fingerprint.toolchain, from_upgraded ? "llvm-16 lowering-r9" : "llvm-16")
                       << r.worker;
                   EXPECT_EQ(r.target.fingerprint.arch, "neoverse-v1");
                   ++by_toolchain[r.target.fingerprint.toolchain];
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(by_toolchain["llvm-16"] + by_toolchain["llvm-16 lowering-r9"], 32);
  EXPECT_GT(by_toolchain["llvm-16"], 0);
  EXPECT_GT(by_toolchain["llvm-16 lowering-r9"], 0);
}

TEST_F(JobManagerTest, CancelStopsAJobAndDrainLeavesItToResume) {
  FleetDispatcher fleet;
  WorkerInfo slow = ArmBoard();
  slow.device_key = "slow";
  FakeWorker worker(&fleet, slow, /*delay_ms=*/150);
  {
    JobManager jobs(db_.get(), &fleet, {});
    // 64 trials each: at least 16 batches of 8 through one worker that
    // sleeps 150 ms per batch (2.4 s), so both jobs are running at 800 ms.
    ASSERT_TRUE(jobs.Submit(SmallJob("slow", 64), "to-cancel").ok());
    ASSERT_TRUE(jobs.Submit(SmallJob("slow", 64), "to-resume").ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    auto cancelled = jobs.Cancel("to-cancel");
    ASSERT_TRUE(cancelled.ok());
    EXPECT_EQ(cancelled->state.status, database::JobStatus::kCancelled);
    EXPECT_LT(cancelled->state.trials_done, 64);
    jobs.Drain(5);
  }
  auto stored = db_->GetJob("to-resume");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->status, database::JobStatus::kRunning);  // resumed by the next daemon
  auto gone = db_->GetJob("to-cancel");
  EXPECT_EQ((*gone)->status, database::JobStatus::kCancelled);
  // The next daemon life resumes only the unfinished one, and finishes it.
  JobManager again(db_.get(), &fleet, {});
  auto resumed = again.ResumeStored();
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(*resumed, 1);
  JobView done = WaitEnded(again, "to-resume");
  EXPECT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  EXPECT_EQ(done.state.trials_done, 64);
}

// A job's workloads are parsed once, when it is submitted or resumed; a
// stored job whose workload text no longer parses (a newer daemon's language,
// say) fails when it would start tuning, with the parser's message, once a
// worker of its key is there -- where and how it always failed.
TEST_F(JobManagerTest, AResumedJobWhoseWorkloadNoLongerParsesFailsWithTheParsersMessage) {
  JobSpec spec = SmallJob("board", 8);
  spec.workloads.push_back("workload broken(M = 4) {\n  A = input f32[M]\n  B[i] = A[i] +\n  output B\n}\n");
  database::JobState stored;
  stored.id = "from-an-older-life";
  stored.status = database::JobStatus::kRunning;
  stored.target = spec.target;
  stored.spec = JobSpecToJson(spec);
  stored.progress = "{}";
  stored.trial_budget = spec.trials;
  ASSERT_TRUE(db_->CreateJob(stored).ok());
  FleetDispatcher fleet;
  WorkerInfo board = ArmBoard();
  board.device_key = "board";
  FakeWorker worker(&fleet, board);
  JobManager jobs(db_.get(), &fleet, {});
  auto resumed = jobs.ResumeStored();
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(*resumed, 1);
  JobView failed = WaitEnded(jobs, "from-an-older-life");
  EXPECT_EQ(failed.state.status, database::JobStatus::kFailed);
  EXPECT_EQ(failed.state.error.rfind("workloads[1]:", 0), 0u) << failed.state.error;
  EXPECT_EQ(failed.state.trials_done, 0);
}

// While a fleet is upgraded: a job whose worker is older (it replays every
// instruction but pad_input) searches without the padding rule, so
// none of its candidates is one that worker could not build; with an
// upgraded worker the same job pads some inputs (the control).
TEST_F(JobManagerTest, AJobWithAnOlderWorkerSearchesWithoutPadding) {
  auto padded_records = [&](const std::string& key, std::set<std::string> instructions) {
    FleetDispatcher fleet;
    WorkerInfo info = ArmBoard();
    info.device_key = key;
    info.host_target = "";  // the daemon's own CPU
    info.trace_instructions = std::move(instructions);
    FakeWorker worker(&fleet, info);
    JobManager jobs(db_.get(), &fleet, {});
    JobSpec spec = SmallJob(key, 32);
    spec.workloads = {"workload conv(C = 8, H = 8, W = 8, K = 16) {\n  X = input f32[1, C, H, W]\n"
                      "  Wt = input f32[K, C, 3, 3]\n"
                      "  out[n: 1, k: K, h: H, w: W] = sum(c: C, r: 3, s: 3)\n"
                      "      select(h + r - 1 >= 0 && h + r - 1 < H && w + s - 1 >= 0 && w + s - 1 < W,\n"
                      "             X[n, c, h + r - 1, w + s - 1], 0.0) * Wt[k, c, r, s]\n"
                      "  output out\n}\n"};
    auto submitted = jobs.Submit(spec, key);
    EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();
    JobView done = WaitEnded(jobs, key);
    EXPECT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
    int padded = 0, errors = 0;
    EXPECT_TRUE(db_->ForEachRecord({}, [&](const database::TuningRecord& r) {
                     if (r.device != key) return Status::OK();
                     padded += r.trace.find("pad_input(") != std::string::npos;
                     errors += r.error_kind != database::ErrorKind::kNone;
                     return Status::OK();
                   }).ok());
    EXPECT_EQ(errors, 0) << key;
    return padded;
  };
  std::set<std::string> older(ReplayedInstructionNames().begin(), ReplayedInstructionNames().end());
  older.erase("pad_input");
  EXPECT_EQ(padded_records("older", older), 0);
  EXPECT_GT(padded_records("upgraded", {ReplayedInstructionNames().begin(), ReplayedInstructionNames().end()}), 0);
}

// A job on a device key no worker serves (a typo) says so at once, waits
// pending without the one running slot, so a job whose key is served runs
// meanwhile, and starts when a worker of its key joins.
TEST_F(JobManagerTest, AJobOnAnUnservedKeyWarnsAndWaitsWithoutASlot) {
  FleetDispatcher fleet;
  WorkerInfo served = ArmBoard();
  served.device_key = "cpu-znver4";
  FakeWorker worker(&fleet, served);
  JobManagerOptions options;
  options.max_running_jobs = 1;
  JobManager jobs(db_.get(), &fleet, options);
  auto typo = jobs.Submit(SmallJob("cpu-znvr4", 8), "typo");
  ASSERT_TRUE(typo.ok()) << typo.status().ToString();
  EXPECT_EQ(typo->state.status, database::JobStatus::kPending);
  EXPECT_EQ(typo->warning, "no connected worker serves device key 'cpu-znvr4' (served keys: cpu-znver4); the job "
                           "waits up to 600 s for one, pending, without taking a running slot");
  // Its thread is past the point where it would take the slot.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(jobs.Submit(SmallJob("cpu-znver4", 8), "served").ok());
  JobView done = WaitEnded(jobs, "served");
  EXPECT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  EXPECT_TRUE(done.warning.empty()) << done.warning;
  JobView waiting = *jobs.Get("typo");
  EXPECT_EQ(waiting.state.status, database::JobStatus::kPending);
  EXPECT_NE(waiting.warning.find("'cpu-znvr4'"), std::string::npos) << waiting.warning;

  WorkerInfo late = served;
  late.device_key = "cpu-znvr4";
  late.hostname = "board-9";
  FakeWorker joined(&fleet, late);
  done = WaitEnded(jobs, "typo");
  EXPECT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  EXPECT_EQ(done.state.trials_done, 8);
  EXPECT_TRUE(done.warning.empty()) << done.warning;
}

// With no worker of its key within device_key_wait_s, the job fails naming
// the key and the keys the fleet serves; a job whose key is served gets no warning.
TEST_F(JobManagerTest, AJobWhoseKeyStaysUnservedFailsAfterTheWaitLimit) {
  FleetDispatcher fleet;
  JobManagerOptions options;
  options.device_key_wait_s = 0.3;
  JobManager jobs(db_.get(), &fleet, options);
  auto alone = jobs.Submit(SmallJob("cpu-znvr4", 8), "no-fleet");
  ASSERT_TRUE(alone.ok());
  EXPECT_NE(alone->warning.find("(served keys: none (no worker is connected))"), std::string::npos) << alone->warning;
  EXPECT_NE(alone->warning.find("waits up to 0.3 s"), std::string::npos) << alone->warning;

  WorkerInfo served = ArmBoard();
  served.device_key = "cpu-znver4";
  FakeWorker worker(&fleet, served);
  auto typo = jobs.Submit(SmallJob("cpu-znvr4", 8), "typo");
  ASSERT_TRUE(typo.ok());
  JobView failed = WaitEnded(jobs, "typo");
  EXPECT_EQ(failed.state.status, database::JobStatus::kFailed);
  EXPECT_EQ(failed.state.error, "no worker served device key 'cpu-znvr4' within 0.3 s; served keys: cpu-znver4");
  EXPECT_TRUE(failed.warning.empty()) << failed.warning;
  EXPECT_EQ(failed.state.trials_done, 0);
  // Stored (just after the view changes): a restarted daemon says it too.
  std::string stored;
  for (int i = 0; i < 100 && stored.empty(); ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stored = (*db_->GetJob("typo"))->error;
  }
  EXPECT_EQ(stored, failed.state.error);
  EXPECT_EQ(WaitEnded(jobs, "no-fleet").state.status, database::JobStatus::kFailed);

  auto fine = jobs.Submit(SmallJob("cpu-znver4", 8), "fine");
  ASSERT_TRUE(fine.ok());
  EXPECT_TRUE(fine->warning.empty()) << fine->warning;
  EXPECT_EQ(WaitEnded(jobs, "fine").state.status, database::JobStatus::kDone);
}

TEST_F(JobManagerTest, InvalidSpecsNameTheField) {
  FleetDispatcher fleet;
  JobManager jobs(db_.get(), &fleet, {});
  JobSpec bad = SmallJob("k", 10);
  bad.workloads[0] = "workload broken(M = 4) {\n  A = input f32[M]\n  B[i] = A[i] +\n  output B\n}\n";
  auto r = jobs.Submit(bad, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("workloads[0]:"), std::string::npos) << r.status().message();
  bad = SmallJob("", 10);
  EXPECT_NE(jobs.Submit(bad, "").status().message().find("device_key"), std::string::npos);
  bad = SmallJob("k", 0);
  EXPECT_NE(jobs.Submit(bad, "").status().message().find("trials"), std::string::npos);
  ASSERT_TRUE(jobs.Submit(SmallJob("k", 10), "dup").ok());
  EXPECT_EQ(jobs.Submit(SmallJob("k", 10), "dup").status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(db_->ListJobs()->size(), 1u);
}

}  // namespace
}  // namespace tunefarm::daemon
