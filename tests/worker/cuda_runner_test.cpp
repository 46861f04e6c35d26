// The runner's CUDA path end to end on a stand-in driver (fake_libcuda.cc):
// the GPU opened, cuda candidates built with NVRTC and loaded, inputs copied,
// launches timed with events, outputs compared with the reference; a kernel
// that faults costs its candidate only (runtime_error naming the CUDA error,
// then a fresh runner); targets of another architecture and GPUs that are
// not there are refused naming why. The stand-in runs no kernel, so only a
// check of the outputs' values tells it from a GPU. Needs NVRTC (the toolkit).
#include <cstdlib>

#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

class CudaRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    if (!cuda::NvrtcAvailable(&why_not)) GTEST_SKIP() << "no NVRTC: " << why_not;
    // Runners inherit this process's environment: they load the stand-in.
    ::setenv("TUNEFARM_LIBCUDA", TUNEFARM_FAKE_LIBCUDA, 1);
  }
  void TearDown() override { ::unsetenv("TUNEFARM_LIBCUDA"); }

  static LocalMeasurerOptions GpuOptions(const std::string& device = "cuda:0") {
    LocalMeasurerOptions o = TestMeasurerOptions();
    o.device = device;
    return o;
  }
  static MeasureInput Gpu(std::string id, std::string trace = "", std::string target = "cuda -arch=sm_90") {
    MeasureInput in = Candidate(std::move(id), MatmulText(64, 48, 32), std::move(trace));
    in.target = std::move(target);
    return in;
  }
};

// A trace that binds the matmul's loops to 64-thread blocks.
std::string BoundTrace() {
  auto w = ParseWorkload(MatmulText(64, 48, 32));
  EXPECT_TRUE(w.ok());
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok());
  Schedule sch(*f);
  EXPECT_TRUE(BindUnboundLoops(sch, 64).ok());
  return sch.trace().ToText();
}

TEST_F(CudaRunnerTest, ACandidateIsLoadedRunAndTimedWithEvents) {
  LocalMeasurer measurer(GpuOptions());
  MeasureOptions o = FastOptions();
  o.check_correctness = false;  // the stand-in computes nothing
  o.flush_cache = true;
  std::string trace = BoundTrace();
  ASSERT_NE(trace.find("threadIdx.x"), std::string::npos) << trace;
  // An empty trace is the default GPU program; a trace is replayed as given.
  // The tuning loop's baseline is a header without instructions.
  auto results = measurer.Measure({Gpu("default"), Gpu("header", "tunefarm-trace 1\n"), Gpu("bound", trace)}, o);
  ASSERT_EQ(results.size(), 3u);
  for (const MeasureResult& r : results) {
    ASSERT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id << ": " << r.error_message;
    ASSERT_EQ(r.repeat_seconds.size(), 3u);
    // Each run is the module's launches at 10 simulated microseconds each.
    for (double s : r.repeat_seconds) {
      EXPECT_GT(s, 9e-6);
      EXPECT_LT(s, 1e-4);
    }
    EXPECT_GT(r.build_seconds, 0);
  }
  EXPECT_EQ(measurer.runner_starts(), 1);
}

TEST_F(CudaRunnerTest, OutputsAreComparedWithTheReference) {
  LocalMeasurer measurer(GpuOptions());
  auto results = measurer.Measure({Gpu("a")}, FastOptions());
  // Outputs start as all-ones bytes and the stand-in never writes them.
  EXPECT_EQ(results[0].error, MeasureErrorKind::kWrongResult) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("differs from the interpreter reference"), std::string::npos)
      << results[0].error_message;
}

TEST_F(CudaRunnerTest, LargeWorkloadsAreCheckedAgainstTheGpuDefaultProgram) {
  LocalMeasurer measurer(GpuOptions());
  MeasureInput big = Candidate("big", MatmulText(256, 256, 256));  // 3.4e7 flops: beyond the interpreter
  big.target = "cuda -arch=sm_90";
  auto results = measurer.Measure({big}, FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kWrongResult) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("differs from the GPU default schedule reference"), std::string::npos)
      << results[0].error_message;
}

TEST_F(CudaRunnerTest, AFaultingKernelCostsOneCandidateAndAFreshRunnerMeasuresTheRest) {
  LocalMeasurer measurer(GpuOptions());
  MeasureOptions o = FastOptions();
  o.check_correctness = false;
  auto results =
      measurer.Measure({Gpu("before"), Gpu("fault", FaultTrace("cuda-illegal-address")), Gpu("after1"), Gpu("after2")}, o);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone) << results[0].error_message;
  EXPECT_EQ(results[1].error, MeasureErrorKind::kRuntimeError);
  EXPECT_NE(results[1].error_message.find("CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"),
            std::string::npos)
      << results[1].error_message;
  EXPECT_TRUE(results[1].repeat_seconds.empty());
  for (size_t i : {size_t(2), size_t(3)}) {
    EXPECT_EQ(results[i].error, MeasureErrorKind::kNone) << results[i].candidate_id << ": " << results[i].error_message;
    EXPECT_EQ(results[i].repeat_seconds.size(), 3u);
  }
  EXPECT_EQ(measurer.runner_starts(), 2);  // the faulted context went with its runner
}

TEST_F(CudaRunnerTest, OtherArchitecturesAndMissingGpusAreRefusedNamingWhy) {
  LocalMeasurer measurer(GpuOptions());
  auto results = measurer.Measure({Gpu("sm80", "", "cuda -arch=sm_80"), Candidate("cpu", MatmulText(8, 8, 8))},
                                  FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[0].error_message.find("cannot run on device cuda:0 (Fake GPU for tests, sm_90)"), std::string::npos)
      << results[0].error_message;
  EXPECT_TRUE(Measured(results[1]));  // host targets still run on the CPU

  LocalMeasurer third(GpuOptions("cuda:2"));
  auto missing = third.Measure({Gpu("a")}, FastOptions());
  EXPECT_EQ(missing[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(missing[0].error_message.find("device cuda:2 is not usable: no CUDA device cuda:2: the driver reports 1 GPU(s)"),
            std::string::npos)
      << missing[0].error_message;
}

}  // namespace
}  // namespace tunefarm::testing
