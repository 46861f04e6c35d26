// Jobs for a cuda target on the daemon: served by the fleet's workers of the
// GPU's key (here a worker in this process on the synthetic test device),
// drawn by the GPU sketch rules, recorded under the cuda target with the
// worker's fingerprint; and, while no worker serves the key, said at once.
#include <gtest/gtest.h>

#include <string>

#include "job_manager_test_util.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"

namespace tunefarm::daemon {
namespace {

// A GPU's worker: key cuda-sm_90, its fingerprint a GPU's.
WorkerInfo GpuWorkerInfo() {
  WorkerInfo info;
  info.device_key = "cuda-sm_90";
  info.device = "cuda:0";
  info.hostname = "gpu-3";
  info.max_in_flight = 8;
  info.fingerprint.isa = "cuda";
  info.fingerprint.arch = "sm_90";
  info.fingerprint.cores = 132;
  info.fingerprint.toolchain = "nvrtc lowering-r" + std::to_string(kLoweringRevision);
  info.host_target = "cuda -arch=sm_90";
  return info;
}

JobSpec GpuJob(int trials) {
  JobSpec spec;
  spec.workloads = {"workload mm(M = 64, N = 64, K = 32) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n"};
  spec.target = "cuda -arch=sm_90";
  spec.device_key = "cuda-sm_90";
  spec.trials = trials;
  spec.batch_size = 8;
  return spec;
}

class CudaJobTest : public testing::JobLogTest {
 protected:
  CudaJobTest() : JobLogTest("tunefarm_cuda_jobs_") {}
};

TEST_F(CudaJobTest, AGpuJobWithoutAGpuWorkerSaysSoAtOnce) {
  FleetDispatcher fleet;
  JobManagerOptions options;
  options.device_key_wait_s = 0.3;
  JobManager jobs(db_.get(), &fleet, options);
  auto job = jobs.Submit(GpuJob(8), "gpu");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_NE(job->warning.find("no connected worker serves device key 'cuda-sm_90'"), std::string::npos) << job->warning;
  JobView failed = WaitEnded(jobs, "gpu");
  EXPECT_EQ(failed.state.status, database::JobStatus::kFailed);
  EXPECT_NE(failed.state.error.find("'cuda-sm_90'"), std::string::npos) << failed.state.error;
}

TEST_F(CudaJobTest, AGpuJobIsTunedWithGpuProgramsAndRecordedUnderTheCudaTarget) {
  FleetDispatcher fleet;
  testing::FakeWorker gpu(&fleet, GpuWorkerInfo());
  JobManager jobs(db_.get(), &fleet, {});
  ASSERT_TRUE(jobs.Submit(GpuJob(24), "gpu").ok());
  JobView done = WaitEnded(jobs, "gpu");
  ASSERT_EQ(done.state.status, database::JobStatus::kDone) << done.state.error;
  int bound = 0;
  for (const std::string& trace : gpu.traces()) bound += trace.find("threadIdx.x") != std::string::npos;
  EXPECT_GE(bound, 16) << "the candidates were not GPU programs";
  int records = 0;
  ASSERT_TRUE(db_->ForEachRecord({}, [&](const database::TuningRecord& r) {
                   ++records;
                   EXPECT_EQ(r.target.target, "cuda -arch=sm_90");
                   EXPECT_EQ(r.target.fingerprint.isa, "cuda");
                   EXPECT_EQ(r.device, "cuda-sm_90");
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(records, 24);
}

}  // namespace
}  // namespace tunefarm::daemon
