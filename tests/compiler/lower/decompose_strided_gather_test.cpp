// Sub-pixel decomposition of strided gathers: a transposed convolution written
// as a gather lowers to a nest over its contributing taps only, and computes
// what a scatter-form transposed convolution (written here in plain C++,
// independent of the workload text and the lowering) computes -- through the
// interpreter, the JIT, and a scheduled (tiled, packed, vectorized) variant.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/lower/decompose_strided_gather.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::testing {
namespace {

// Gather form, the test written as the framework docs write it.
constexpr std::string_view kT2dGather = R"(
workload t2d(C = 8, H = 4, W = 4, K = 32, R = 4, S = 4, P = 1) {
  X  = input f32[C, H, W]
  Wt = input f32[C, K, R, S]
  out[k, h: (H - 1) * 2 - 2 * P + R, w: (W - 1) * 2 - 2 * P + S] = sum(c: C, r: R, s: S)
      select((h + P - r) % 2 == 0 && (h + P - r) / 2 >= 0 && (h + P - r) / 2 < H &&
             (w + P - s) % 2 == 0 && (w + P - s) / 2 >= 0 && (w + P - s) / 2 < W,
             X[c, (h + P - r) / 2, (w + P - s) / 2], 0.0) * Wt[c, k, r, s]
  output out
}
)";

// Stride 3, an odd kernel (3 does not divide 5: the term gets a bound guard),
// the test written with the tap first (coefficient +1), the weight factor first.
constexpr std::string_view kT2dStride3 = R"(
workload t2d3(C = 4, H = 3, W = 4, K = 16, R = 5, S = 5, P = 2) {
  X  = input f32[C, H, W]
  Wt = input f32[C, K, R, S]
  out[k, h: (H - 1) * 3 - 2 * P + R, w: (W - 1) * 3 - 2 * P + S] = sum(c: C, r: R, s: S)
      Wt[c, k, r, s] * select((r - h - P) % 3 == 0 && (h + P - r) / 3 >= 0 && (h + P - r) / 3 < H &&
                              (s - w - P) % 3 == 0 && (w + P - s) / 3 >= 0 && (w + P - s) / 3 < W,
                              X[c, (h + P - r) / 3, (w + P - s) / 3], 0.0)
  output out
}
)";

struct T2dShape {
  int64_t c, h, w, k, r, s, p, stride;
  int64_t OutH() const { return (h - 1) * stride - 2 * p + r; }
  int64_t OutW() const { return (w - 1) * stride - 2 * p + s; }
};

// Scatter form: every input pixel adds its kernel-sized patch to the output.
std::vector<double> ScatterReference(const T2dShape& t, const HostBuffer& x, const HostBuffer& wt) {
  std::vector<double> out(size_t(t.k * t.OutH() * t.OutW()), 0.0);
  for (int64_t c = 0; c < t.c; ++c)
    for (int64_t ih = 0; ih < t.h; ++ih)
      for (int64_t iw = 0; iw < t.w; ++iw)
        for (int64_t k = 0; k < t.k; ++k)
          for (int64_t r = 0; r < t.r; ++r)
            for (int64_t s = 0; s < t.s; ++s) {
              int64_t oh = ih * t.stride - t.p + r, ow = iw * t.stride - t.p + s;
              if (oh < 0 || oh >= t.OutH() || ow < 0 || ow >= t.OutW()) continue;
              out[size_t((k * t.OutH() + oh) * t.OutW() + ow)] +=
                  x.GetAsDouble((c * t.h + ih) * t.w + iw) * wt.GetAsDouble(((c * t.k + k) * t.r + r) * t.s + s);
            }
  return out;
}

// Extents of the reduction iter vars of the block named `name`.
std::map<std::string, int64_t> ReduceExtents(const ir::PrimFunc& f, const std::string& name) {
  std::map<std::string, int64_t> extents;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kBlock) return;
    const auto* b = static_cast<const ir::Block*>(n);
    if (b->name != name) return;
    for (const ir::IterVar& iv : b->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) extents[iv.var.name()] = iv.extent;
    }
  });
  return extents;
}

