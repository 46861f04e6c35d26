// Traces: text round trip and replay on every suite workload, replay with
// changed decisions, parse errors naming the line, and traces that do not fit
// the workload they are applied to.
#include "../schedule_test_util.h"

namespace tunefarm::testing {
namespace {

constexpr double kTraceFlopBudget = 2e4;

class TraceSuiteTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TraceSuiteTest, RandomSchedulesRoundTripThroughText) {
  auto base = LowerShrunk(GetParam(), kTraceFlopBudget);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  for (uint64_t seed = 0; seed < 4; ++seed) {
    Schedule sch(*base, seed);
    std::mt19937_64 rng(seed * 7919 + 1);
    Status s = RandomSchedule(sch, rng, 8);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << sch.trace().ToText();
    std::string text = sch.trace().ToText();
    auto parsed = Trace::Parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->ToText(), text);
    EXPECT_TRUE(ReplaysIdentically(*base, sch)) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(TraceSuite, TraceSuiteTest, ::testing::ValuesIn(SuiteWorkloadFiles()),
                         [](const auto& info) { return std::filesystem::path(info.param).stem().string(); });

// Samples a 3-way tile of i and a 2-way tile of k, then splits with them.
Status TiledMatmul(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto ti, sch.SamplePerfectTile(l[0], 3, 8));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {ti[0], ti[1], ti[2]}));
  TF_ASSIGN_OR_RETURN(auto tk, sch.SamplePerfectTile(l[2], 2, 4));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {tk[0], tk[1]}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], k[0], i[1], l[1], k[1], i[2]}));
  TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical({0, 16, 64}, {0.25, 0.5, 0.25}));
  return sch.Annotate(i[0], "pragma_auto_unroll_max_step", sch.Get(unroll));
}

TEST(TraceDecisionTest, ChangedDecisionGivesAnotherCorrectProgram) {
  auto base = LowerText(kMatmul, {{"M", 24}, {"N", 6}, {"K", 8}});
  ASSERT_TRUE(base.ok());
  auto ref = MakeReference(*base);
  ASSERT_TRUE(ref.ok());
  Schedule sch(*base, 3);
  ASSERT_TRUE(TiledMatmul(sch).ok());
  EXPECT_TRUE(MatchesReference(*ref, sch.func(), true));
  std::vector<size_t> decisions = sch.trace().DecisionIndices();
  ASSERT_EQ(decisions.size(), 3u);
  const Instruction& tile = sch.trace().instructions()[decisions[0]];
  ASSERT_EQ(tile.name, "sample_perfect_tile");
  std::vector<int64_t> other = tile.decision == std::vector<int64_t>{2, 3, 4} ? std::vector<int64_t>{6, 1, 4}
                                                                             : std::vector<int64_t>{2, 3, 4};
  Schedule changed(*base, 3);
  ASSERT_TRUE(sch.trace().ApplyTo(changed, {{decisions[0], other}, {decisions[2], {2}}}).ok());
  EXPECT_NE(ir::ToString(changed.func()), ir::ToString(sch.func()));
  EXPECT_EQ(changed.trace().instructions()[decisions[0]].decision, other);
  EXPECT_EQ(changed.trace().instructions()[decisions[2]].decision, std::vector<int64_t>{2});
  EXPECT_NE(ir::ToString(changed.func()).find("[0, 6)"), std::string::npos) << ir::ToString(changed.func());
  EXPECT_TRUE(MatchesReference(*ref, changed.func(), true));
  EXPECT_TRUE(ReplaysIdentically(*base, changed));
  // A decision that does not fit names the instruction's line.
  Schedule bad(*base, 3);
  Status s = sch.trace().ApplyTo(bad, {{decisions[0], {5, 5, 1}}});
  EXPECT_TRUE(IsInvalid(s, {"trace line 4", "sample_perfect_tile", "[5, 5, 1]"}));
}

TEST(TraceDecisionTest, SameSeedSamplesTheSameDecisions) {
  auto base = LowerText(kMatmul, {{"M", 48}, {"K", 32}});
  ASSERT_TRUE(base.ok());
  Schedule a(*base, 99), b(*base, 99);
  ASSERT_TRUE(TiledMatmul(a).ok());
  ASSERT_TRUE(TiledMatmul(b).ok());
  EXPECT_EQ(a.trace().ToText(), b.trace().ToText());
}

