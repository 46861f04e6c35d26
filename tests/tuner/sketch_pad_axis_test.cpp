// The sketch's padded vector axes (pad_vector_axis): on extents that are not
// multiples of the vector (1, 7, 17, 24 and the prime 101), sampled kernels
// pad where padding fits, compute what the default program does through the
// JIT, keep the guard out of the multiply-add, and an older worker that
// cannot replay pad_axis never gets one.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "sketch_test_util.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/tuner/sketch_registry.h"

namespace tunefarm::tuner::testing {
namespace {

constexpr std::string_view kMatmul = R"(
workload mm(M = 6, N = 17, K = 11) {
  A = input f32[M, K]
  B = input const f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
)";

// 24 output channels (MobileNet-V2's narrowest projections) on a 5-wide image.
constexpr std::string_view kConv = R"(
workload conv(N = 1, C = 4, H = 5, W = 5, K = 24, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[K, C, R, S]
  out[n, k, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] = sum(c: C, r: R, s: S)
      select(h + r - P >= 0 && h + r - P < H && w + s - P >= 0 && w + s - P < W,
             X[n, c, h + r - P, w + s - P], 0.0) * Wt[k, c, r, s]
  output out
}
)";


struct PadCounts {
  int padded = 0;
  int total = 0;
};

// Samples `samples` kernels; every one is valid, and every padded one (and
// every fifth other) runs through the JIT against the default program.
PadCounts SamplePadded(const ir::PrimFunc& f, int samples, const CpuSketchConfig& config = {}) {
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 41);
  PadCounts counts;
  for (int i = 0; i < samples; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << f.name << ": " << c.status().ToString();
    if (!c.ok()) continue;
    ++counts.total;
    const bool padded = c->trace.ToText().find("pad_axis(") != std::string::npos;
    counts.padded += padded;
    if (padded || i % 5 == 0) {
      SCOPED_TRACE(c->trace.ToText());
      ExpectSameAsDefault(f, c->func, /*jit=*/true);
    }
  }
  return counts;
}

TEST(SketchPadAxisTest, MatmulsPadTheirVectorAxisAtOddWidths) {
  for (int64_t n : {7, 17, 101}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    PadCounts dense = SamplePadded(LowerWithOverrides(kDenseLayer, {{"N", n}}), 24);
    PadCounts mm = SamplePadded(LowerWithOverrides(kMatmul, {{"N", n}}), 24);
    // j is the only vector axis here; padded half the time where it fits
    // (7 would compute 16: more than twice the work, never offered).
    if (n == 7) {
      EXPECT_EQ(dense.padded + mm.padded, 0);
    } else {
      EXPECT_GT(dense.padded, 0);
      EXPECT_GT(mm.padded, 0);
    }
  }
}

TEST(SketchPadAxisTest, ExtentOneNeverPads) {
  PadCounts counts = SamplePadded(LowerWithOverrides(kMatmul, {{"N", 1}}), 12);
  EXPECT_EQ(counts.padded, 0);
  EXPECT_EQ(counts.total, 12);
}

TEST(SketchPadAxisTest, ConvolutionPadsItsOutputChannels) {
  // k = 24 is not the innermost axis: offered only padded, to 32.
  PadCounts counts = SamplePadded(LowerWithOverrides(kConv, {}), 16);
  EXPECT_GT(counts.padded, 0);
}

TEST(SketchPadAxisTest, PaddedKernelKeepsTheGuardOutOfTheMultiplyAdd) {
  ir::PrimFunc f = LowerWithOverrides(kMatmul, {{"N", 17}});
  auto policy = MakeCpuSketchPolicy(CpuSketchConfig{});
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 7);
  int checked = 0;
  for (int i = 0; i < 40 && checked < 3; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (c->trace.ToText().find("pad_axis(") == std::string::npos) continue;
    ++checked;
    // The multiply-add block "C" runs unguarded over 32 columns; the guard
    // (j < 17) is on the write-back only.
    const std::string text = ir::ToString(c->func);
    const size_t block = text.find("block C(");
    ASSERT_NE(block, std::string::npos) << text;
    const std::string header = text.substr(block, text.find('\n', block) - block);
    EXPECT_EQ(header.find("where"), std::string::npos) << header;
    EXPECT_NE(header.find(": 32 ="), std::string::npos) << header;
  }
  EXPECT_GT(checked, 0);
}

TEST(SketchPadAxisTest, WorkersThatCannotReplayItNeverGetIt) {
  std::set<std::string> replayable;
  for (InstructionKind k : AllInstructionKinds()) {
    if (k != InstructionKind::kPadAxis) replayable.insert(InstructionName(k));
  }
  auto policy = SketchRegistry::BuiltIn().Make(Target::Host(), "", &replayable);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EvolutionarySearch search(LowerWithOverrides(kDenseLayer, {{"N", 17}}), policy->get(), SearchOptions{}, 5);
  for (int i = 0; i < 16; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->trace.ToText().find("pad_axis("), std::string::npos) << c->trace.ToText();
  }
}

}  // namespace
}  // namespace tunefarm::tuner::testing
