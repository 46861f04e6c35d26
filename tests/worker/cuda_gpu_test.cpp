// The CUDA device on a real GPU (GPU 0): candidates compiled with NVRTC are
// run, checked against the references (the interpreter's, and the GPU
// default program's for a workload beyond it) and timed; a kernel that
// writes through a null pointer costs its candidate only. Skipped, saying
// why, on a machine without a GPU; the runner is $TUNEFARM_RUNNER when set
// (a test binary copied to a GPU machine beside its runner), else the build's.
#include <cstdio>
#include <cstdlib>

#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/worker/cuda_device.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gpu = QueryCudaDevice(0);
    if (!gpu.ok()) GTEST_SKIP() << "no GPU: " << gpu.status().message();
    gpu_ = *gpu;
    options_ = TestMeasurerOptions();
    options_.device = "cuda:0";
    const char* runner = std::getenv("TUNEFARM_RUNNER");
    if (runner != nullptr && *runner) options_.runner_path = runner;
    std::printf("GPU 0: %s, %s, %d SMs, %s\n", gpu_.name.c_str(), gpu_.Arch().c_str(), gpu_.sm_count,
                gpu_.DriverText().c_str());
  }
  MeasureInput Gpu(std::string id, const std::string& workload, std::string trace = "") const {
    MeasureInput in = Candidate(std::move(id), workload, std::move(trace));
    in.target = gpu_.TargetText();
    return in;
  }
  CudaDeviceInfo gpu_;
  LocalMeasurerOptions options_;
};

// A trace binding the matmul's loops to blocks of `threads`.
std::string BoundTrace(const std::string& workload, int64_t threads) {
  auto w = ParseWorkload(workload);
  EXPECT_TRUE(w.ok());
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok());
  Schedule sch(*f);
  EXPECT_TRUE(BindUnboundLoops(sch, threads).ok());
  return sch.trace().ToText();
}

TEST_F(CudaGpuTest, CandidatesAreCheckedAndTimed) {
  LocalMeasurer measurer(options_);
  const std::string small = MatmulText(64, 48, 32), big = MatmulText(512, 256, 384);  // big: GPU reference
  MeasureOptions o = FastOptions();
  o.flush_cache = true;
  auto results = measurer.Measure({Gpu("small-default", small), Gpu("small-64", small, BoundTrace(small, 64)),
                                   Gpu("big-default", big), Gpu("big-128", big, BoundTrace(big, 128))},
                                  o);
  for (const MeasureResult& r : results) {
    ASSERT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id << ": " << r.error_message;
    ASSERT_EQ(r.repeat_seconds.size(), 3u) << r.candidate_id;
    for (double s : r.repeat_seconds) EXPECT_GT(s, 0) << r.candidate_id;
    std::printf("%s: %.2f us per run (build %.0f ms)\n", r.candidate_id.c_str(), r.repeat_seconds[0] * 1e6,
                r.build_seconds * 1e3);
  }
  EXPECT_EQ(measurer.runner_starts(), 1);
}

TEST_F(CudaGpuTest, AKernelWritingThroughANullPointerCostsOneCandidate) {
  LocalMeasurer measurer(options_);
  const std::string mm = MatmulText(64, 48, 32);
  auto results = measurer.Measure(
      {Gpu("before", mm), Gpu("fault", mm, FaultTrace("cuda-illegal-address")), Gpu("after", mm)}, FastOptions());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone) << results[0].error_message;
  EXPECT_EQ(results[1].error, MeasureErrorKind::kRuntimeError);
  EXPECT_NE(results[1].error_message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << results[1].error_message;
  EXPECT_EQ(results[2].error, MeasureErrorKind::kNone) << results[2].error_message;
  EXPECT_EQ(measurer.runner_starts(), 2);
  std::printf("fault: %s\n", results[1].error_message.c_str());
}

}  // namespace
}  // namespace tunefarm::testing
