// pad_input: the padded copy computes what the guarded reads did (interpreter
// and JIT against the default program on random inputs), the guards leave
// the block, the copy can be computed per loop iteration and packed, and
// each request the primitive cannot honour is an error naming why.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::testing {
namespace {

// Depthwise, as the suite's DEP, with the checks written the other way round.
constexpr std::string_view kGuardedDepthwise = R"(
workload gdep(C = 8, H = 6, W = 5, R = 3, S = 3) {
  X  = input f32[C, H, W]
  Wt = input f32[C, R, S]
  out[c, h: H, w: W] = sum(r: R, s: S)
      select(0 <= h + r - 1 && H > h + r - 1 && 0 <= w + s - 1 && w + s - 1 <= W - 1,
             X[c, h + r - 1, w + s - 1], 0.0) * Wt[c, r, s]
  output out
}
)";

// A transposed convolution (the suite's T2D, small): lowering keeps one tap
// in two per axis, and the guards left are bounds checks on (h + 1 - r') / 2.
constexpr std::string_view kTransposed = R"(
workload tconv(N = 1, C = 3, H = 3, W = 4, K = 2, R = 4, S = 4, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input f32[C, K, R, S]
  out[n, k, h: (H - 1) * 2 - 2 * P + R, w: (W - 1) * 2 - 2 * P + S] = sum(c: C, r: R, s: S)
      select((h + P - r) % 2 == 0 && (h + P - r) / 2 >= 0 && (h + P - r) / 2 < H &&
             (w + P - s) % 2 == 0 && (w + P - s) / 2 >= 0 && (w + P - s) / 2 < W,
             X[n, c, (h + P - r) / 2, (w + P - s) / 2], 0.0) * Wt[c, k, r, s]
  output out
}
)";

// Reads past the end only: padded after, not before.
constexpr std::string_view kTail = R"(
workload tail(N = 10, R = 4) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i + r < N, X[i + r], 0.0)
  output out
}
)";

// A guard that tests more than the bounds (it skips tap 1).
constexpr std::string_view kSkipsATap = R"(
workload skips(N = 8, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(r != 1 && i + r < N, X[i + r], 0.0)
  output out
}
)";

// A check that keeps a read inside X but is not its bounds (skips element 0).
constexpr std::string_view kOffByOne = R"(
workload offby(N = 8, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i + r - 1 >= 1 && i + r - 1 < N, X[i + r - 1], 0.0)
  output out
}
)";

// The lower check written strictly (> -1): still exactly "inside X".
constexpr std::string_view kStrictLower = R"(
workload strict(N = 9, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i + r - 1 > -1 && N > i + r - 1, X[i + r - 1], 0.0)
  output out
}
)";

// An upper check one short of the bound: it zeroes X's last element too.
constexpr std::string_view kShortUpper = R"(
workload short(N = 8, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i + r < N - 1, X[i + r], 0.0)
  output out
}
)";

// The selected value is not the read itself.
constexpr std::string_view kScaled = R"(
workload scaled(N = 8, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i + r < N, X[i + r] * 2.0, 0.0)
  output out
}
)";

// An index divided by a loop variable: no bounds the schedule can derive.
constexpr std::string_view kDivided = R"(
workload divided(N = 8, R = 3) {
  X = input f32[N]
  out[i: N] = sum(r: R) select(i / (r + 1) - 1 >= 0, X[i / (r + 1) - 1], 0.0)
  output out
}
)";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PadInputTest, ConvolutionReadsAPaddedCopyWithoutGuards) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kGuardedConv, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    EXPECT_TRUE(sch.CanPadInput(b, 0));
    EXPECT_FALSE(sch.CanPadInput(b, 1));  // the weights are read unguarded
    TF_ASSIGN_OR_RETURN(BlockRV copy, sch.PadInput(b, 0));
    EXPECT_EQ(*sch.BlockName(copy), "X_pad");
    return Status::OK();
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(text.find("X_pad: f32[1, 3, 9, 8]"), std::string::npos) << text;
  // The one select left is the copy's: the convolution reads X_pad directly.
  EXPECT_EQ(Count(text, "select("), 1u) << text;
  EXPECT_NE(out.trace_text.find("pad_input(b0, 0)"), std::string::npos) << out.trace_text;
}

