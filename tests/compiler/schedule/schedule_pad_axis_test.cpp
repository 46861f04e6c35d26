// pad_axis: a block padded along one spatial axis computes what it did
// (interpreter and JIT against the default program on random inputs, at
// extents 1, 7, 17 and 101), through grown copies of its inputs or under the
// guards it already had, and each request the primitive cannot honour is an
// error naming why.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::testing {
namespace {

using ir::MemoryScope;

const std::vector<int64_t> kOddExtents = {1, 7, 17, 101};

// The sketch's matmul kernel on a padded j: B copied into 16-wide panels
// with zeros past N, a local accumulator of whole vectors, the valid part
// written back under a guard.
Status PaddedMatmul(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, MemoryScope::kGlobal));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, MemoryScope::kLocal));
  TF_RETURN_IF_ERROR(sch.PadAxis(c, 1, 16));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, 16}));
  TF_RETURN_IF_ERROR(sch.Reorder({loops[0], j[0], loops[2], j[1]}));
  TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, j[0]));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> wb, sch.GetLoops(write_back));
  TF_RETURN_IF_ERROR(sch.Vectorize(wb.back()));
  return sch.PackLayout(b_copy, 1, 16, 0);
}

TEST(PadAxisTest, MatmulComputesWholeVectorsAtOddWidths) {
  for (int64_t n : kOddExtents) {
    SCOPED_TRACE("N = " + std::to_string(n));
    ScheduleOutcome out;
    EXPECT_TRUE(ScheduleIsCorrect(kConstMatmul, {{"N", n}, {"M", 7}, {"K", 13}}, PaddedMatmul, &out));
    const int64_t padded = (n + 15) / 16 * 16;
    std::string text = ir::ToString(out.scheduled);
    // The panels hold the padded width; only the write-back keeps a guard.
    EXPECT_NE(text.find("B_global: f32[" + std::to_string(padded / 16) + ", 13, 16]"), std::string::npos) << text;
    EXPECT_NE(out.trace_text.find("pad_axis(b0, 1, 16)"), std::string::npos) << out.trace_text;
  }
}

TEST(PadAxisTest, FusedEpilogueStoresOnlyTheValidPart) {
  for (int64_t n : kOddExtents) {
    SCOPED_TRACE("N = " + std::to_string(n));
    EXPECT_TRUE(ScheduleIsCorrect(kDenseBiasRelu, {{"N", n}, {"M", 5}}, [](Schedule& sch) -> Status {
      TF_ASSIGN_OR_RETURN(BlockRV acc, sch.GetBlock("acc"));
      TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
      TF_ASSIGN_OR_RETURN(BlockRV w_copy, sch.CacheRead(acc, 1, MemoryScope::kGlobal));
      TF_RETURN_IF_ERROR(sch.PadAxis(acc, 1, 8));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(acc));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, 8}));
      TF_RETURN_IF_ERROR(sch.Reorder({loops[0], j[0], loops[2], j[1]}));
      TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
      TF_RETURN_IF_ERROR(sch.ReverseComputeAt(out, j[0]));
      // W[N, K] in panels [N/8, K, 8]: the padded rows are zeros.
      return sch.PackLayout(w_copy, 0, 8, 0);
    }));
  }
}

TEST(PadAxisTest, GuardedConvolutionReadsStayUnderTheirGuards) {
  // X is read under its padding select: the guard bounds the wider w, so X
  // itself needs no copy; the weights are not indexed by w.
  for (int64_t w : kOddExtents) {
    SCOPED_TRACE("W = " + std::to_string(w));
    EXPECT_TRUE(ScheduleIsCorrect(kGuardedConv, {{"W", w}}, [](Schedule& sch) -> Status {
      TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
      TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(b, MemoryScope::kLocal));
      TF_RETURN_IF_ERROR(sch.PadAxis(b, 3, 8));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(b));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> ws, sch.Split(loops[3], {-1, 8}));
      TF_RETURN_IF_ERROR(sch.Reorder({loops[0], loops[1], loops[2], ws[0], loops[4], loops[5], loops[6], ws[1]}));
      TF_RETURN_IF_ERROR(sch.Vectorize(ws[1]));
      return sch.ReverseComputeAt(write_back, ws[0]);
    }));
  }
}

TEST(PadAxisTest, PaddedInputCopyGrowsWithZeros) {
  // After pad_input the convolution reads X_pad unguarded: X_pad grows to
  // the columns the padded w reads (P = 1 and 3 taps: w + 2 of them).
  for (int64_t w : kOddExtents) {
    SCOPED_TRACE("W = " + std::to_string(w));
    ScheduleOutcome out;
    EXPECT_TRUE(ScheduleIsCorrect(kGuardedConv, {{"W", w}}, [](Schedule& sch) -> Status {
      TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
      TF_RETURN_IF_ERROR(sch.PadInput(b, 0).status());
      TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(b, MemoryScope::kLocal));
      TF_RETURN_IF_ERROR(sch.PadAxis(b, 3, 16));
      TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(b));
      return sch.ReverseComputeAt(write_back, loops[2]);
    }, &out));
    const int64_t padded = (w + 15) / 16 * 16;
    std::string text = ir::ToString(out.scheduled);
    EXPECT_NE(text.find("X_pad: f32[1, 3, 9, " + std::to_string(padded + 2) + "]"), std::string::npos) << text;
  }
}

TEST(PadAxisTest, RequestsItCannotHonourAreErrors) {
  auto base = LowerText(kConstMatmul, {{"N", 17}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  {
    Schedule sch(*base);
    BlockRV c = *sch.GetBlock("C");
    // C is the function's output: no room to grow.
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 1, 16), {"pad_axis(C)", "output of the function", "cache_write"}));
    ASSERT_TRUE(sch.CacheWrite(c, MemoryScope::kLocal).ok());
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 2, 16), {"reduction axis"}));
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 5, 16), {"out of range"}));
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 1, 1), {"at least 2"}));
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 0, 8), {"already a multiple"}));
    // B is read past its end and is a parameter: copy it first.
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 1, 16), {"B", "function parameter", "cache_read"}));
    // Nothing was recorded by the failures.
    EXPECT_EQ(sch.trace().ToText().find("pad_axis"), std::string::npos);
  }
  {
    Schedule sch(*base);
    BlockRV c = *sch.GetBlock("C");
    ASSERT_TRUE(sch.CacheRead(c, 1, MemoryScope::kGlobal).ok());
    ASSERT_TRUE(sch.CacheWrite(c, MemoryScope::kLocal).ok());
    std::vector<LoopRV> loops = *sch.GetLoops(c);
    ASSERT_TRUE(sch.Split(loops[1], {-1, 16}).ok());
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 1, 16), {"before split"}));
  }
  {
    // A copy already placed inside the kernel's loops cannot grow.
    Schedule sch(*base);
    BlockRV c = *sch.GetBlock("C");
    BlockRV b_copy = *sch.CacheRead(c, 1, MemoryScope::kGlobal);
    ASSERT_TRUE(sch.CacheWrite(c, MemoryScope::kLocal).ok());
    std::vector<LoopRV> loops = *sch.GetLoops(c);
    ASSERT_TRUE(sch.ComputeAt(b_copy, loops[0]).ok());
    EXPECT_TRUE(IsInvalid(sch.PadAxis(c, 1, 16), {"B_global", "not a plain copy at the root"}));
  }
}

}  // namespace
}  // namespace tunefarm::testing
