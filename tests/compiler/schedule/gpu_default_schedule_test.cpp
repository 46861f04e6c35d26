// The default GPU program (BindUnboundLoops / DefaultGpuSchedule): every root
// loop nest becomes a kernel bound to blockIdx.x / threadIdx.x, the program
// still equals the default one through the interpreter, it passes
// VerifyGpuBindings once lowered, and its trace replays to the same program.
#include "../schedule_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/simplify.h"
#include "tunefarm/compiler/lower/lower_blocks.h"
#include "tunefarm/compiler/lower/verify_gpu.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"

namespace tunefarm::testing {
namespace {

// Small enough for the interpreter to run every shrunk suite workload quickly.
constexpr double kGpuFlopBudget = 2e4;

// Occurrences of `needle` in `text`.
size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Blocks lowered away and simplified: the form VerifyGpuBindings checks.
ir::PrimFunc LowerForVerify(ir::PrimFunc f) {
  f.body = ir::Simplify(ir::LowerBlocks(f.body));
  return f;
}

// Schedules `base` with BindUnboundLoops and checks results, verification and replay.
::testing::AssertionResult DefaultGpuIsCorrect(const ir::PrimFunc& base, int64_t threads, Schedule* out = nullptr) {
  Schedule sch(base, 1);
  Status s = BindUnboundLoops(sch, threads);
  if (!s.ok()) return ::testing::AssertionFailure() << "BindUnboundLoops: " << s.ToString();
  auto ref = MakeReference(base);
  if (!ref.ok()) return ::testing::AssertionFailure() << "reference: " << ref.status().ToString();
  auto r = MatchesReference(*ref, sch.func(), /*jit=*/false);
  if (!r) return r;
  Status verified = VerifyGpuBindings(LowerForVerify(sch.func()));
  if (!verified.ok()) {
    return ::testing::AssertionFailure() << "VerifyGpuBindings: " << verified.ToString() << "\n"
                                         << ir::ToString(sch.func());
  }
  r = ReplaysIdentically(base, sch);
  if (!r) return r;
  if (out) *out = sch;
  return ::testing::AssertionSuccess();
}

TEST(GpuDefaultScheduleTest, MatmulIsOneKernelOfBlocksOfThreads) {
  auto base = LowerText(kMatmul, {{"M", 16}, {"N", 16}, {"K", 8}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base);
  ASSERT_TRUE(DefaultGpuIsCorrect(*base, 64, &sch));
  std::string text = ir::ToString(sch.func());
  // i and j fused (256) and split 4 x 64; k stays a serial loop inside the thread.
  EXPECT_NE(text.find("in [0, 4) thread_binding(\"blockIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("in [0, 64) thread_binding(\"threadIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for k in [0, 8) {"), std::string::npos) << text;
  EXPECT_NE(sch.trace().ToText().find("bind("), std::string::npos) << sch.trace().ToText();
}

TEST(GpuDefaultScheduleTest, SmallNestUsesItsExtentAsTheBlock) {
  auto base = LowerText(kMatmul, {{"M", 4}, {"N", 8}, {"K", 4}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto f = DefaultGpuSchedule(*base);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string text = ir::ToString(*f);
  EXPECT_NE(text.find("in [0, 32) thread_binding(\"threadIdx.x\")"), std::string::npos) << text;
}

TEST(GpuDefaultScheduleTest, NonDivisibleExtentIsGuarded) {
  auto base = LowerText(kBiasRelu, {{"M", 5}, {"N", 13}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base);
  ASSERT_TRUE(DefaultGpuIsCorrect(*base, 16, &sch));
  std::string text = ir::ToString(sch.func());
  // Two element-wise stages at the root: two kernels of 65 -> 5 x 16 threads.
  EXPECT_EQ(Count(text, "thread_binding(\"blockIdx.x\")"), 2u) << text;
  EXPECT_EQ(Count(text, "in [0, 5) thread_binding(\"blockIdx.x\")"), 2u) << text;
}

TEST(GpuDefaultScheduleTest, ComputedAtProducerSharesItsConsumersKernel) {
  auto base = LowerText(kBiasRelu, {});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base, 1);
  auto out = sch.GetBlock("out");
  ASSERT_TRUE(out.ok());
  auto loops = sch.GetLoops(*out);
  ASSERT_TRUE(loops.ok());
  auto t = sch.GetBlock("t");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(sch.ComputeAt(*t, (*loops)[1]).ok());
  ASSERT_TRUE(BindUnboundLoops(sch, 32).ok());
  std::string text = ir::ToString(sch.func());
  EXPECT_EQ(Count(text, "thread_binding(\"blockIdx.x\")"), 1u) << text;
  EXPECT_EQ(Count(text, "thread_binding(\"threadIdx.x\")"), 1u) << text;
  EXPECT_TRUE(VerifyGpuBindings(LowerForVerify(sch.func())).ok()) << text;
  auto ref = MakeReference(*base);
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(MatchesReference(*ref, sch.func(), /*jit=*/false));
  EXPECT_TRUE(ReplaysIdentically(*base, sch));
}

TEST(GpuDefaultScheduleTest, BoundNestsAreLeftAlone) {
  auto base = LowerText(kMatmul, {{"M", 16}, {"N", 16}, {"K", 8}});
  ASSERT_TRUE(base.ok());
  Schedule sch(*base);
  ASSERT_TRUE(BindUnboundLoops(sch, 64).ok());
  std::string once = ir::ToString(sch.func());
  size_t steps = sch.trace().size();
  ASSERT_TRUE(BindUnboundLoops(sch, 32).ok());
  EXPECT_EQ(ir::ToString(sch.func()), once);
  EXPECT_EQ(sch.trace().size(), steps);
}

TEST(GpuDefaultScheduleTest, NestWithThreadsGetsOnlyTheGrid) {
  auto base = LowerText(kMatmul, {{"M", 8}, {"N", 16}, {"K", 4}});
  ASSERT_TRUE(base.ok());
  Schedule sch(*base);
  auto c = sch.GetBlock("C");
  ASSERT_TRUE(c.ok());
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  ASSERT_TRUE(sch.Bind((*loops)[1], "threadIdx.x").ok());  // j
  ASSERT_TRUE(BindUnboundLoops(sch, 256).ok());
  std::string text = ir::ToString(sch.func());
  EXPECT_NE(text.find("for i in [0, 8) thread_binding(\"blockIdx.x\")"), std::string::npos) << text;
  EXPECT_EQ(Count(text, "thread_binding(\"threadIdx.x\")"), 1u) << text;
  EXPECT_TRUE(VerifyGpuBindings(LowerForVerify(sch.func())).ok()) << text;
  auto ref = MakeReference(*base);
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(MatchesReference(*ref, sch.func(), /*jit=*/false));
  EXPECT_TRUE(ReplaysIdentically(*base, sch));
}

TEST(GpuDefaultScheduleTest, RejectsANonPositiveBlockSize) {
  auto base = LowerText(kMatmul, {});
  ASSERT_TRUE(base.ok());
  EXPECT_TRUE(IsInvalid(DefaultGpuSchedule(*base, 0).status(), {"threads_per_block"}));
}

class GpuDefaultScheduleSuiteTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuDefaultScheduleSuiteTest, MatchesTheDefaultProgramAndReplays) {
  auto base = LowerShrunk(GetParam(), kGpuFlopBudget);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  for (int64_t threads : {256, 32}) {
    EXPECT_TRUE(DefaultGpuIsCorrect(*base, threads)) << GetParam() << " with " << threads << " threads per block";
  }
}

// At full size (not interpreted): the default GPU program lowers for CUDA
// (barriers, VerifyGpuBindings with the default limits) and prints as CUDA C,
// one kernel per root nest.
TEST_P(GpuDefaultScheduleSuiteTest, FullSizeLowersAndGeneratesCuda) {
  auto w = ParseWorkloadFile(GetParam());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto scheduled = DefaultGpuSchedule(*base);
  ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
  auto lowered = cuda::LowerForCuda(*scheduled);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(*scheduled);
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->launches.size(), Count(ir::ToString(*scheduled), "thread_binding(\"blockIdx.x\")"));
  for (const cuda::CudaLaunch& launch : module->launches) {
    EXPECT_LE(launch.threads_per_block(), 256) << launch.kernel;
  }
}

// The suite, and a few layers of the layer suite (a convolution of each kind,
// a dense layer, a batched matmul).
std::vector<std::string> GpuWorkloads() {
  std::vector<std::string> files = SuiteWorkloadFiles();
  for (const char* layer : {"resnet50_b1_conv3x3_c64_k64_h56_s1.tf", "resnet50_b1_conv7x7_c3_k64_h224_s2.tf",
                            "mobilenet_v2_b1_dw3x3_c144_h56_s2.tf", "bert_b1_dense_m128_n3072_k768_gelu.tf",
                            "bert_b1_bmm_nt_b12_m128_n128_k64.tf"}) {
    files.push_back(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/" + layer);
  }
  return files;
}

std::string WorkloadName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Workloads, GpuDefaultScheduleSuiteTest, ::testing::ValuesIn(GpuWorkloads()), WorkloadName);

}  // namespace
}  // namespace tunefarm::testing
