// Illegal schedule requests return InvalidArgument naming the loop, block or
// problem, and leave the schedule unchanged: same program text, same trace.
#include "../schedule_test_util.h"

namespace tunefarm::testing {
namespace {

// Expects `request` to fail with InvalidArgument mentioning `words`, and to
// leave the program and the trace as they were.
::testing::AssertionResult Rejected(Schedule& sch, const std::function<Status()>& request,
                                    const std::vector<std::string>& words) {
  std::string before = ir::ToString(sch.func());
  size_t trace_size = sch.trace().size();
  Status s = request();
  auto r = IsInvalid(s, words);
  if (!r) return r;
  if (ir::ToString(sch.func()) != before) return ::testing::AssertionFailure() << "the program changed: " << s.message();
  if (sch.trace().size() != trace_size) return ::testing::AssertionFailure() << "the trace grew: " << s.message();
  return ::testing::AssertionSuccess();
}

class ScheduleLegalityTest : public ::testing::Test {
 protected:
  Schedule Make(std::string_view text, const Overrides& overrides = {}) {
    auto f = LowerText(text, overrides);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return Schedule(*f);
  }
  static std::vector<LoopRV> Loops(Schedule& sch, const std::string& block) {
    auto b = sch.GetBlock(block);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    auto l = sch.GetLoops(*b);
    EXPECT_TRUE(l.ok());
    return *l;
  }
  static BlockRV Block(Schedule& sch, const std::string& name) { return *sch.GetBlock(name); }
};

TEST_F(ScheduleLegalityTest, SplitFactors) {
  Schedule sch = Make(kMatmul);
  auto l = Loops(sch, "C");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {0, 16}).status(); }, {"split", "factor 0", "i"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {-2, 8}).status(); }, {"split", "-2", "i"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {-1, -1}).status(); }, {"split", "factor 1"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {16}).status(); }, {"split", "two factors"}));
}

TEST_F(ScheduleLegalityTest, SplitOfAParallelLoop) {
  Schedule sch = Make(kMatmul);
  auto l = Loops(sch, "C");
  ASSERT_TRUE(sch.Parallel(l[0]).ok());
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {4, 4}).status(); }, {"split", "i", "parallel"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Fuse({l[0], l[1]}).status(); }, {"fuse", "i", "not serial"}));
}

TEST_F(ScheduleLegalityTest, ReductionLoopsStayOrdered) {
  Schedule sch = Make(kMatmul);
  auto l = Loops(sch, "C");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Vectorize(l[2]); }, {"vectorize", "k", "reduction"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Parallel(l[2]); }, {"parallel", "k", "reduction"}));
  auto jk = sch.Fuse({l[1], l[2]});
  ASSERT_TRUE(jk.ok());
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Parallel(*jk); }, {"parallel", "j_k_fused", "reduction"}));
}

TEST_F(ScheduleLegalityTest, FuseAndReorderNeedOneNest) {
  Schedule sch = Make(kDenseBiasRelu);
  auto acc = Loops(sch, "acc");
  auto out = Loops(sch, "out");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Fuse({acc[0], acc[2]}).status(); }, {"fuse", "k", "not directly inside", "i"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Fuse({acc[1], acc[0]}).status(); }, {"fuse", "not directly inside"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Reorder({acc[1], out[0]}); }, {"reorder", "not in one loop nest"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Reorder({acc[1], acc[1]}); }, {"reorder", "twice"}));
}

TEST_F(ScheduleLegalityTest, ComputeAtMustCoverEveryConsumer) {
  Schedule sch = Make(kSoftmax);
  auto out = Loops(sch, "out");
  BlockRV e = Block(sch, "e");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeAt(e, out[0]); }, {"compute_at", "e", "block s", "not inside the loop"}));
  auto own = Loops(sch, "e");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeAt(e, own[1]); }, {"compute_at", "already inside"}));
}

