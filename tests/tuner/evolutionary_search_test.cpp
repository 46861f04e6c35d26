// The evolutionary search over the CPU sketch: batches never repeat measured
// programs, epsilon and choice picks, seeds of missing choices, and mutation
// (neighbouring programs, the tile share, reruns with the same decisions).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/seed_selection.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::ShrunkDefault;

// A search pool small enough for a unit test: 32 programs a generation.
SearchOptions SmallPool(int generations) {
  SearchOptions options;
  options.population = 32;
  options.generations = generations;
  return options;
}

TEST(EvolutionarySearchTest, BatchesNeverRepeatMeasuredPrograms) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SmallPool(2), 5);
  RandomScorer scorer(1);
  std::set<uint64_t> measured;
  std::vector<Trace> seeds;
  for (int round = 0; round < 3; ++round) {
    auto batch = search.NextBatch(8, seeds, measured, scorer, {});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_FALSE(batch->empty());
    for (const Candidate& c : *batch) {
      EXPECT_FALSE(measured.count(c.hash)) << "candidate measured twice";
      measured.insert(c.hash);
      seeds.push_back(c.trace);
    }
  }
}

// Scores every candidate alike and keeps the hashes of the first call's
// candidates: a round's first generation, the log's seeds and the random
// samples of the sketch.
class FirstGenerationScorer : public CandidateScorer {
 public:
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override {
    if (first_generation.empty()) {
      for (const Candidate* c : candidates) first_generation.insert(c->hash);
    }
    return std::vector<double>(candidates.size(), 0.0);
  }
  std::set<uint64_t> first_generation;
};

// The epsilon share of a batch is drawn among the round's random samples of
// the sketch, not among the mutations the pool is mostly made of.
TEST(EvolutionarySearchTest, EpsilonPicksAreRandomSamplesOfTheSketch) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  SearchOptions options = SmallPool(3);
  options.epsilon = 1.0;
  EvolutionarySearch search(f, policy.get(), options, 13);
  auto seed = search.Sample();
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  std::set<uint64_t> measured = {seed->hash};
  FirstGenerationScorer scorer;
  auto batch = search.NextBatch(12, {seed->trace}, measured, scorer, {});
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 12u);
  ASSERT_EQ(scorer.first_generation.size(), 32u);
  for (const Candidate& c : *batch) {
    EXPECT_NE(c.hash, seed->hash);
    EXPECT_TRUE(scorer.first_generation.count(c.hash)) << "an epsilon pick that is not a random sample";
  }
}

// Scores the programs that take one categorical value lowest, the others alike:
// a model that has only seen the other values measured.
class AvoidChoiceScorer : public CandidateScorer {
 public:
  explicit AvoidChoiceScorer(std::string key) : keys_{std::move(key)} {}
  explicit AvoidChoiceScorer(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override {
    std::vector<double> scores;
    for (const Candidate* c : candidates) scores.push_back(HasAnyKey(*c) ? -1.0 : 0.0);
    return scores;
  }
  bool HasAnyKey(const Candidate& c) const {
    for (const std::string& key : keys_) {
      if (HasKey(c, key)) return true;
    }
    return false;
  }
  static bool HasKey(const Candidate& c, const std::string& key) {
    std::vector<std::string> keys = ChoiceKeys(c.trace);
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }

 private:
  std::vector<std::string> keys_;
};

// Categorical values some of 24 random programs of `f` take, but fewer than half.
std::vector<std::string> MinorityChoices(const ir::PrimFunc& f, SketchPolicy* policy) {
  EvolutionarySearch probe(f, policy, SmallPool(1), 3);
  std::map<std::string, int> taken_by;
  const int kSamples = 24;
  for (int i = 0; i < kSamples; ++i) {
    auto c = probe.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return {};
    for (const std::string& key : ChoiceKeys(c->trace)) ++taken_by[key];
  }
  std::vector<std::string> keys;
  for (const auto& [k, n] : taken_by) {
    if (n > 0 && n < kSamples / 2) keys.push_back(k);
  }
  return keys;
}

// A value the fastest records lack gets its batch place (choice_picks) however
// the model ranks it; without choice_picks the model's ranking keeps it out.
TEST(EvolutionarySearchTest, ChoicePicksMeasureAValueTheModelRanksLast) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  // A categorical value some random programs take and others do not.
  std::vector<std::string> minority = MinorityChoices(f, policy.get());
  ASSERT_FALSE(minority.empty()) << "no categorical value of the sketch taken by a minority of programs";
  const std::string key = minority.back();
  std::vector<int> with_key;
  for (int picks : {0, 1}) {
    SearchOptions options = SmallPool(2);
    options.epsilon = 0;
    options.choice_picks = picks;
    EvolutionarySearch search(f, policy.get(), options, 7);
    AvoidChoiceScorer scorer(key);
    auto batch = search.NextBatch(8, {}, {}, scorer, {key});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_EQ(batch->size(), 8u);
    with_key.push_back(int(std::count_if(batch->begin(), batch->end(),
                                         [&](const Candidate& c) { return AvoidChoiceScorer::HasKey(c, key); })));
  }
  EXPECT_EQ(with_key[0], 0) << key;
  EXPECT_EQ(with_key[1], 1) << key;
}

