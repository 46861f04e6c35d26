// Every workload of the suite (configs/workloads/), in its default GPU
// program (DefaultGpuSchedule: each stage a kernel of 256-thread blocks),
// generates CUDA C that NVRTC compiles for sm_90: every stage form the
// workload language has (padding selects, strided gathers, integer inputs,
// multi-stage normalizations with workspaces) prints as valid CUDA.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"

namespace tunefarm::testing {
namespace {

TEST(CodegenCudaSuiteTest, DefaultGpuProgramsOfTheSuiteCompile) {
  std::vector<std::string> files = SuiteWorkloadFiles();
  ASSERT_FALSE(files.empty());
  std::string why_not;
  bool nvrtc = cuda::NvrtcAvailable(&why_not);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto base = LowerText(ReadTextFile(path));
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    auto gpu = DefaultGpuSchedule(*base);
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    auto module = LowerAndGenerate(*gpu);
    ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*gpu);
    EXPECT_GE(module->launches.size(), 1u);
    for (const cuda::CudaLaunch& launch : module->launches) {
      EXPECT_LE(launch.threads_per_block(), 256) << launch.kernel;
      EXPECT_FALSE(launch.buffers.empty()) << launch.kernel;
    }
    if (!nvrtc) continue;
    auto compiled = cuda::CompileCudaSource(module->source, "sm_90");
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString() << "\n" << module->source;
    EXPECT_EQ(compiled->kernels.size(), module->launches.size()) << compiled->log;
  }
  if (!nvrtc) GTEST_SKIP() << "generated, not compiled: NVRTC is not available: " << why_not;
}

}  // namespace
}  // namespace tunefarm::testing
