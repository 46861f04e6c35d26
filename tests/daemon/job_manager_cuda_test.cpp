// Jobs for a cuda target on the daemon: served by the fleet's workers of the
// GPU's key (here a worker in this process on the synthetic test device),
// drawn by the GPU sketch rules, recorded under the cuda target with the
// worker's fingerprint; and, while no worker serves the key, said at once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/job_manager.h"
#include "tunefarm/database/database.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::daemon {
namespace {

namespace fs = std::filesystem;

// A GPU worker living in this process: answers with the test device's
// synthetic times and remembers the traces it was sent.
class FakeGpuWorker {
 public:
  explicit FakeGpuWorker(FleetDispatcher* fleet) : fleet_(fleet) {
    WorkerInfo info;
    info.device_key = "cuda-sm_90";
    info.device = "cuda:0";
    info.hostname = "gpu-3";
    info.max_in_flight = 8;
    info.fingerprint.isa = "cuda";
    info.fingerprint.arch = "sm_90";
    info.fingerprint.cores = 132;
    info.fingerprint.toolchain = "nvrtc lowering-r1";
    info.host_target = "cuda -arch=sm_90";
    id_ = fleet_->AddWorker(info, [this](Dispatch d) {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back(std::move(d));
      cv_.notify_one();
    });
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeGpuWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    fleet_->RemoveWorker(id_, "test over");
  }
  std::vector<std::string> traces() {
    std::lock_guard<std::mutex> lock(mu_);
    return traces_;
  }

 private:
  void Loop() {
    TestDeviceMeasurer device;
    while (true) {
      Dispatch d;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !inbox_.empty(); });
        if (stop_) return;
        d = std::move(inbox_.front());
        inbox_.erase(inbox_.begin());
        for (const MeasureInput& in : d.inputs) traces_.push_back(in.trace_text);
      }
      fleet_->OnResults(id_, device.Measure(d.inputs, d.options));
    }
  }

  FleetDispatcher* fleet_;
  std::string id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Dispatch> inbox_;
  std::vector<std::string> traces_;
  bool stop_ = false;
  std::thread thread_;
};

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

class CudaJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("tunefarm_cuda_jobs_" + std::to_string(::getpid()) + ".db");
    fs::remove(path_);
    db_ = std::move(database::Database::Open(path_.string())).value();
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  JobView WaitEnded(JobManager& jobs, const std::string& id) {
    JobView v;
    for (int i = 0; i < 600; ++i) {
      v = *jobs.WaitForChange(id, v.version, 0.1);
      if (v.finished()) break;
    }
    return v;
  }
  fs::path path_;
  std::unique_ptr<database::Database> db_;
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
  FakeGpuWorker gpu(&fleet);
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
