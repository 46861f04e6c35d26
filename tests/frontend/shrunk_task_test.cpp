// Every task of the test models, on shrunk copies (task_slice.h: a corner at
// the start and one at the end of the output, with odd sizes), compiled with
// its default schedule, computes what the reference interpreter computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "compiled_vs_interpreted.h"
#include "task_slice.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

constexpr double kShrunkFlops = 4e6;

class ShrunkTaskTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ShrunkTaskTest, EveryTaskOnCornersOfItsOutputMatchesTheInterpreter) {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + GetParam() + ".onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const ModelTask& t : m->tasks) {
    for (bool at_end : {false, true}) {
      auto small = testing::SliceTask(t.workload, 3, 5, at_end);
      ASSERT_TRUE(small.ok()) << t.workload.name << ": " << small.status().ToString();
      EXPECT_LE(small->Flops(), kShrunkFlops) << small->name << " is not shrunk enough to interpret";
      if (small->Flops() > kShrunkFlops) continue;
      testing::ExpectCompiledEqualsInterpreted(*small);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ShrunkTaskTest,
                         ::testing::Values("resnet50", "mobilenet_v2", "bert_layer", "small_cnn", "small_transformer",
                                           "small_detector", "small_embedder", "small_legacy",
                                           "small_masked_attention"));

// The slice keeps what makes a task what it is: a stride-2 padded
// convolution's end corner reads the input's last rows through the guard.
TEST(TaskSlice, EndCornerOfAPaddedConvolutionReadsItsLastInputRows) {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/resnet50.onnx");
  ASSERT_TRUE(m.ok());
  const ModelTask* stem = &m->tasks[0];
  ASSERT_EQ(stem->workload.name, "resnet50_conv7x7_c3_k64_h224_s2_relu");
  auto end = testing::SliceTask(stem->workload, 3, 5, true);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->outputs[0]->shape, (std::vector<int64_t>{1, 3, 3, 5}));
  EXPECT_EQ(end->inputs[0]->shape, stem->workload.inputs[0]->shape);  // inputs are not cut
  // The slice's values are the full task's values at the corner.
  auto f_full = LowerToPrimFunc(stem->workload);
  auto f_end = LowerToPrimFunc(*end);
  ASSERT_TRUE(f_full.ok() && f_end.ok());
  std::mt19937_64 rng(5);
  std::vector<HostBuffer> full, cut;
  for (size_t i = 0; i < f_full->params.size(); ++i) {
    full.push_back(HostBuffer::Like(f_full->params[i]));
    if (i < f_full->num_inputs) full.back().FillRandom(rng);
    cut.push_back(HostBuffer::Like(f_end->params[i]));
    if (i < f_full->num_inputs) std::memcpy(cut.back().data(), full.back().data(), size_t(full.back().size_bytes()));
  }
  std::vector<void*> full_raw, cut_raw;
  for (auto& b : full) full_raw.push_back(b.data());
  for (auto& b : cut) cut_raw.push_back(b.data());
  auto jit_full = JitCompile(*f_full, Target::Host());
  auto jit_end = JitCompile(*f_end, Target::Host());
  ASSERT_TRUE(jit_full.ok() && jit_end.ok());
  ASSERT_TRUE((*jit_full)->Run(full_raw).ok());
  ASSERT_TRUE((*jit_end)->Run(cut_raw).ok());
  const std::vector<int64_t>& s = stem->workload.outputs[0]->shape;  // 1 x 64 x 112 x 112
  for (int64_t k = 0; k < 3; ++k) {
    for (int64_t h = 0; h < 3; ++h) {
      for (int64_t w = 0; w < 5; ++w) {
        int64_t at_full = ((s[1] - 3 + k) * s[2] + (s[2] - 3 + h)) * s[3] + (s[3] - 5 + w);
        // The two programs may sum in different orders: equal to rounding.
        float expected = full.back().as<float>()[at_full];
        EXPECT_NEAR(cut.back().as<float>()[(k * 3 + h) * 5 + w], expected, 1e-5f * (1 + std::fabs(expected)));
      }
    }
  }
}

}  // namespace
}  // namespace tunefarm::frontend
