// Neighbour decisions (mutation.h): a tile move keeps the product and the
// innermost limit and changes two levels; a categorical step picks another
// candidate by the probabilities; what has no neighbour says so.
#include "tunefarm/tuner/mutation.h"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <set>

namespace tunefarm::tuner {
namespace {

Instruction Tile(std::vector<int64_t> decision, int64_t max_innermost) {
  return {"sample_perfect_tile",
          {TraceArg::Ref("l1"), TraceArg::Int(int64_t(decision.size())).Named("n"),
           TraceArg::Int(max_innermost).Named("max_innermost")},
          {"v2"},
          std::move(decision),
          true};
}

Instruction Categorical(std::vector<int64_t> candidates, std::vector<int64_t> probs_micro, int64_t decision) {
  std::vector<TraceArg> c, p;
  for (int64_t x : candidates) c.push_back(TraceArg::Int(x));
  for (int64_t x : probs_micro) p.push_back(TraceArg::Int(x));
  return {"sample_categorical", {TraceArg::List(c), TraceArg::List(p).Named("probs_micro")}, {"v3"}, {decision}, true};
}

TEST(NeighbourDecisionTest, TileMoveKeepsTheProductAndTheInnermostLimit) {
  const std::vector<int64_t> parent = {4, 8, 2, 16};
  Instruction inst = Tile(parent, 16);
  std::mt19937_64 rng(7);
  std::set<std::vector<int64_t>> seen;
  for (int i = 0; i < 500; ++i) {
    auto d = NeighbourDecision(inst, rng);
    ASSERT_TRUE(d.has_value());
    ASSERT_EQ(d->size(), parent.size());
    EXPECT_EQ(std::accumulate(d->begin(), d->end(), int64_t(1), std::multiplies<>()), 1024);
    EXPECT_LE(d->back(), 16);
    int changed = 0;
    for (size_t k = 0; k < parent.size(); ++k) changed += (*d)[k] != parent[k];
    EXPECT_EQ(changed, 2) << "a move changes the level it takes from and the one it gives to";
    seen.insert(*d);
  }
  // The moves that keep the innermost within 16: from 4 (divisors 2, 4) to
  // the two other outer levels, from 8 (2, 4, 8) likewise, from 2 to the two
  // other outer levels, and from 16 (2, 4, 8, 16) to the three outer ones:
  // 4 + 6 + 2 + 12 = 24, each drawn with the same chance.
  EXPECT_EQ(seen.size(), 24u);
}

TEST(NeighbourDecisionTest, NoMoveWhenTheOnlyTargetBreaksTheLimit) {
  std::mt19937_64 rng(1);
  // Two levels, innermost limited to 1: the 7 cannot move inward, and the
  // innermost has nothing to give.
  EXPECT_FALSE(NeighbourDecision(Tile({7, 1}, 1), rng).has_value());
  // One level: nowhere to move to.
  EXPECT_FALSE(NeighbourDecision(Tile({12}, 64), rng).has_value());
}

TEST(NeighbourDecisionTest, CategoricalStepPicksAnotherCandidateByProbability) {
  std::mt19937_64 rng(3);
  Instruction unroll = Categorical({0, 16, 64, 512}, {250000, 250000, 250000, 250000}, 2);
  std::set<int64_t> picked;
  for (int i = 0; i < 200; ++i) {
    auto d = NeighbourDecision(unroll, rng);
    ASSERT_TRUE(d.has_value());
    ASSERT_EQ(d->size(), 1u);
    EXPECT_NE((*d)[0], 2);
    EXPECT_GE((*d)[0], 0);
    EXPECT_LT((*d)[0], 4);
    picked.insert((*d)[0]);
  }
  EXPECT_EQ(picked, (std::set<int64_t>{0, 1, 3}));
  // Weights count: with 9 to 1 between the two others, the heavy one wins
  // most draws.
  Instruction weighted = Categorical({0, 16, 64}, {100000, 900000, 100000}, 0);
  int heavy = 0;
  for (int i = 0; i < 400; ++i) heavy += NeighbourDecision(weighted, rng) == std::vector<int64_t>{1};
  EXPECT_GT(heavy, 320);
  EXPECT_LT(heavy, 395);
  // A candidate of probability zero is never picked.
  Instruction skewed = Categorical({1, 2, 3}, {500000, 0, 500000}, 0);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(NeighbourDecision(skewed, rng), (std::vector<int64_t>{2}));
  // A single candidate has no other.
  EXPECT_FALSE(NeighbourDecision(Categorical({8}, {1000000}, 0), rng).has_value());
}

TEST(NeighbourDecisionTest, OtherInstructionsHaveNoNeighbour) {
  std::mt19937_64 rng(5);
  Instruction location{"sample_compute_location", {TraceArg::Ref("b0")}, {"l4"}, {2}, true};
  EXPECT_FALSE(NeighbourDecision(location, rng).has_value());
  Instruction split{"split", {TraceArg::Ref("l1")}, {"l5", "l6"}, {}, false};
  EXPECT_FALSE(NeighbourDecision(split, rng).has_value());
}

}  // namespace
}  // namespace tunefarm::tuner
