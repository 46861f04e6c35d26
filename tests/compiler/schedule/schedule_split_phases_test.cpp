// split_phases: a copy split into its stride phases computes what the
// default program does (interpreter and JIT, odd sizes), a stride-2 read of
// it becomes unit-stride along the output axis, and each request the
// primitive cannot honour is an error naming why.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::testing {
namespace {

using ir::MemoryScope;

// MobileNet-V2's stride-2 depthwise 3x3, small.
constexpr std::string_view kDepthwiseStride2 = R"(
workload dws2(N = 1, C = 3, H = 9, W = 9, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[c, r, s]
  output out
}
)";

// The padded input split into phases along its rows (dim 3), the output
// row vectorized: every tap reads a contiguous run of one phase.
Status PhasedDepthwise(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
  TF_ASSIGN_OR_RETURN(BlockRV x_pad, sch.PadInput(b, 0));
  TF_RETURN_IF_ERROR(sch.SplitPhases(x_pad, 3, 2));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(b));
  // n c h w r s -> n c h r s w
  TF_RETURN_IF_ERROR(sch.Reorder({loops[0], loops[1], loops[2], loops[4], loops[5], loops[3]}));
  return sch.Vectorize(loops[3]);
}

TEST(SplitPhasesTest, StrideTwoDepthwiseReadsOnePhaseContiguously) {
  for (int64_t w : {1, 7, 17, 101}) {
    SCOPED_TRACE("W = " + std::to_string(w));
    ScheduleOutcome out;
    EXPECT_TRUE(ScheduleIsCorrect(kDepthwiseStride2, {{"W", w}}, PhasedDepthwise, &out));
    // X_pad is w + 2 wide: two phases of ceil((w + 2) / 2).
    std::string text = ir::ToString(out.scheduled);
    EXPECT_NE(text.find("X_pad: f32[1, 3, 11, 2, " + std::to_string((w + 3) / 2) + "]"), std::string::npos) << text;
    // The kernel reads X_pad[.., s % 2, w + s / 2]: no stride-2 index left.
    EXPECT_NE(text.find("(vs % 2), (vw + (vs / 2))]"), std::string::npos) << text;
    EXPECT_NE(out.trace_text.find("split_phases(b1, 3, 2)"), std::string::npos) << out.trace_text;
  }
}

TEST(SplitPhasesTest, PhasesOfACacheReadCopyAtStrideThree) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 5}, {"N", 7}, {"K", 11}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, MemoryScope::kGlobal));
    return sch.SplitPhases(a_copy, 1, 3);
  }));
}

TEST(SplitPhasesTest, RequestsItCannotHonourAreErrors) {
  auto base = LowerText(kDepthwiseStride2, {});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base);
  BlockRV b = *sch.GetBlock("out");
  EXPECT_TRUE(IsInvalid(sch.SplitPhases(b, 3, 2), {"split_phases(out)", "function parameter", "cache_read"}));
  BlockRV x_pad = *sch.PadInput(b, 0);
  EXPECT_TRUE(IsInvalid(sch.SplitPhases(x_pad, 4, 2), {"dimension 4", "out of range"}));
  EXPECT_TRUE(IsInvalid(sch.SplitPhases(x_pad, 3, 1), {"stride 1", "at least 2"}));
  EXPECT_EQ(sch.trace().ToText().find("split_phases"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm::testing
