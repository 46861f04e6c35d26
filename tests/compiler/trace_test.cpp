// Traces: text round trip and replay on every suite workload, replay with
// changed decisions, parse errors naming the line, and traces that do not fit
// the workload they are applied to.
#include "schedule_test_util.h"

#include <set>

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

// The sampling instructions of a schedule's trace: what the search passes as
// hints.
std::vector<Instruction> SamplingOf(const Schedule& sch) {
  std::vector<Instruction> out;
  for (size_t i : sch.trace().DecisionIndices()) out.push_back(sch.trace().instructions()[i]);
  return out;
}

std::vector<std::vector<int64_t>> DecisionsOf(const Schedule& sch) {
  std::vector<std::vector<int64_t>> out;
  for (const Instruction& inst : SamplingOf(sch)) out.push_back(inst.decision);
  return out;
}

// Decision hints: a schedule re-run with another's sampling instructions as
// hints makes the same program whatever its seed; a hint whose decision does
// not fit where it lands (wrong product, innermost over the limit, index out
// of range, a zero-weight candidate) is passed over and the call draws anew;
// a forced decision (replay) takes no hint.
TEST(TraceDecisionTest, HintsAreTakenWhereTheyFitAndDrawnAnewElsewhere) {
  auto base = LowerText(kMatmul, {{"M", 24}, {"N", 6}, {"K", 8}});
  ASSERT_TRUE(base.ok());
  Schedule first(*base, 3);
  ASSERT_TRUE(TiledMatmul(first).ok());
  const std::vector<Instruction> hints = SamplingOf(first);
  ASSERT_EQ(hints.size(), 3u);
  Schedule again(*base, 12345);
  again.SetDecisionHints(hints);
  ASSERT_TRUE(TiledMatmul(again).ok());
  EXPECT_EQ(again.trace().ToText(), first.trace().ToText());
  EXPECT_EQ(ir::ToString(again.func()), ir::ToString(first.func()));

  // i's tile with a product other than 24, k's with an innermost above its
  // limit of 4, the unroll index past the candidates: each drawn anew, and
  // a different seed draws differently, so across seeds the draws vary.
  std::vector<Instruction> bad = hints;
  bad[0].decision = {5, 5, 1};
  bad[1].decision = {1, 8};
  bad[2].decision = {7};
  std::set<std::vector<std::vector<int64_t>>> drawn;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Schedule s(*base, seed);
    s.SetDecisionHints(bad);
    ASSERT_TRUE(TiledMatmul(s).ok());
    std::vector<std::vector<int64_t>> d = DecisionsOf(s);
    EXPECT_EQ(d[0][0] * d[0][1] * d[0][2], 24);
    EXPECT_LE(d[1][1], 4);
    EXPECT_LT(d[2][0], 3);
    drawn.insert(d);
  }
  EXPECT_GE(drawn.size(), 8u);
  // A valid hint among invalid ones is still taken by its own call.
  std::vector<Instruction> mixed = bad;
  mixed[1].decision = {2, 4};
  Schedule m(*base, 8);
  m.SetDecisionHints(mixed);
  ASSERT_TRUE(TiledMatmul(m).ok());
  EXPECT_EQ(DecisionsOf(m)[1], (std::vector<int64_t>{2, 4}));
  // A candidate of weight zero is not taken from a hint.
  Schedule zero(*base, 1);
  Instruction pick_second{"sample_categorical",
                          {TraceArg::List({TraceArg::Int(10), TraceArg::Int(20)}),
                           TraceArg::List({TraceArg::Int(500000), TraceArg::Int(500000)}).Named("probs_micro")},
                          {"v0"},
                          {1},
                          true};
  zero.SetDecisionHints({pick_second});
  auto v = zero.SampleCategorical({10, 20}, {1.0, 0.0});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(zero.Get(*v), 10);
  // A forced decision leaves the hint for the next call without one.
  Schedule forced(*base, 1);
  forced.SetDecisionHints({pick_second});
  auto a = forced.SampleCategorical({10, 20}, {1.0, 1.0}, 0);
  auto b = forced.SampleCategorical({10, 20}, {1.0, 1.0});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(forced.Get(*a), 10);
  EXPECT_EQ(forced.Get(*b), 20);
}

// With a first categorical of 1, a 2-way tile of j (innermost at most 2)
// comes before k's tile and the unroll depth: a step of that categorical
// changes which sampling calls follow it.
Status OptionalTileMatmul(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(ValueRV extra, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
  if (sch.Get(extra) == 1) {
    TF_ASSIGN_OR_RETURN(auto tj, sch.SamplePerfectTile(l[1], 2, 2));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {tj[0], tj[1]}));
  }
  TF_ASSIGN_OR_RETURN(auto tk, sch.SamplePerfectTile(l[2], 2, 4));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {tk[0], tk[1]}));
  TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical({0, 16, 64}, {1.0, 1.0, 1.0}));
  return sch.Annotate(l[0], "pragma_auto_unroll_max_step", sch.Get(unroll));
}

// Hints pair with the calls they were made for, not with the k-th call:
// when a step removes or adds a sampling call, the decisions after it stay
// with their own calls (k's tile, the unroll depth), and an added call with
// no hint of its kind draws anew.
TEST(TraceDecisionTest, HintsFollowTheirCallsWhenTheCallsChange) {
  auto base = LowerText(kMatmul, {{"M", 8}, {"N", 12}, {"K", 16}});
  ASSERT_TRUE(base.ok());
  for (int64_t parent_extra : {0, 1}) {
    for (uint64_t seed = 0; seed < 8; ++seed) {
      Schedule parent(*base, seed);
      std::vector<Instruction> force = {
          {"sample_categorical",
           {TraceArg::List({TraceArg::Int(0), TraceArg::Int(1)}),
            TraceArg::List({TraceArg::Int(1000000), TraceArg::Int(1000000)}).Named("probs_micro")},
           {"v0"},
           {parent_extra},
           true}};
      parent.SetDecisionHints(force);
      ASSERT_TRUE(OptionalTileMatmul(parent).ok());
      std::vector<Instruction> hints = SamplingOf(parent);
      ASSERT_EQ(hints.size(), parent_extra ? 4u : 3u);
      hints[0].decision = {1 - parent_extra};
      Schedule child(*base, 100 + seed);
      child.SetDecisionHints(hints);
      ASSERT_TRUE(OptionalTileMatmul(child).ok());
      std::vector<std::vector<int64_t>> p = DecisionsOf(parent), c = DecisionsOf(child);
      ASSERT_EQ(c.size(), parent_extra ? 3u : 4u);
      EXPECT_EQ(c[0], std::vector<int64_t>{1 - parent_extra});
      EXPECT_EQ(c.back(), p.back()) << "the unroll depth stays the parent's";
      EXPECT_EQ(c[c.size() - 2], p[p.size() - 2]) << "k's tile stays the parent's";
      if (!parent_extra) {
        EXPECT_EQ(c[1][0] * c[1][1], 12);  // j's tile, drawn anew
        EXPECT_LE(c[1][1], 2);
      }
    }
  }
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
