// The sketch's stride phases: a reduction that reads an input with stride 2
// along its vector axis samples kernels that read it through a copy split
// into its phases (split_phases), at odd widths (1, 7, 17, 101), and every
// such kernel computes what the default program does through the JIT; the
// copy itself is written phase after phase, in vectors.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sketch_test_util.h"

namespace tunefarm::tuner::testing {
namespace {

// MobileNet-V2's stride-2 depthwise 3x3, small.
constexpr std::string_view kDepthwiseStride2 = R"(
workload dws2(N = 1, C = 16, H = 7, W = 17, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[c, r, s]
  output out
}
)";

// ResNet-50's stride-2 1x1 downsample: no guard, the input read directly.
constexpr std::string_view kDownsample = R"(
workload down(N = 1, C = 8, H = 6, W = 17, K = 16) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C]
  out[n, k, h: (H - 1) / 2 + 1, w: (W - 1) / 2 + 1] = sum(c: C) X[n, c, h * 2, w * 2] * Wt[k, c]
  output out
}
)";


// Kernels sampled that split an input into phases; each goes through the JIT.
int SamplePhased(const ir::PrimFunc& f, int samples) {
  auto policy = MakeCpuSketchPolicy(CpuSketchConfig{});
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 19);
  int phased = 0;
  for (int i = 0; i < samples; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) continue;
    const std::string trace = c->trace.ToText();
    if (trace.find("split_phases(") == std::string::npos) continue;
    ++phased;
    SCOPED_TRACE(trace);
    ExpectSameAsDefault(f, c->func, /*jit=*/true);
  }
  return phased;
}

TEST(SketchPhasesTest, StrideTwoDepthwiseReadsPhasedCopies) {
  for (int64_t w : {1, 7, 17, 101}) {
    SCOPED_TRACE("W = " + std::to_string(w));
    const int phased = SamplePhased(LowerWithOverrides(kDepthwiseStride2, {{"W", w}}), 16);
    // One output column (W = 1) is a vector axis of one lane: the rule may
    // draw the split or not; wider rows draw it.
    if (w > 1) {
      EXPECT_GT(phased, 0);
    }
  }
}

// A copy split along its innermost dimension is written phase after phase,
// each phase's row one vector (a deinterleaved load of the input), not one
// element at a time; checked through the interpreter as well at odd widths.
TEST(SketchPhasesTest, PhasedCopiesWritePhaseAfterPhaseInVectors) {
  for (int64_t w : {7, 17, 101}) {
    SCOPED_TRACE("W = " + std::to_string(w));
    ir::PrimFunc f = LowerWithOverrides(kDepthwiseStride2, {{"W", w}});
    auto policy = MakeCpuSketchPolicy(CpuSketchConfig{});
    EvolutionarySearch search(f, policy.get(), SearchOptions{}, 23);
    int vectorized = 0;
    for (int i = 0; i < 24; ++i) {
      auto c = search.Sample();
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      const std::string trace = c->trace.ToText();
      const size_t at = trace.find("split_phases(");
      if (at == std::string::npos) continue;
      const std::string after = trace.substr(at);
      // The copy's innermost loop x = 2 * x' + q: q outside, x' vectorized
      // (a task's copy narrower than two elements per phase stays as it was).
      if (after.find(", [-1, 2])") == std::string::npos) continue;
      EXPECT_NE(after.find("reorder("), std::string::npos) << trace;
      EXPECT_NE(after.find("vectorize("), std::string::npos) << trace;
      ++vectorized;
      SCOPED_TRACE(trace);
      ExpectSameAsDefault(f, c->func, /*jit=*/false);
    }
    EXPECT_GT(vectorized, 0);
  }
}

TEST(SketchPhasesTest, StrideTwoPointwiseConvolutionReadsAPhasedCopy) {
  EXPECT_GT(SamplePhased(LowerWithOverrides(kDownsample, {}), 24), 0);
}

TEST(SketchPhasesTest, RuleOffNeverSplits) {
  CpuSketchConfig config;
  config.stride_phases = false;
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(LowerWithOverrides(kDepthwiseStride2, {}), policy.get(), SearchOptions{}, 19);
  for (int i = 0; i < 16; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->trace.ToText().find("split_phases("), std::string::npos);
  }
}

}  // namespace
}  // namespace tunefarm::tuner::testing
