// compute_at, reverse_compute_at, cache_read, cache_write, pack_layout and a
// combined expert matmul schedule: results match the default schedule through
// the interpreter and the JIT, intermediates get compacted, traces replay.
#include "../schedule_test_util.h"

namespace tunefarm::testing {
namespace {

Result<std::vector<LoopRV>> Loops(Schedule& sch, const std::string& block) {
  TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(block));
  return sch.GetLoops(b);
}

// The text after the first line containing `loop_header` (e.g. "for h in").
std::string After(const std::string& text, const std::string& loop_header) {
  size_t at = text.find(loop_header);
  return at == std::string::npos ? std::string() : text.substr(at);
}

TEST(ScheduleComputeAtTest, PaddedInputAtConvOutputRow) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kPaddedConv, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "out"));  // k h w c r s
    TF_ASSIGN_OR_RETURN(BlockRV pad, sch.GetBlock("pad"));
    return sch.ComputeAt(pad, l[1]);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  // pad[c, h .. h+2, 0 .. 9] per output row: 3 x 3 x 10, allocated inside the h loop.
  EXPECT_NE(After(text, "for h in").find("allocate pad: f32[3, 3, 10]"), std::string::npos) << text;
  EXPECT_EQ(text.find("f32[3, 10, 10]"), std::string::npos) << text;
}

TEST(ScheduleComputeAtTest, PaddedInputAtConvOutputPixelAfterSplit) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kPaddedConv, {{"W", 7}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "out"));
    TF_ASSIGN_OR_RETURN(auto w, sch.Split(l[2], {-1, 4}));  // 7 -> 2 x 4, guarded
    TF_ASSIGN_OR_RETURN(BlockRV pad, sch.GetBlock("pad"));
    return sch.ComputeAt(pad, w[0]);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(After(text, "for w_0 in").find("allocate pad: f32[3, 3, 6]"), std::string::npos) << text;
}

TEST(ScheduleComputeAtTest, RowMaximumAtSoftmaxRow) {
  EXPECT_TRUE(ScheduleIsCorrect(kSoftmax, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "e"));
    TF_ASSIGN_OR_RETURN(BlockRV mx, sch.GetBlock("mx"));
    TF_RETURN_IF_ERROR(sch.ComputeAt(mx, l[0]));
    TF_ASSIGN_OR_RETURN(auto o, Loops(sch, "out"));
    TF_ASSIGN_OR_RETURN(BlockRV s, sch.GetBlock("s"));
    return sch.ComputeAt(s, o[0]);
  }));
}

TEST(ScheduleReverseComputeAtTest, BiasReluEpilogueIntoMatmulTile) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kDenseBiasRelu, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "acc"));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 4}));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 8}));
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
    TF_ASSIGN_OR_RETURN(BlockRV epilogue, sch.GetBlock("out"));
    return sch.ReverseComputeAt(epilogue, j[0]);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(After(text, "for j_0 in").find("allocate acc: f32[4, 8]"), std::string::npos) << text;
}

TEST(ScheduleReverseComputeAtTest, NonDivisibleTileGuardsTheEpilogue) {
  EXPECT_TRUE(ScheduleIsCorrect(kDenseBiasRelu, {{"M", 7}, {"N", 13}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "acc"));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 4}));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 8}));
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
    TF_ASSIGN_OR_RETURN(BlockRV epilogue, sch.GetBlock("out"));
    return sch.ReverseComputeAt(epilogue, j[0]);
  }));
}

TEST(ScheduleCacheTest, CacheReadWithoutAndWithComputeAt) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 12}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
    EXPECT_EQ(*sch.BlockName(b_copy), "B_global");
    return Status::OK();
  }));
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 12}, {"K", 10}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kLocal));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 4}));
    return sch.ComputeAt(a_copy, i[0]);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(After(text, "for i_0 in").find("allocate A_local: f32[4, 10] local"), std::string::npos) << text;
}

TEST(ScheduleCacheTest, CacheWriteRegisterTile) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 12}, {"N", 20}, {"K", 9}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 3}));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, j[0]));
    TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
    return sch.Unroll(i[1]);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(After(text, "for j_0 in").find("allocate C_local: f32[3, 4] local"), std::string::npos) << text;
}

TEST(SchedulePackLayoutTest, WeightPanels) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"N", 32}, {"K", 6}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
    return sch.PackLayout(b_copy, 1, 16, 0);
  }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(text.find("allocate B_global: f32[2, 6, 16]"), std::string::npos) << text;
}

TEST(SchedulePackLayoutTest, NchwToNchwc) {
  std::string text = ReadTextFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/c2d_resnet_3x3.tf");
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(text, {{"C", 8}, {"H", 5}, {"W", 6}, {"K", 4}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV conv, sch.GetBlock("out"));
    TF_ASSIGN_OR_RETURN(BlockRV x_copy, sch.CacheRead(conv, 0, ir::MemoryScope::kGlobal));
    return sch.PackLayout(x_copy, 1, 4, 1);
  }, &out));
  EXPECT_NE(ir::ToString(out.scheduled).find("f32[1, 2, 5, 6, 4]"), std::string::npos) << ir::ToString(out.scheduled);
}

TEST(ScheduleDepthwiseTest, TiledVectorizedDepthwiseConv) {
  std::string text = ReadTextFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/dep_3x3_c256_28.tf");
  EXPECT_TRUE(ScheduleIsCorrect(text, {{"C", 6}, {"H", 7}, {"W", 9}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "out"));  // n c h w r s
    TF_ASSIGN_OR_RETURN(auto w, sch.Split(l[3], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Reorder({l[1], l[2], l[4], l[5], w[0], w[1]}));
    TF_RETURN_IF_ERROR(sch.Vectorize(w[1]));
    TF_ASSIGN_OR_RETURN(LoopRV nc, sch.Fuse({l[0], l[1]}));
    return sch.Parallel(nc);
  }));
}

// cache_write local; SSRSRS tiling; fused parallel outer loop; vectorized
// inner j; unrolled inner i; write-back at the tile; B packed into panels.
Status ExpertMatmul(Schedule& sch, int64_t panel) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(b_copy, 1, panel, 0));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 2, 1, 4}));
  TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 1, 1, 16}));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, 4}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], i[2], j[2], k[1], i[3], j[3]}));
  TF_ASSIGN_OR_RETURN(LoopRV outer, sch.Fuse({i[0], j[0]}));
  TF_RETURN_IF_ERROR(sch.Parallel(outer));
  TF_RETURN_IF_ERROR(sch.Vectorize(j[3]));
  TF_RETURN_IF_ERROR(sch.Unroll(i[3]));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, j[1]));
  TF_ASSIGN_OR_RETURN(auto wb, sch.GetLoops(write_back));
  TF_RETURN_IF_ERROR(sch.Vectorize(wb.back()));
  return sch.Annotate(outer, "pragma_auto_unroll_max_step", 16);
}

TEST(ScheduleExpertTest, MatmulDivisible) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 64}, {"N", 64}, {"K", 64}},
                                [](Schedule& sch) { return ExpertMatmul(sch, 16); }, &out));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_NE(text.find("allocate B_global: f32[4, 64, 16]"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate C_local: f32[4, 16] local"), std::string::npos) << text;
}

TEST(ScheduleExpertTest, MatmulNonDivisible) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 50}, {"N", 70}, {"K", 30}},
                                [](Schedule& sch) { return ExpertMatmul(sch, 10); }));
}

}  // namespace
}  // namespace tunefarm::testing
