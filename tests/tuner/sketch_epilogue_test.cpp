// The CPU sketch on reductions whose element-wise epilogue reads another
// tensor (a residual Add, then ReLU): a batch-1 1x1 convolution and a dense
// layer, in the form the ONNX import writes them (out reads acc at its own
// iteration variables, unit batch dimension included). Every sampled kernel
// computes the epilogue inside the accumulator's parallel tile, as the
// bias-only twin does -- no local accumulator written back to a global one
// for a separate pass -- and matches the default program on extents 1, 7, 17
// and the prime 103. A batch-1 workload written by hand, reading acc at the
// constant 0 in the unit batch dimension, fuses the same way.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::tuner::testing {
namespace {

constexpr std::string_view kConvAddRelu = R"(
workload conv_add_relu(N = 1, C = 16, K = 32, H = 7, W = 7) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C, 1, 1]
  B  = input const f32[K]
  x  = input f32[N, K, H, W]
  acc[n, k, h, w] = sum(c: C) X[n, c, h, w] * Wt[k, c, 0, 0]
  out[o0, o1, o2, o3] = max(acc[o0, o1, o2, o3] + B[o1] + x[o0, o1, o2, o3], 0.0)
  output out
}
)";

// The same convolution written by hand for batch 1: out reads acc and the
// residual at the constant 0 in the unit batch dimension, not at o0.
constexpr std::string_view kConvAddReluAtZero = R"(
workload conv_add_relu(N = 1, C = 16, K = 32, H = 7, W = 7) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C, 1, 1]
  B  = input const f32[K]
  x  = input f32[N, K, H, W]
  acc[n, k, h, w] = sum(c: C) X[n, c, h, w] * Wt[k, c, 0, 0]
  out[o0: N, o1: K, o2: H, o3: W] = max(acc[0, o1, o2, o3] + B[o1] + x[0, o1, o2, o3], 0.0)
  output out
}
)";

// The plain twin: the same convolution with its bias only.
constexpr std::string_view kConvBias = R"(
workload conv_bias(N = 1, C = 16, K = 32, H = 7, W = 7) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C, 1, 1]
  B  = input const f32[K]
  acc[n, k, h, w] = sum(c: C) X[n, c, h, w] * Wt[k, c, 0, 0]
  out[o0, o1, o2, o3] = acc[o0, o1, o2, o3] + B[o1]
  output out
}
)";

// A dense layer with bias and a residual Add (BERT's output projections;
// M = 1 is one row, as in a batch-1 decoder).
constexpr std::string_view kDenseAddRelu = R"(
workload dense_add_relu(M = 7, N = 17, K = 9) {
  A    = input f32[M, K]
  W    = input const f32[N, K]
  bias = input const f32[N]
  x    = input f32[M, N]
  acc[i, j] = sum(k: K) A[i, k] * W[j, k]
  out[i, j] = max(acc[i, j] + bias[j] + x[i, j], 0.0)
  output out
}
)";

// Some parallel loop of `f` encloses both blocks `a` and `b`.
bool SameParallelTile(const ir::PrimFunc& f, const std::string& a, const std::string& b) {
  bool together = false;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kFor) return;
    const auto* loop = static_cast<const ir::For*>(n);
    if (loop->kind != ir::ForKind::kParallel) return;
    bool has_a = false, has_b = false;
    ir::PostOrderVisit(loop->body, [&](const ir::IRNode* m) {
      if (m->kind != ir::IRNodeKind::kBlock) return;
      const std::string& name = static_cast<const ir::Block*>(m)->name;
      has_a = has_a || name == a;
      has_b = has_b || name == b;
    });
    together = together || (has_a && has_b);
  });
  return together;
}

