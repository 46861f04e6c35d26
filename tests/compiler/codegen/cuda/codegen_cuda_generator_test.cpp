// The registry serves `cuda` targets with the CUDA code generator: EmitObject
// is the cubin of a GPU-scheduled program for the target's arch, there is no
// JIT, and a program not bound to the GPU is refused.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"
#include "tunefarm/compiler/codegen/codegen.h"

namespace tunefarm::testing {
namespace {

Result<ir::PrimFunc> GpuMatmul() {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(kMatmul, {{"M", 17}, {"N", 33}, {"K", 7}}));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({l[0], l[1]}));
  TF_ASSIGN_OR_RETURN(auto s, sch.Split(fused, {-1, 128}));
  TF_RETURN_IF_ERROR(sch.Bind(s[0], "blockIdx.x"));
  TF_RETURN_IF_ERROR(sch.Bind(s[1], "threadIdx.x"));
  return sch.func();
}

TEST(CodegenCudaGeneratorTest, CudaTargetsGetTheCubinForTheirArch) {
  auto target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto generator = CodeGeneratorFor(*target);
  ASSERT_TRUE(generator.ok()) << generator.status().ToString();
  EXPECT_EQ((*generator)->kind(), "cuda");
  EXPECT_FALSE((*generator)->can_jit());
  auto f = GpuMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto jit = (*generator)->JitCompile(*f, *target, CodegenOptions());
  EXPECT_EQ(jit.status().code(), StatusCode::kUnimplemented);
  TF_SKIP_WITHOUT_NVRTC();
  auto cubin = (*generator)->EmitObject(*f, *target, CodegenOptions());
  ASSERT_TRUE(cubin.ok()) << cubin.status().ToString();
  EXPECT_EQ(cubin->compare(0, 4, "\x7f" "ELF"), 0);
}

TEST(CodegenCudaGeneratorTest, AProgramNotBoundToTheGpuIsRefused) {
  auto target = Target::Parse("cuda -arch=sm_80");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto base = LowerText(kMatmul);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto cubin = (*CodeGeneratorFor(*target))->EmitObject(*base, *target, CodegenOptions());
  ASSERT_FALSE(cubin.ok());
  EXPECT_EQ(cubin.status().code(), StatusCode::kInvalidArgument) << cubin.status().ToString();
}

}  // namespace
}  // namespace tunefarm::testing
