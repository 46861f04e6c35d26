// Whole kernels whose element-wise stage is a math function, vectorized:
// BERT's feed-forward dense layer with its GELU (erf form) epilogue and the
// row softmax (exp), from their workload files at shrunk shapes, scheduled
// with the element-wise stage's inner axis vectorized and run through the
// JIT against the reference interpreter. The kernels' IR calls no libm.
#include <filesystem>

#include "../schedule_test_util.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;
using testing::Overrides;

std::string SourceFile(const std::string& relative) {
  return testing::ReadTextFile((fs::path(TUNEFARM_SOURCE_DIR) / relative).string());
}

// Splits the inner axis of `block` into `lanes` and vectorizes it.
testing::ScheduleSteps VectorizeInner(const std::string& block, int64_t lanes) {
  return [block, lanes](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(block));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(b));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> split, sch.Split(loops.back(), {-1, lanes}));
    return sch.Vectorize(split.back());
  };
}

void ExpectVectorizedAndCorrect(const std::string& file, const Overrides& shape, const std::string& block,
                                int64_t lanes) {
  testing::ScheduleOutcome outcome;
  EXPECT_TRUE(testing::ScheduleIsCorrect(SourceFile(file), shape, VectorizeInner(block, lanes), &outcome))
      << file << " at " << lanes << " lanes";
  auto ir = EmitLLVMIR(outcome.scheduled, Target::Host());
  ASSERT_TRUE(ir.ok()) << ir.status().ToString();
  EXPECT_NE(ir->find("<" + std::to_string(lanes) + " x float>"), std::string::npos) << *ir;
  // exp as LLVM's intrinsic would be one expf call per lane in the backend.
  for (const char* libm : {"@erff", "@expf", "@llvm.exp."}) {
    EXPECT_EQ(ir->find(libm), std::string::npos) << libm << "\n" << *ir;
  }
}

TEST(CodegenMathKernelTest, BertGeluDenseLayerShrunk) {
  const std::string file = "configs/layers/bert_b1_dense_m128_n3072_k768_gelu.tf";
  // K = 48: |acc + bias| reaches past 3, both branches of erf.
  ExpectVectorizedAndCorrect(file, {{"M", 4}, {"N", 48}, {"K", 48}}, "out", 16);
  ExpectVectorizedAndCorrect(file, {{"M", 3}, {"N", 51}, {"K", 48}}, "out", 17);
}

TEST(CodegenMathKernelTest, SoftmaxShrunk) {
  ExpectVectorizedAndCorrect("configs/workloads/softmax.tf", {{"M", 4}, {"N", 32}}, "e", 16);
  ExpectVectorizedAndCorrect("configs/workloads/softmax.tf", {{"M", 3}, {"N", 21}}, "e", 7);
}

}  // namespace
}  // namespace tunefarm
