// Seeds of a search round (seed_selection.h): the fastest records first, then
// the fastest record of each value a categorical decision has taken that the
// fastest ones lack, within the limit; tiles do not make a choice of their
// own; instructions at other positions or with other candidates do not mix.
#include "tunefarm/tuner/seed_selection.h"

#include <gtest/gtest.h>

namespace tunefarm::tuner {
namespace {

Instruction Categorical(std::vector<int64_t> candidates, int64_t decision, std::string out) {
  std::vector<TraceArg> c, p;
  for (int64_t x : candidates) {
    c.push_back(TraceArg::Int(x));
    p.push_back(TraceArg::Int(1000000));
  }
  return {"sample_categorical", {TraceArg::List(c), TraceArg::List(p).Named("probs_micro")}, {std::move(out)}, {decision},
          true};
}

Instruction Tile(std::vector<int64_t> decision) {
  return {"sample_perfect_tile",
          {TraceArg::Ref("l1"), TraceArg::Int(int64_t(decision.size())).Named("n"), TraceArg::Int(64).Named("max_innermost")},
          {"v9", "v10"},
          std::move(decision),
          true};
}

// A trace of the usual shape: pad decision, a tile, an unroll decision.
Trace Program(int64_t pad, std::vector<int64_t> tile, int64_t unroll) {
  Trace t;
  t.Append(Categorical({0, 1}, pad, "v1"));
  t.Append(Tile(std::move(tile)));
  t.Append(Categorical({0, 16, 64, 512}, unroll, "v20"));
  return t;
}

TEST(PickSeedsTest, FastestFirstThenTheBestOfEachMissingChoice) {
  // Sorted fastest first: the three fastest keep their guards (pad 0); the
  // fastest padded program is fifth.
  std::vector<std::pair<double, Trace>> measured = {
      {1.0, Program(0, {4, 7}, 1)}, {1.1, Program(0, {2, 14}, 1)}, {1.2, Program(0, {28, 1}, 1)},
      {1.3, Program(0, {14, 2}, 1)}, {1.4, Program(1, {7, 4}, 1)},  {1.5, Program(1, {4, 7}, 1)},
      {1.6, Program(0, {1, 28}, 3)}};
  std::vector<Trace> seeds = PickSeeds(measured, 3, 8);
  ASSERT_EQ(seeds.size(), 5u);
  EXPECT_EQ(seeds[0], measured[0].second);
  EXPECT_EQ(seeds[1], measured[1].second);
  EXPECT_EQ(seeds[2], measured[2].second);
  EXPECT_EQ(seeds[3], measured[4].second) << "the fastest padded program, not the slower padded one";
  EXPECT_EQ(seeds[4], measured[6].second) << "the only program with unroll value 3";
}

TEST(PickSeedsTest, NoChoiceSeedsWithoutLimitOrWhenTheFastestCoverEveryValue) {
  std::vector<std::pair<double, Trace>> measured = {
      {1.0, Program(0, {4, 7}, 1)}, {1.1, Program(1, {2, 14}, 1)}, {1.2, Program(1, {28, 1}, 1)}};
  EXPECT_EQ(PickSeeds(measured, 16, 0).size(), 3u) << "fewer records than the fastest count: all of them";
  EXPECT_EQ(PickSeeds(measured, 2, 8).size(), 2u) << "the third adds no value the first two lack";
  measured.push_back({1.3, Program(0, {28, 1}, 2)});
  EXPECT_EQ(PickSeeds(measured, 2, 0).size(), 2u) << "limit 0: the fastest only";
  EXPECT_EQ(PickSeeds(measured, 2, 8).size(), 3u);
}

// per_value: a value the fastest lack may bring several seeds, its fastest
// programs in order, still within the limit; values the fastest have bring none.
TEST(PickSeedsTest, SeveralSeedsPerMissingValue) {
  std::vector<std::pair<double, Trace>> measured = {
      {1.0, Program(1, {4, 7}, 1)}, {1.1, Program(1, {2, 14}, 1)}, {1.2, Program(0, {28, 1}, 1)},
      {1.3, Program(1, {14, 2}, 1)}, {1.4, Program(0, {7, 4}, 1)},  {1.5, Program(0, {1, 28}, 1)},
      {1.6, Program(0, {4, 7}, 1)}};
  std::vector<Trace> one = PickSeeds(measured, 2, 8);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[2], measured[2].second);
  std::vector<Trace> three = PickSeeds(measured, 2, 8, 3);
  ASSERT_EQ(three.size(), 5u) << "the three fastest unpadded programs; the padded one adds nothing";
  EXPECT_EQ(three[2], measured[2].second);
  EXPECT_EQ(three[3], measured[4].second);
  EXPECT_EQ(three[4], measured[5].second);
  EXPECT_EQ(PickSeeds(measured, 2, 2, 3).size(), 4u) << "the limit still counts every choice seed";
}

TEST(PickSeedsTest, TheLimitCountsChoiceSeedsOnly) {
  std::vector<std::pair<double, Trace>> measured = {{1.0, Program(0, {4, 7}, 0)},
                                                    {1.1, Program(0, {4, 7}, 1)},
                                                    {1.2, Program(0, {4, 7}, 2)},
                                                    {1.3, Program(1, {4, 7}, 3)}};
  std::vector<Trace> seeds = PickSeeds(measured, 1, 2);
  ASSERT_EQ(seeds.size(), 3u);
  EXPECT_EQ(seeds[1], measured[1].second);
  EXPECT_EQ(seeds[2], measured[2].second);
}

TEST(PickSeedsTest, ChoicesAreTheirPositionAndCandidatesNotJustTheValue) {
  // The same value (1) of an instruction with other candidates, or at another
  // position (the sketch took another path), is another choice.
  Trace other_candidates;
  other_candidates.Append(Categorical({1, 3}, 0, "v1"));
  other_candidates.Append(Tile({4, 7}));
  other_candidates.Append(Categorical({0, 16, 64, 512}, 1, "v20"));
  Trace shifted;
  shifted.Append(Tile({4, 7}));
  shifted.Append(Categorical({0, 1}, 0, "v1"));
  shifted.Append(Categorical({0, 16, 64, 512}, 1, "v20"));
  std::vector<std::pair<double, Trace>> measured = {{1.0, Program(0, {4, 7}, 1)}, {1.1, other_candidates}, {1.2, shifted}};
  EXPECT_EQ(PickSeeds(measured, 1, 8).size(), 3u);
}

}  // namespace
}  // namespace tunefarm::tuner