::testing::AssertionResult MatchesScatter(const T2dShape& t, const ir::PrimFunc& f, bool jit) {
  std::vector<HostBuffer> args = RandomArgs(f, 5);
  std::vector<double> want = ScatterReference(t, args[0], args[1]);
  Status s;
  if (jit) {
    auto kernel = JitCompile(f, Target::Host());
    if (!kernel.ok()) return ::testing::AssertionFailure() << kernel.status().ToString();
    s = (*kernel)->Run(Pointers(args));
  } else {
    s = Interpret(f, HostPointers(args));
  }
  if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
  for (size_t i = 0; i < want.size(); ++i) {
    double got = args[2].GetAsDouble(int64_t(i));
    if (std::abs(got - want[i]) > 1e-4 * (1 + std::abs(want[i]))) {
      return ::testing::AssertionFailure() << "out[" << i << "] = " << got << ", scatter form gives " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(DecomposeStridedGatherTest, TransposedConvVisitsOneTapInFour) {
  auto f = LowerText(kT2dGather);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::map<std::string, int64_t> extents = ReduceExtents(*f, "out");
  EXPECT_EQ(extents, (std::map<std::string, int64_t>{{"vc", 8}, {"vr", 2}, {"vs", 2}}));
  // The modular tests are gone from the lowered program.
  std::string text = ir::ToString(*f);
  EXPECT_EQ(text.find("% 2) == 0"), std::string::npos) << text;
  const T2dShape t{8, 4, 4, 32, 4, 4, 1, 2};
  // Flops count the work done: a multiply-add per contributing tap.
  auto w = ParseWorkload(kT2dGather);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->Flops(), 2.0 * t.k * t.OutH() * t.OutW() * t.c * (t.r / 2) * (t.s / 2));
  EXPECT_TRUE(MatchesScatter(t, *f, /*jit=*/false));
  EXPECT_TRUE(MatchesScatter(t, *f, /*jit=*/true));
}

// With the decomposition off, the nest follows the text (every tap): the
// reference tuned kernels are checked against, computing the same sums.
TEST(DecomposeStridedGatherTest, AsWrittenLoweringIsTheIndependentReference) {
  auto w = ParseWorkload(kT2dGather);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  LowerOptions as_written;
  as_written.decompose_strided_gathers = false;
  auto f = LowerToPrimFunc(*w, as_written);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(ReduceExtents(*f, "out"), (std::map<std::string, int64_t>{{"vc", 8}, {"vr", 4}, {"vs", 4}}));
  EXPECT_TRUE(MatchesScatter({8, 4, 4, 32, 4, 4, 1, 2}, *f, /*jit=*/false));
}

TEST(DecomposeStridedGatherTest, StrideThreeOddKernelKeepsTheBound) {
  auto f = LowerText(kT2dStride3);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(ReduceExtents(*f, "out"), (std::map<std::string, int64_t>{{"vc", 4}, {"vr", 2}, {"vs", 2}}));
  const T2dShape t{4, 3, 4, 16, 5, 5, 2, 3};
  EXPECT_TRUE(MatchesScatter(t, *f, /*jit=*/false));
  EXPECT_TRUE(MatchesScatter(t, *f, /*jit=*/true));
}

// The tuner's shape of schedule: output channels split and vectorized, the
// weights packed into 16-wide panels of k, tiles in parallel.
TEST(DecomposeStridedGatherTest, ScheduledDecompositionMatchesDefault) {
  ScheduleOutcome outcome;
  EXPECT_TRUE(ScheduleIsCorrect(kT2dGather, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock("out"));
    TF_ASSIGN_OR_RETURN(BlockRV packed, sch.CacheRead(block, 1, ir::MemoryScope::kGlobal));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));  // k h w c r s
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> k, sch.Split(loops[0], {-1, 16}));
    TF_RETURN_IF_ERROR(sch.Reorder({k[0], loops[1], loops[2], loops[3], loops[4], loops[5], k[1]}));
    TF_RETURN_IF_ERROR(sch.Parallel(k[0]));
    TF_RETURN_IF_ERROR(sch.Vectorize(k[1]));
    return sch.PackLayout(packed, 1, 16, 1);
  }, &outcome));
  EXPECT_TRUE(MatchesScatter({8, 4, 4, 32, 4, 4, 1, 2}, outcome.scheduled, /*jit=*/true));
}

// A max reduction counts the select's zero as a candidate, a select with a
// non-zero else value contributes at every tap, a test on spatial axes only
// prunes no tap: none is decomposed.
TEST(DecomposeStridedGatherTest, LeavesOtherReductionsAlone) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"max", "select((h + 1 - r) % 2 == 0, X[c, (h + 1 - r) / 2], 0.0)"},
      {"sum", "select((h + 1 - r) % 2 == 0, X[c, (h + 1 - r) / 2], 1.0)"},
      {"sum", "select(h % 2 == 0, X[c, (h + 1 - r) / 2], 0.0)"},
      {"sum", "select((h + 1 - 2 * r) % 2 == 0, X[c, (h + 1 - r) / 2], 0.0)"},
  };
  for (const auto& [reduce, term] : cases) {
    std::string text = "workload g(C = 2, H = 6, R = 4) {\n  X = input f32[C, H]\n  out[h: H] = " + reduce +
                       "(c: C, r: R)\n    select((h + 1 - r) / 2 >= 0 && (h + 1 - r) / 2 < H, " + term +
                       ", 0.0)\n  output out\n}\n";
    auto f = LowerText(text);
    ASSERT_TRUE(f.ok()) << text << f.status().ToString();
    EXPECT_EQ(ReduceExtents(*f, "out"), (std::map<std::string, int64_t>{{"vc", 2}, {"vr", 4}})) << text;
  }
}

}  // namespace
}  // namespace tunefarm::testing