// Samples `samples` kernels of `f`: every one valid, computing out in acc's
// parallel tile without a local accumulator, and the same as the default
// program (every fourth through the JIT). Returns the traces.
std::vector<std::string> ExpectFusedEpilogue(const ir::PrimFunc& f, int samples, uint64_t seed) {
  auto policy = MakeCpuSketchPolicy(CpuSketchConfig{});
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, seed);
  std::vector<std::string> traces;
  for (int i = 0; i < samples; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) continue;
    const std::string trace = c->trace.ToText();
    traces.push_back(trace);
    SCOPED_TRACE(trace);
    EXPECT_EQ(trace.find("cache_write("), std::string::npos);
    EXPECT_NE(trace.find("reverse_compute_at("), std::string::npos);
    EXPECT_TRUE(SameParallelTile(c->func, "acc", "out")) << ir::ToString(c->func);
    ExpectSameAsDefault(f, c->func, /*jit=*/i % 4 == 0);
  }
  return traces;
}

TEST(SketchEpilogueTest, ConvolutionWithResidualAddFusesItsEpilogueIntoTheTile) {
  const std::vector<std::map<std::string, int64_t>> shapes = {
      {},  // 16 -> 32 channels at 7 x 7: output channels vectorizable
      {{"C", 7}, {"K", 17}, {"H", 1}, {"W", 103}},
      {{"C", 1}, {"K", 103}, {"H", 7}, {"W", 1}},
      {{"C", 17}, {"K", 7}, {"H", 17}, {"W", 7}},
  };
  for (const auto& shape : shapes) {
    ir::PrimFunc f = LowerWithOverrides(kConvAddRelu, shape);
    SCOPED_TRACE(ir::ToString(f).substr(0, 200));
    ExpectFusedEpilogue(f, 12, 23);
  }
}

TEST(SketchEpilogueTest, ResidualAddSamplesTheProgramsOfThePlainTwin) {
  // The residual read adds no decision and removes none: the same seed draws
  // the same traces for the convolution with and without it.
  for (const auto& shape : std::vector<std::map<std::string, int64_t>>{{}, {{"C", 7}, {"K", 17}, {"W", 103}}}) {
    std::vector<std::string> with_residual = ExpectFusedEpilogue(LowerWithOverrides(kConvAddRelu, shape), 8, 31);
    std::vector<std::string> plain = ExpectFusedEpilogue(LowerWithOverrides(kConvBias, shape), 8, 31);
    EXPECT_EQ(with_residual, plain);
  }
}

TEST(SketchEpilogueTest, HandWrittenBatchZeroFusesAsTheImportersForm) {
  // acc[0, ...] in the unit batch dimension is acc[o0, ...]: the epilogue
  // goes into the tile (no cache_write fallback) and the same seed draws the
  // same traces as for the importer's form, at extents 1, 7, 17 and 103.
  const std::vector<std::map<std::string, int64_t>> shapes = {
      {{"C", 7}, {"K", 17}, {"H", 1}, {"W", 103}},
      {{"C", 1}, {"K", 103}, {"H", 7}, {"W", 1}},
      {{"C", 17}, {"K", 7}, {"H", 17}, {"W", 7}},
  };
  for (const auto& shape : shapes) {
    ir::PrimFunc at_zero = LowerWithOverrides(kConvAddReluAtZero, shape);
    SCOPED_TRACE(ir::ToString(at_zero).substr(0, 200));
    std::vector<std::string> hand_written = ExpectFusedEpilogue(at_zero, 8, 37);
    std::vector<std::string> imported = ExpectFusedEpilogue(LowerWithOverrides(kConvAddRelu, shape), 8, 37);
    ASSERT_EQ(hand_written.size(), 8u);
    EXPECT_EQ(hand_written, imported);
  }
}

TEST(SketchEpilogueTest, DenseWithResidualAddFusesItsEpilogueIntoTheTile) {
  for (const auto& shape : std::vector<std::map<std::string, int64_t>>{
           {}, {{"M", 1}, {"N", 103}, {"K", 7}}, {{"M", 17}, {"N", 1}, {"K", 103}}, {{"M", 103}, {"N", 7}, {"K", 1}}}) {
    ir::PrimFunc f = LowerWithOverrides(kDenseAddRelu, shape);
    SCOPED_TRACE(ir::ToString(f).substr(0, 200));
    ExpectFusedEpilogue(f, 12, 29);
  }
}

}  // namespace
}  // namespace tunefarm::tuner::testing