TEST(PadInputTest, CopyComputedPerTaskAndVectorized) {
  EXPECT_TRUE(ScheduleIsCorrect(kGuardedDepthwise, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    TF_ASSIGN_OR_RETURN(BlockRV copy, sch.PadInput(b, 0));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(b));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> h, sch.Split(loops[1], {2, 3}));
    TF_RETURN_IF_ERROR(sch.Parallel(loops[0]));
    TF_RETURN_IF_ERROR(sch.Vectorize(loops[2]));
    // Per channel and row block: only the rows (with their halo) that block reads.
    TF_RETURN_IF_ERROR(sch.ComputeAt(copy, h[0]));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch.GetLoops(copy));
    return sch.Vectorize(copy_loops.back());
  }));
}

TEST(PadInputTest, PaddedCopyCanBePacked) {
  EXPECT_TRUE(ScheduleIsCorrect(kGuardedDepthwise, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    TF_ASSIGN_OR_RETURN(BlockRV copy, sch.PadInput(b, 0));
    // Channels innermost in panels of 4, as the sketch packs DEP's input.
    return sch.PackLayout(copy, 0, 4, 0);
  }));
}

TEST(PadInputTest, OneSidedGuardPadsOneSide) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kTail, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    return sch.PadInput(b, 0).status();
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(text.find("X_pad: f32[13]"), std::string::npos) << text;
}

TEST(PadInputTest, TransposedConvolutionsGuardsLeaveToo) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kTransposed, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    return sch.PadInput(b, 0).status();
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(text.find("X_pad: f32[1, 3, 5, 6]"), std::string::npos) << text;
  EXPECT_EQ(Count(text, "select("), 1u) << text;
}

TEST(PadInputTest, StrictLowerCheckIsABoundsCheck) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kStrictLower, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
    return sch.PadInput(b, 0).status();
  }, &out));
  EXPECT_EQ(Count(ir::ToString(out.scheduled), "select("), 1u) << ir::ToString(out.scheduled);
}

TEST(PadInputTest, RequestsItCannotHonourAreErrors) {
  struct Case {
    std::string_view text;
    int read_index;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {kGuardedConv, 2, {"pad_input(out)", "read index 2", "reads 2 buffers"}},
      {kGuardedConv, -1, {"pad_input(out)", "read index -1"}},
      {kShortUpper, 0, {"pad_input(out)", "bounds checks alone", "the read itself as the selected value"}},
      {kScaled, 0, {"pad_input(out)", "bounds checks alone"}},
      {kDivided, 0, {"pad_input(out)", "index 0 of X", "has no bounds"}},
      {kMatmul, 0, {"pad_input(C)", "every read of A is inside its bounds"}},
      {kSkipsATap, 0, {"pad_input(out)", "bounds checks alone"}},
      {kOffByOne, 0, {"pad_input(out)", "bounds checks alone"}},
  };
  for (const Case& c : cases) {
    auto base = LowerText(c.text);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    Schedule sch(*base);
    std::string block = sch.BlockNames().back();
    auto b = sch.GetBlock(block);
    ASSERT_TRUE(b.ok());
    std::string before = ir::ToString(sch.func());
    EXPECT_FALSE(sch.CanPadInput(*b, c.read_index));
    EXPECT_TRUE(IsInvalid(sch.PadInput(*b, c.read_index).status(), c.words));
    // A refused request changes nothing and records nothing.
    EXPECT_EQ(ir::ToString(sch.func()), before);
    EXPECT_TRUE(sch.trace().ToText().find("pad_input") == std::string::npos);
  }
}

}  // namespace
}  // namespace tunefarm::testing
