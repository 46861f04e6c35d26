// Every schedule primitive, applied to small workloads, gives the same results
// as the default schedule through the interpreter and the LLVM JIT, and its
// trace replays to the same program.
#include "../schedule_test_util.h"

namespace tunefarm::testing {
namespace {

// Loops of the named block.
Result<std::vector<LoopRV>> Loops(Schedule& sch, const std::string& block) {
  TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(block));
  return sch.GetLoops(b);
}

TEST(SchedulePrimitivesTest, SplitDivisible) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_ASSIGN_OR_RETURN(auto parts, sch.Split(l[0], {4, 4}));
    EXPECT_EQ(*sch.LoopExtent(parts[0]), 4);
    EXPECT_EQ(*sch.LoopExtent(parts[1]), 4);
    return Status::OK();
  }));
}

TEST(SchedulePrimitivesTest, SplitNonDivisibleAddsGuard) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 13}, {"N", 10}, {"K", 7}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_RETURN_IF_ERROR(sch.Split(l[0], {4, 4}).status());
    return sch.Split(l[2], {3, 3}).status();
  }, &out));
  EXPECT_NE(ir::ToString(out.scheduled).find("< 13"), std::string::npos) << ir::ToString(out.scheduled);
}

TEST(SchedulePrimitivesTest, SplitInfersMinusOneFactor) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"N", 10}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_ASSIGN_OR_RETURN(auto parts, sch.Split(l[1], {-1, 4}));
    EXPECT_EQ(*sch.LoopExtent(parts[0]), 3);
    EXPECT_EQ(*sch.LoopExtent(parts[1]), 4);
    TF_ASSIGN_OR_RETURN(auto inner, sch.Split(l[0], {2, -1}));
    EXPECT_EQ(*sch.LoopExtent(inner[1]), 8);
    return Status::OK();
  }));
}

TEST(SchedulePrimitivesTest, SplitIntoThreeAndFourParts) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 24}, {"K", 11}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {2, -1, 3}));
    EXPECT_EQ(*sch.LoopExtent(i[1]), 4);
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {2, 2, 2, 2}));
    EXPECT_EQ(j.size(), 4u);
    return sch.Split(l[2], {2, 3, -1}).status();  // 11 -> 2 x 3 x 2 with a guard
  }));
}

TEST(SchedulePrimitivesTest, ReorderMovesReductionOutward) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 12}, {"N", 8}, {"K", 6}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Reorder({l[2], i[0], l[1], i[1]}));
    TF_ASSIGN_OR_RETURN(auto now, Loops(sch, "C"));
    EXPECT_EQ(sch.LoopVar(now[0])->get(), sch.LoopVar(l[2])->get());
    return Status::OK();
  }));
}

TEST(SchedulePrimitivesTest, ReorderPartialListKeepsOthers) {
  EXPECT_TRUE(ScheduleIsCorrect(kPaddedConv, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "out"));  // k h w c r s
    return sch.Reorder({l[3], l[1], l[5]});           // c, h, s in the slots of h, c, s
  }));
}

TEST(SchedulePrimitivesTest, FuseThenSplitFusedLoop) {
  for (auto [m, n] : {std::pair{8, 8}, std::pair{13, 10}}) {
    EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", m}, {"N", n}, {"K", 5}}, [](Schedule& sch) -> Status {
      TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
      TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({l[0], l[1]}));
      TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fused, {-1, 16}));
      return sch.Parallel(parts[0]);
    })) << m << "x" << n;
  }
}

TEST(SchedulePrimitivesTest, FuseThreeSpatialLoops) {
  EXPECT_TRUE(ScheduleIsCorrect(kPaddedConv, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "out"));
    TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({l[0], l[1], l[2]}));
    EXPECT_EQ(*sch.LoopExtent(fused), 4 * 8 * 8);
    TF_ASSIGN_OR_RETURN(auto p, Loops(sch, "pad"));
    TF_ASSIGN_OR_RETURN(LoopRV pf, sch.Fuse({p[1], p[2]}));
    return sch.Parallel(pf);
  }));
}