// Decision hints: a schedule re-run with another's decisions as hints makes
// the same program whatever its seed; a hint that does not fit where it
// lands (wrong product, index out of range, a zero-weight candidate) is
// drawn anew and later hints still meet their own calls; a forced decision
// (replay) does not consume a hint.
TEST(TraceDecisionTest, HintsAreTakenWhereTheyFitAndDrawnAnewElsewhere) {
  auto base = LowerText(kMatmul, {{"M", 24}, {"N", 6}, {"K", 8}});
  ASSERT_TRUE(base.ok());
  Schedule first(*base, 3);
  ASSERT_TRUE(TiledMatmul(first).ok());
  std::vector<std::vector<int64_t>> hints;
  for (size_t i : first.trace().DecisionIndices()) hints.push_back(first.trace().instructions()[i].decision);
  Schedule again(*base, 12345);
  again.SetDecisionHints(hints);
  ASSERT_TRUE(TiledMatmul(again).ok());
  EXPECT_EQ(again.trace().ToText(), first.trace().ToText());
  EXPECT_EQ(ir::ToString(again.func()), ir::ToString(first.func()));

  // i's tile: a hint whose product is not 24 is drawn anew (a valid 3-way
  // tile of 24); k's tile and the unroll index then take their own hints.
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Schedule s(*base, seed);
    s.SetDecisionHints({{5, 5, 1}, {4, 2}, {2}});
    ASSERT_TRUE(TiledMatmul(s).ok());
    std::vector<size_t> d = s.trace().DecisionIndices();
    const std::vector<int64_t>& i_tile = s.trace().instructions()[d[0]].decision;
    ASSERT_EQ(i_tile.size(), 3u);
    EXPECT_EQ(i_tile[0] * i_tile[1] * i_tile[2], 24);
    EXPECT_LE(i_tile[2], 8);
    EXPECT_EQ(s.trace().instructions()[d[1]].decision, (std::vector<int64_t>{4, 2}));
    EXPECT_EQ(s.trace().instructions()[d[2]].decision, std::vector<int64_t>{2});
  }
  // An innermost above the limit (k's is 4), an index past the candidates,
  // and an empty hint are all drawn anew, within range.
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Schedule s(*base, seed);
    s.SetDecisionHints({{}, {1, 8}, {7}});
    ASSERT_TRUE(TiledMatmul(s).ok());
    std::vector<size_t> d = s.trace().DecisionIndices();
    EXPECT_LE(s.trace().instructions()[d[1]].decision[1], 4);
    EXPECT_LT(s.trace().instructions()[d[2]].decision[0], 3);
  }
  // A candidate of weight zero is not taken from a hint.
  Schedule zero(*base, 1);
  zero.SetDecisionHints({{1}});
  auto v = zero.SampleCategorical({10, 20}, {1.0, 0.0});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(zero.Get(*v), 10);
  // A forced decision leaves the hint for the next call without one.
  Schedule forced(*base, 1);
  forced.SetDecisionHints({{1}});
  auto a = forced.SampleCategorical({10, 20}, {1.0, 1.0}, 0);
  auto b = forced.SampleCategorical({10, 20}, {1.0, 1.0});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(forced.Get(*a), 10);
  EXPECT_EQ(forced.Get(*b), 20);
}

// Parses `text` and, when it parses, applies it to a matmul schedule.
Status ParseAndApply(const std::string& text) {
  TF_ASSIGN_OR_RETURN(Trace t, Trace::Parse(text));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerText(kMatmul));
  Schedule sch(f);
  return t.ApplyTo(sch);
}

