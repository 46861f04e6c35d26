// CompileCudaSource: the arch text is checked before NVRTC is loaded, a source
// that does not compile is InvalidArgument with NVRTC's log, and ptxas'
// resource report is parsed per kernel.
#include <gtest/gtest.h>

#include "cuda_test_util.h"

namespace tunefarm::testing {
namespace {

constexpr const char* kTwoKernels = R"(
extern "C" __global__ void __launch_bounds__(128) staged(const float* __restrict__ a, float* __restrict__ b) {
  __shared__ __align__(16) float s[256];
  s[threadIdx.x] = a[threadIdx.x];
  __syncthreads();
  b[threadIdx.x] = s[(threadIdx.x + 1) % 128];
}
extern "C" __global__ void plain(float* b) { b[threadIdx.x] = 1.0f; }
)";

TEST(NvrtcTest, ArchMustBeSmAndDigits) {
  for (const char* arch : {"", "sm_", "sm90", "sm_9x", "compute_90", "sm_90a", "SM_90", "sm_90 -G"}) {
    auto r = cuda::CompileCudaSource(kTwoKernels, arch);
    ASSERT_FALSE(r.ok()) << arch;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << arch << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("sm_"), std::string::npos) << r.status().ToString();
  }
}

TEST(NvrtcTest, CompileErrorsCarryTheLog) {
  TF_SKIP_WITHOUT_NVRTC();
  auto r = cuda::CompileCudaSource("extern \"C\" __global__ void broken(float* a) { a[0] = undeclared_name; }", "sm_90");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("undeclared_name"), std::string::npos) << r.status().ToString();
}

TEST(NvrtcTest, ResourcesOfEachKernel) {
  TF_SKIP_WITHOUT_NVRTC();
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto r = cuda::CompileCudaSource(kTwoKernels, arch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->cubin.compare(0, 4, "\x7f" "ELF"), 0);
    ASSERT_EQ(r->kernels.size(), 2u) << r->log;
    for (const cuda::CudaKernelResources& k : r->kernels) {
      EXPECT_GT(k.registers, 0) << k.kernel;
      EXPECT_EQ(k.spill_bytes, 0) << k.kernel;
      EXPECT_EQ(k.shared_bytes, k.kernel == "staged" ? 1024 : 0) << k.kernel << "\n" << r->log;
    }
  }
}

TEST(NvrtcTest, ParsesPtxasReport) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k_spills' for 'sm_90'\n"
      "ptxas info    : Function properties for k_spills\n"
      "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 48 bytes cumulative stack size, 8192 bytes smem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     512 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k_small' for 'sm_90'\n"
      "ptxas info    : Function properties for k_small\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, 16 bytes lmem\n";
  auto kernels = cuda::ParsePtxasReport(log);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].kernel, "k_spills");
  EXPECT_EQ(kernels[0].registers, 255);
  EXPECT_EQ(kernels[0].spill_bytes, 40);
  EXPECT_EQ(kernels[0].local_bytes, 48);  // not the helper's 512
  EXPECT_EQ(kernels[0].shared_bytes, 8192);
  EXPECT_EQ(kernels[1].kernel, "k_small");
  EXPECT_EQ(kernels[1].registers, 12);
  EXPECT_EQ(kernels[1].spill_bytes, 0);
  EXPECT_EQ(kernels[1].local_bytes, 16);
  EXPECT_EQ(kernels[1].shared_bytes, 0);
}

}  // namespace
}  // namespace tunefarm::testing
