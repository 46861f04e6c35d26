// The Compile service for a cuda target: the cubin and the header with its
// host launcher, as `tunefarm compile` writes them (tuner/kernel_header.h),
// cached like any kernel; or, without NVRTC, a status that says so.
#include "service_test_util.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"

namespace tunefarm::daemon::testing {
namespace {

// A cuda target is answered as `tunefarm compile` writes it: the cubin and
// the header with its launcher; where the daemon has no NVRTC, the status
// says so and nothing is cached.
TEST(CompileServiceCudaTest, ACudaTargetIsACubinAndItsLauncherOrSaysNvrtcIsMissing) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  v1::CompileRequest request = TextRequest(kMatmulText);
  request.set_target("cuda -arch=sm_90");
  v1::CompileResponse r;
  grpc::Status s = h->Compile(request, &r);
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    EXPECT_NE(s.error_message().find("NVRTC"), std::string::npos) << s.error_message();
    EXPECT_TRUE(r.binary().empty());
    EXPECT_EQ(h->compile_service().cached_entries(), 0u);
    return;
  }
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  EXPECT_EQ(r.symbol(), "mm_launch");
  ASSERT_GT(r.binary().size(), 20u);
  EXPECT_EQ(r.binary().substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(uint8_t(r.binary()[18]), 190);  // e_machine EM_CUDA
  EXPECT_NE(r.binary().find("mm_kernel0"), std::string::npos);
  EXPECT_NE(r.header().find("CUresult mm_launch(CUstream stream,"), std::string::npos) << r.header();
  EXPECT_NE(r.header().find("default GPU program"), std::string::npos) << r.header();
  EXPECT_FALSE(r.cached());
  v1::CompileResponse again;
  ASSERT_TRUE(h->Compile(request, &again).ok());
  EXPECT_TRUE(again.cached());
  EXPECT_EQ(again.binary(), r.binary());
  EXPECT_EQ(h->compile_service().compilations(), 1);
}

}  // namespace
}  // namespace tunefarm::daemon::testing