// Choice picks take at most half of the places the model fills: in a batch of
// two, one goes to a missing value and the other to the model's favourite,
// even with two values missing and two picks allowed.
TEST(EvolutionarySearchTest, ChoicePicksLeaveHalfOfASmallBatchToTheModel) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  std::vector<std::string> minority = MinorityChoices(f, policy.get());
  ASSERT_GE(minority.size(), 2u) << "fewer than two categorical values taken by a minority of programs";
  const std::vector<std::string> wanted = {minority[0], minority[1]};
  SearchOptions options = SmallPool(2);
  options.epsilon = 0;
  options.choice_picks = 2;
  EvolutionarySearch search(f, policy.get(), options, 7);
  AvoidChoiceScorer scorer(wanted);
  auto batch = search.NextBatch(2, {}, {}, scorer, wanted);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 2u);
  EXPECT_TRUE(scorer.HasAnyKey((*batch)[0])) << "the missing value's place";
  EXPECT_FALSE(scorer.HasAnyKey((*batch)[1])) << "the model's favourite";
}

// MissingChoices: the values of the choice seeds that the fastest lack, once each.
TEST(EvolutionarySearchTest, MissingChoicesAreTheChoiceSeedsValuesTheFastestLack) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch probe(f, policy.get(), SmallPool(1), 3);
  std::vector<Trace> seeds;
  for (int i = 0; i < 6; ++i) seeds.push_back(probe.Sample()->trace);
  std::set<std::string> fastest;
  for (int i = 0; i < 3; ++i) {
    for (const std::string& k : ChoiceKeys(seeds[size_t(i)])) fastest.insert(k);
  }
  std::set<std::string> expected;
  for (int i = 3; i < 6; ++i) {
    for (const std::string& k : ChoiceKeys(seeds[size_t(i)])) {
      if (!fastest.count(k)) expected.insert(k);
    }
  }
  ASSERT_FALSE(expected.empty()) << "the last three programs take no value the first three lack";
  std::vector<std::string> missing = MissingChoices(seeds, 3);
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()), expected);
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()).size(), missing.size()) << "a value listed twice";
  EXPECT_TRUE(MissingChoices(seeds, 6).empty());
}

// Counts over 40 mutations of random samples.
struct MutationCounts {
  int children = 0;           // valid mutations
  int same_program = 0;       // children whose program is the parent's
  int unchanged_decisions = 0;
  int categorical_steps = 0;  // children with a categorical decision changed
};

