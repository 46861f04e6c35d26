// A job's workload weights (JobSpec::workload_weights, a model's tasks
// weighted by their calls) on the daemon: the job hands them to the task
// scheduler, which gives the heavier task more of the budget; its view shows
// each task's weight; the weights are stored with the job, so a job manager
// restarted from the log resumes the job with them; and a request with a bad
// weight is refused naming its index.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "job_manager_test_util.h"
#include "tunefarm/daemon/job_manager.h"
#include "tunefarm/daemon/tuner_service.h"
#include "tunefarm/rpc/security.h"

namespace tunefarm::daemon {
namespace {

using testing::FakeWorker;

// A matmul of inner size k: each k its own structural hash; all of similar
// size, and on the test device every candidate times 1 to 2 ms, so only
// their weights tell the tasks of a job apart.
std::string Matmul(int k) {
  return "workload mm(M = 32, N = 32, K = " + std::to_string(k) +
         ") {\n  A = input f32[M, K]\n  B = input f32[K, N]\n  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
}

WorkerInfo Board(const std::string& key) {
  WorkerInfo info;
  info.device_key = key;
  info.device = "cpu";
  info.hostname = "board-1";
  info.max_in_flight = 8;
  info.fingerprint.isa = "x86_64";
  info.fingerprint.arch = "znver4";
  info.fingerprint.cores = 16;
  info.fingerprint.toolchain = "llvm-16";
  info.host_target = "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4";
  return info;
}

// A job of two workloads (inner sizes k0, k1) with these weights.
JobSpec WeightedJob(const std::string& key, int k0, int k1, std::vector<double> weights, int trials) {
  JobSpec spec;
  spec.workloads = {Matmul(k0), Matmul(k1)};
  spec.workload_weights = std::move(weights);
  spec.device_key = key;
  spec.trials = trials;
  spec.batch_size = 8;
  return spec;
}

class JobWeightsTest : public testing::JobLogTest {
 protected:
  JobWeightsTest() : JobLogTest("tunefarm_job_weights_") {}
};

// The scheduler multiplies a task's expected gain by its weight: the task
// weighing 30 gets most batches, whichever of the two it is (each job its own
// workloads: a log's records of a workload count as trials of the next job
// that tunes it).
TEST_F(JobWeightsTest, TheHeavierTaskGetsMoreTrialsAndTheViewShowsEachWeight) {
  FleetDispatcher fleet;
  FakeWorker worker(&fleet, Board("board"));
  JobManager jobs(db_.get(), &fleet, {});
  for (size_t heavy : {size_t(0), size_t(1)}) {
    std::vector<double> weights = {1, 1};
    weights[heavy] = 30;
    const std::string id = "heavy-" + std::to_string(heavy);
    const int k0 = heavy == 0 ? 16 : 20, k1 = heavy == 0 ? 24 : 28;
    auto submitted = jobs.Submit(WeightedJob("board", k0, k1, weights, 48), id);
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    JobView done = WaitEnded(jobs, id);
    ASSERT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
    ASSERT_EQ(done.tasks.size(), 2u);
    const size_t light = 1 - heavy;
    EXPECT_EQ(done.tasks[heavy].weight, 30);
    EXPECT_EQ(done.tasks[light].weight, 1);
    // 37 and 11 today (the same seed and synthetic times every run).
    EXPECT_GT(done.tasks[heavy].trials, 2 * done.tasks[light].trials)
        << id << ": trials " << done.tasks[0].trials << ", " << done.tasks[1].trials;
    EXPECT_EQ(done.tasks[0].trials + done.tasks[1].trials, 48);
    // The wire form carries each weight too (`tunefarm jobs get` prints it).
    v1::Job wire = ToProto(done);
    ASSERT_EQ(wire.tasks_size(), 2);
    EXPECT_EQ(wire.tasks(int(heavy)).weight(), 30);
    EXPECT_EQ(wire.tasks(int(light)).weight(), 1);
  }
}

// The weights are part of the job's stored spec: a job manager drained
// mid-job and started again on the same log resumes the job, and its tuning
// loop schedules the same weights (each task's status carries the weight of
// the task the loop was handed).
TEST_F(JobWeightsTest, AJobResumedFromTheLogKeepsItsWeights) {
  FleetDispatcher fleet;
  FakeWorker worker(&fleet, Board("slow"), /*delay_ms=*/150);
  {
    JobManager jobs(db_.get(), &fleet, {});
    // 96 trials in batches of 8 through one worker that sleeps 150 ms per
    // batch: at least 1.8 s, so it is unfinished at 500 ms.
    ASSERT_TRUE(jobs.Submit(WeightedJob("slow", 16, 24, {1, 30}, 96), "weighted").ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    jobs.Drain(5);
  }
  auto stored = db_->GetJob("weighted");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  // Left for the next life to resume (pending if it had not yet started).
  ASSERT_TRUE((*stored)->status == database::JobStatus::kRunning ||
              (*stored)->status == database::JobStatus::kPending);
  EXPECT_LT((*stored)->trials_done, 96);
  auto spec = JobSpecFromJson((*stored)->spec);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->workload_weights, (std::vector<double>{1, 30}));

  JobManager again(db_.get(), &fleet, {});
  auto resumed = again.ResumeStored();
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(*resumed, 1);
  JobView done = WaitEnded(again, "weighted");
  ASSERT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  EXPECT_EQ(done.state.trials_done, 96);
  ASSERT_EQ(done.tasks.size(), 2u);
  EXPECT_EQ(done.tasks[0].weight, 1);
  EXPECT_EQ(done.tasks[1].weight, 30);
  EXPECT_GT(done.tasks[1].trials, done.tasks[0].trials)
      << "trials " << done.tasks[0].trials << ", " << done.tasks[1].trials;
  // A view read back from the log alone (as after the job's manager is gone) shows them too.
  JobManager reader(db_.get(), &fleet, {});
  auto from_log = reader.Get("weighted");
  ASSERT_TRUE(from_log.ok()) << from_log.status().ToString();
  ASSERT_EQ(from_log->tasks.size(), 2u);
  EXPECT_EQ(from_log->tasks[1].weight, 30);
}

// SubmitJob's request as the Tuner service takes it: a bad weight is
// INVALID_ARGUMENT on the wire naming its index, and no job is stored.
TEST_F(JobWeightsTest, ARequestWithABadWeightIsRefusedNamingItsIndex) {
  FleetDispatcher fleet;
  JobManager jobs(db_.get(), &fleet, {});
  v1::SubmitJobRequest request;
  request.add_workloads(Matmul(16));
  request.add_workloads(Matmul(24));
  request.set_device_key("board");
  request.set_trials(8);
  request.add_workload_weights(2);
  request.add_workload_weights(-1);
  JobSpec spec = JobSpecFromRequest(request);
  EXPECT_EQ(spec.workload_weights, (std::vector<double>{2, -1}));
  auto refused = jobs.Submit(spec, "bad-weight");
  ASSERT_FALSE(refused.ok());
  grpc::Status wire = rpc::ToGrpc(refused.status());
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(wire.error_message().rfind("workload_weights[1]: must be a finite number > 0, got -1", 0), 0u)
      << wire.error_message();
  auto none = db_->GetJob("bad-weight");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // None: every workload weighs 1, as before weights.
  request.clear_workload_weights();
  auto plain = jobs.Submit(JobSpecFromRequest(request), "plain");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(JobSpecFromJson(plain->state.spec)->workload_weights.empty());
}

}  // namespace
}  // namespace tunefarm::daemon