TEST_F(ScheduleLegalityTest, ComputeInlineNeedsElementwiseIntermediate) {
  Schedule sch = Make(kDenseBiasRelu);
  BlockRV acc = Block(sch, "acc"), out = Block(sch, "out");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeInline(acc); }, {"compute_inline", "acc", "reduction"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeInline(out); }, {"compute_inline", "out", "output"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ReverseComputeInline(out); },
                       {"reverse_compute_inline", "out", "acc", "reduction"}));
}

TEST_F(ScheduleLegalityTest, ReverseComputeAtInsideTheReduction) {
  Schedule sch = Make(kDenseBiasRelu);
  auto acc = Loops(sch, "acc");
  auto k = sch.Split(acc[2], {-1, 4});
  ASSERT_TRUE(k.ok());
  BlockRV out = Block(sch, "out");
  for (LoopRV l : {acc[1], (*k)[0], (*k)[1]}) {
    if (l.id == acc[1].id) continue;  // j encloses the whole reduction: legal, tried below
    EXPECT_TRUE(Rejected(sch, [&] { return sch.ReverseComputeAt(out, l); }, {"reverse_compute_at", "out", "partial"}));
  }
  EXPECT_TRUE(sch.ReverseComputeAt(out, acc[1]).ok());
}

TEST_F(ScheduleLegalityTest, HandlesAndNames) {
  Schedule sch = Make(kMatmul);
  EXPECT_TRUE(Rejected(sch, [&] { return sch.GetBlock("nope").status(); }, {"nope", "C"}));
  auto l = Loops(sch, "C");
  ASSERT_TRUE(sch.Split(l[0], {4, 4}).ok());
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Parallel(l[0]); }, {"i", "no longer exists"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Split(l[0], {2, 8}).status(); }, {"no longer exists"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Unroll(LoopRV{999}); }, {"unknown loop handle", "l999"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeInline(BlockRV{77}); }, {"unknown block handle", "b77"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Bind(l[1], "threadIdx.w"); }, {"bind", "threadIdx.w"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.Annotate(l[1], "pragma_nope", 4); }, {"annotate", "pragma_nope"}));
}

TEST_F(ScheduleLegalityTest, SamplePerfectTileBadDecision) {
  Schedule sch = Make(kMatmul);
  auto l = Loops(sch, "C");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 2, 16, std::vector<int64_t>{4, 5}).status(); },
                       {"sample_perfect_tile", "[4, 5]", "16"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 3, 16, std::vector<int64_t>{4, 4}).status(); },
                       {"sample_perfect_tile", "3 positive factors"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 2, 4, std::vector<int64_t>{2, 8}).status(); },
                       {"innermost in [1, 4]"}));
  // Below the least innermost tile, and a range no divisor of the extent (16) meets.
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 2, 16, std::vector<int64_t>{8, 2}, 4).status(); },
                       {"innermost in [4, 16]"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 2, 7, std::nullopt, 5).status(); },
                       {"no divisor of 16", "[5, 7]"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SamplePerfectTile(l[0], 2, 16, std::vector<int64_t>{-4, -4}).status(); },
                       {"positive"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.SampleCategorical({1, 2}, {0.5, 0.5}, 2).status(); },
                       {"sample_categorical", "decision 2"}));
}

TEST_F(ScheduleLegalityTest, CacheReadIndexAndPackFactor) {
  Schedule sch = Make(kMatmul, {{"N", 20}});
  BlockRV c = Block(sch, "C");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.CacheRead(c, 2, ir::MemoryScope::kLocal).status(); },
                       {"cache_read", "C", "read index 2", "2 buffers"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.CacheRead(c, -1, ir::MemoryScope::kLocal).status(); }, {"read index -1"}));
  auto copy = sch.CacheRead(c, 1, ir::MemoryScope::kGlobal);
  ASSERT_TRUE(copy.ok());
  EXPECT_TRUE(Rejected(sch, [&] { return sch.PackLayout(*copy, 1, 16, 0); }, {"pack_layout", "factor 16", "extent 20"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.PackLayout(*copy, 2, 4, 0); }, {"pack_layout", "dimension 2"}));
  EXPECT_TRUE(Rejected(sch, [&] { return sch.PackLayout(c, 1, 4, 0); }, {"pack_layout", "parameter"}));
}