MutationCounts MutateSamples(const std::string& workload, SearchOptions options) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + workload + ".tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), options, 11);
  MutationCounts counts;
  for (int i = 0; i < 40; ++i) {
    auto parent = search.Sample();
    EXPECT_TRUE(parent.ok()) << parent.status().ToString();
    if (!parent.ok()) continue;
    auto child = search.Mutate(*parent);
    if (!child.ok()) continue;  // an invalid mutation is dropped by the search
    ++counts.children;
    counts.same_program += child->hash == parent->hash;
    std::vector<size_t> a = parent->trace.DecisionIndices(), b = child->trace.DecisionIndices();
    bool categorical_changed = false, any_changed = a.size() != b.size();
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
      const Instruction& x = parent->trace.instructions()[a[k]];
      const Instruction& y = child->trace.instructions()[b[k]];
      if (x.decision == y.decision) continue;
      any_changed = true;
      categorical_changed |= x.name == "sample_categorical" && y.name == "sample_categorical";
    }
    counts.unchanged_decisions += !any_changed;
    counts.categorical_steps += categorical_changed;
  }
  return counts;
}

// A mutation gives a program other than its parent's (a step that changes
// nothing is retried on another decision) with some of the parent's
// decisions changed; its program computes what the default does
// (SamplesAreValidAndCorrect checks that over the suite).
TEST(EvolutionarySearchTest, MutationGivesANeighbouringProgram) {
  for (const char* workload : {"c2d_resnet_3x3", "gmm_512"}) {
    MutationCounts counts = MutateSamples(workload, SearchOptions{});
    EXPECT_GE(counts.children, 36) << workload;
    EXPECT_EQ(counts.same_program, 0) << workload;
    EXPECT_EQ(counts.unchanged_decisions, 0) << workload;
  }
}

// tile_mutation_share weighs which decision steps. On GMM the sketch samples
// the packing panel, the unroll depth and the accumulator level as
// categoricals whose effect is written into the trace as fixed steps: a step
// of one of these changes the program too, because the sketch is re-run
// (replaying the parent's trace with the decision changed would not).
TEST(EvolutionarySearchTest, TileShareWeighsWhichDecisionSteps) {
  SearchOptions only_tiles, no_tiles;
  only_tiles.tile_mutation_share = 1.0;
  no_tiles.tile_mutation_share = 0.0;
  MutationCounts tiles = MutateSamples("gmm_512", only_tiles);
  EXPECT_GE(tiles.children, 36);
  EXPECT_EQ(tiles.categorical_steps, 0);
  // Without tile steps, most children differ in a categorical (a step that
  // lowers to the parent's program, as an unroll depth on a short loop can,
  // falls through to another decision, tiles last).
  MutationCounts others = MutateSamples("gmm_512", no_tiles);
  EXPECT_GE(others.children, 36);
  EXPECT_EQ(others.same_program, 0);
  EXPECT_GE(others.categorical_steps, 24);
}

// Re-running the sketch with a sample's own decisions as hints gives the
// sample back (what a mutation starts from).
TEST(EvolutionarySearchTest, SketchRerunWithItsDecisionsGivesTheSameProgram) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/t2d.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 4);
  for (int i = 0; i < 8; ++i) {
    auto sample = search.Sample();
    ASSERT_TRUE(sample.ok()) << sample.status().ToString();
    std::vector<std::vector<int64_t>> hints;
    for (size_t k : sample->trace.DecisionIndices()) hints.push_back(sample->trace.instructions()[k].decision);
    Schedule again(f, 1000 + uint64_t(i));
    again.SetDecisionHints(hints);
    ASSERT_TRUE(policy->Apply(again).ok());
    EXPECT_EQ(again.trace().ToText(), sample->trace.ToText());
  }
}

// A packed copy made once for the whole call runs in parallel over its outer
// loop (the suite's transposed convolution shrunk to 8 -> 32 channels: its
// weights are packed along the output channels, 16 wide). Samples with such
// a copy have two parallel loops (the copy's and the kernel's) and compute
// what the default does.

}  // namespace
}  // namespace tunefarm::tuner