TEST(SchedulePrimitivesTest, ParallelOuterLoops) {
  EXPECT_TRUE(ScheduleIsCorrect(kSoftmax, {}, [](Schedule& sch) -> Status {
    for (const char* name : {"mx", "e", "s", "out"}) {
      TF_ASSIGN_OR_RETURN(auto l, Loops(sch, name));
      TF_RETURN_IF_ERROR(sch.Parallel(l[0]));
    }
    return Status::OK();
  }));
}

TEST(SchedulePrimitivesTest, VectorizeInnermostSpatialLoop) {
  for (int lanes : {4, 8, 16}) {
    EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 4}, {"N", 32}, {"K", 6}}, [lanes](Schedule& sch) -> Status {
      TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
      TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, lanes}));
      TF_RETURN_IF_ERROR(sch.Reorder({l[0], j[0], l[2], j[1]}));
      return sch.Vectorize(j[1]);
    })) << lanes << " lanes";
  }
}

TEST(SchedulePrimitivesTest, VectorizeWithGuardAndElementwise) {
  EXPECT_TRUE(ScheduleIsCorrect(kBiasRelu, {{"N", 21}}, [](Schedule& sch) -> Status {
    for (const char* name : {"t", "out"}) {
      TF_ASSIGN_OR_RETURN(auto l, Loops(sch, name));
      TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 8}));
      TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
    }
    return Status::OK();
  }));
}

TEST(SchedulePrimitivesTest, UnrollAndAutoUnrollPragma) {
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"K", 12}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "C"));
    TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Unroll(k[1]));
    TF_RETURN_IF_ERROR(sch.Unroll(k[0]));  // unrolling a reduction loop is legal
    return sch.Annotate(l[0], "pragma_auto_unroll_max_step", 64);
  }));
  EXPECT_TRUE(ScheduleIsCorrect(kSoftmax, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "s"));
    return sch.Annotate(l[0], "pragma_auto_unroll_max_step", 512);
  }));
}

TEST(SchedulePrimitivesTest, ComputeInlinePaddingStage) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kPaddedConv, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV pad, sch.GetBlock("pad"));
    TF_RETURN_IF_ERROR(sch.ComputeInline(pad));
    EXPECT_EQ(sch.BlockNames(), std::vector<std::string>{"out"});
    return Status::OK();
  }, &out));
  EXPECT_EQ(ir::ToString(out.scheduled).find("allocate pad"), std::string::npos) << ir::ToString(out.scheduled);
}

TEST(SchedulePrimitivesTest, ComputeInlineBiasAddAndMultiStage) {
  EXPECT_TRUE(ScheduleIsCorrect(kBiasRelu, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV t, sch.GetBlock("t"));
    return sch.ComputeInline(t);
  }));
  EXPECT_TRUE(ScheduleIsCorrect(kSoftmax, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV e, sch.GetBlock("e"));
    return sch.ComputeInline(e);  // two consumers
  }));
}

TEST(SchedulePrimitivesTest, ReverseComputeInlineElementwiseConsumer) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kBiasRelu, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV o, sch.GetBlock("out"));
    TF_RETURN_IF_ERROR(sch.ReverseComputeInline(o));
    EXPECT_EQ(sch.BlockNames(), std::vector<std::string>{"t"});
    return Status::OK();
  }, &out));
  EXPECT_EQ(ir::ToString(out.scheduled).find("allocate t"), std::string::npos) << ir::ToString(out.scheduled);
}

TEST(SchedulePrimitivesTest, BindRecordsAndCpuCodegenRefuses) {
  auto base = LowerText(kMatmul);
  ASSERT_TRUE(base.ok());
  Schedule sch(*base);
  auto l = Loops(sch, "C");
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE(sch.Bind((*l)[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind((*l)[1], "threadIdx.x").ok());
  EXPECT_NE(sch.trace().ToText().find("bind(l0, \"blockIdx.x\")"), std::string::npos) << sch.trace().ToText();
  EXPECT_TRUE(ReplaysIdentically(*base, sch));
  auto kernel = JitCompile(sch.func(), Target::Host());
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kUnimplemented) << kernel.status().ToString();
}

}  // namespace
}  // namespace tunefarm::testing