// A consumer moved into its producer's loop must not read a buffer that is
// only written after that loop (softmax: out reads s, written after e's loop).
TEST_F(ScheduleLegalityTest, ReverseComputeAtBeforeAnotherInputIsReady) {
  Schedule sch = Make(kSoftmax);
  auto e = Loops(sch, "e");
  BlockRV out = Block(sch, "out");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ReverseComputeAt(out, e[0]); },
                       {"reverse_compute_at", "out", "s"}));
}

// Inlining a consumer into its producer moves its other reads earlier too.
TEST_F(ScheduleLegalityTest, ReverseComputeInlineBeforeAnotherInputIsReady) {
  constexpr std::string_view kTwoOutputs = R"(
workload two(M = 4, N = 6) {
  A = input f32[M, N]
  t[i, j] = A[i, j] * 2.0
  o1[i] = sum(j: N) A[i, j]
  o2[i, j] = t[i, j] + o1[i]
  output o1, o2
}
)";
  Schedule sch = Make(kTwoOutputs);
  BlockRV o2 = Block(sch, "o2");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ReverseComputeInline(o2); },
                       {"reverse_compute_inline", "o2", "o1"}));
}

// A consumer that covers only part of its producer cannot take over the
// producer's iteration space.
TEST_F(ScheduleLegalityTest, ReverseComputeInlineOfAPartialConsumer) {
  constexpr std::string_view kPartial = R"(
workload part(M = 6, N = 5) {
  A = input f32[M, N]
  t[i, j] = A[i, j] * 2.0
  out[i: M - 2, j: N] = t[i, j] + 1.0
  output out
}
)";
  Schedule sch = Make(kPartial);
  BlockRV out = Block(sch, "out");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ReverseComputeInline(out); },
                       {"reverse_compute_inline", "out"}));
}

// The write-back of a cache_write copies the whole buffer; under a tile loop
// it would copy stale data over the other tiles.
TEST_F(ScheduleLegalityTest, CacheWriteOfABlockInsideAnotherLoop) {
  Schedule sch = Make(kDenseBiasRelu);
  auto acc = Loops(sch, "acc");
  auto j = sch.Split(acc[1], {-1, 8});
  ASSERT_TRUE(j.ok());
  ASSERT_TRUE(sch.ReverseComputeAt(Block(sch, "out"), (*j)[0]).ok());
  BlockRV out = Block(sch, "out");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.CacheWrite(out, ir::MemoryScope::kLocal).status(); },
                       {"cache_write", "out", "j_0"}));
}

// Inlining or moving a block must not take a use of a buffer out of the
// Allocate that scopes it (cache buffers are scoped to their block's nest).
TEST_F(ScheduleLegalityTest, BufferUsesStayInsideTheirAllocation) {
  Schedule sch = Make(kSoftmax);
  BlockRV mx = Block(sch, "mx");
  auto write_back = sch.CacheWrite(mx, ir::MemoryScope::kLocal);
  ASSERT_TRUE(write_back.ok());
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeInline(*write_back); },
                       {"compute_inline", "mx_write_back", "mx_local", "scope"}));
  auto e = Loops(sch, "e");
  EXPECT_TRUE(Rejected(sch, [&] { return sch.ComputeAt(*write_back, e[0]); }, {"compute_at", "mx_local", "scope"}));

  Schedule sch2 = Make(kDenseBiasRelu);
  BlockRV out = Block(sch2, "out");
  auto acc_copy = sch2.CacheRead(out, 0, ir::MemoryScope::kLocal);
  ASSERT_TRUE(acc_copy.ok());
  auto acc = Loops(sch2, "acc");
  EXPECT_TRUE(Rejected(sch2, [&] { return sch2.ReverseComputeAt(*acc_copy, acc[1]); },
                       {"reverse_compute_at", "acc_local", "scope"}));
}

}  // namespace
}  // namespace tunefarm::testing