TEST(TraceParseTest, ErrorsNameTheLine) {
  const std::string head = "tunefarm-trace 1\nb0 = get_block(\"C\")\nl1, l2, l3 = get_loops(b0)\n";
  struct Case {
    std::string text;
    std::vector<std::string> words;
  };
  std::vector<Case> cases = {
      {"tunefarm-trace\nb0 = get_block(\"C\")\n", {"line 1", "header"}},
      {"\n\nhello\n", {"line 3", "header"}},
      {"", {"empty trace"}},
      {"tunefarm-trace 2\n", {"line 1", "version 2"}},
      {head + "frobnicate(l1)\n", {"trace line 4", "unknown instruction 'frobnicate'"}},
      {head + "%%% garbage\n", {"trace line 4", "instruction name"}},
      {head + "parallel(l1) trailing\n", {"trace line 4", "unexpected text"}},
      {head + "split(l1, [4, 4]\n", {"trace line 4"}},
      {head + "x7 = fuse(l1, l2)\n", {"trace line 4", "'x7' is not a handle"}},
      {head + "split(l1, [\"4\", 4])\n", {"trace line 4", "split factor"}},
      {head + "l4, l5 = split(l9, [4, 4])\n", {"trace line 4", "'l9' is used before it is defined"}},
      {head + "parallel(b0)\n", {"trace line 4", "parallel", "must be a loop"}},
      {head + "l4, l5 = split(l1, 4)\n", {"trace line 4", "list of factors"}},
      {head + "compute_inline(l1)\n", {"trace line 4", "must be a block"}},
      {head + "annotate(l1, 16, \"pragma_auto_unroll_max_step\")\n", {"trace line 4", "must be a string"}},
      {head + "b4 = cache_read(b0, \"x\", \"local\")\n", {"trace line 4", "must be an integer"}},
      {head + "b4 = cache_write(b0, \"texture\")\n", {"trace line 4", "unknown memory scope"}},
      {head + "l4 = split(l1, [4, 4])\n", {"trace line 4", "defines 2 values", "names 1"}},
      {head + "parallel()\n", {"trace line 4", "expects 1 arguments"}},
      {head + "v4, v5 = sample_perfect_tile(l1, n=2, max_innermost=4) decision=[\"a\"]\n", {"trace line 4", "integers"}},
  };
  for (const Case& c : cases) {
    Status s = ParseAndApply(c.text);
    EXPECT_TRUE(IsInvalid(s, c.words)) << c.text;
  }
}

TEST(TraceParseTest, CommentsBlankLinesAndSpacing) {
  std::string text =
      "# a matmul tile\ntunefarm-trace 1\n\n  b0 = get_block( \"C\" )\r\nl1,l2 ,l3 = get_loops(b0)\n"
      "v4, v5 = sample_perfect_tile(l1, n=2, max_innermost=8) decision=[4, 4]\n# split it\n"
      "l6, l7 = split(l1, [v4, v5])\nparallel(l6)\n";
  auto t = Trace::Parse(text);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->size(), 5u);
  auto again = Trace::Parse(t->ToText());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *t);
  EXPECT_TRUE(ParseAndApply(text).ok());
}

// The matmul tile trace, applied to workloads it was not made for.
TEST(TraceMismatchTest, OtherWorkloadGivesAClearError) {
  auto base = LowerText(kMatmul);
  ASSERT_TRUE(base.ok());
  Schedule sch(*base, 5);
  ASSERT_TRUE(TiledMatmul(sch).ok());
  const Trace& trace = sch.trace();
  auto apply = [&](std::string_view text, const Overrides& overrides) {
    auto f = LowerText(text, overrides);
    EXPECT_TRUE(f.ok());
    Schedule other(*f);
    return trace.ApplyTo(other);
  };
  EXPECT_TRUE(IsInvalid(apply(kSoftmax, {}), {"trace line 2", "get_block", "no block named 'C'"}));
  constexpr std::string_view kScale = R"(
workload scale(M = 16, N = 16) {
  A = input f32[M, N]
  C[i, j] = A[i, j] * 2.0
  output C
}
)";
  EXPECT_TRUE(IsInvalid(apply(kScale, {}), {"trace line 3", "get_loops", "2 loops here", "expects 3"}));
  EXPECT_TRUE(IsInvalid(apply(kMatmul, {{"M", 12}}), {"trace line 4", "sample_perfect_tile", "of 12"}));
  for (const std::string& path : SuiteWorkloadFiles()) {
    auto f = LowerShrunk(path, kTraceFlopBudget);
    ASSERT_TRUE(f.ok()) << path;
    Schedule other(*f);
    Status s = trace.ApplyTo(other);  // fits or fails cleanly, never crashes
    if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << path << ": " << s.ToString();
    }
  }
}

}  // namespace
}  // namespace tunefarm::testing
