// MakeSearchStrategy: the tuning loop's only way to a search. "evolutionary"
// is EvolutionarySearch, batch for batch; a name it does not know is an
// error that names it and the strategies there are, from the factory and
// from TuningLoop::Run.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "sketch_test_util.h"
#include "tuning_loop_test_util.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/search_strategy.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner {
namespace {

using testing::ShrunkDefault;

std::vector<uint64_t> Hashes(const std::vector<Candidate>& batch) {
  std::vector<uint64_t> out;
  for (const Candidate& c : batch) out.push_back(c.hash);
  return out;
}

TEST(SearchStrategyTest, EvolutionaryIsTheEvolutionarySearchBatchForBatch) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  SearchOptions options;
  options.population = 32;
  options.generations = 1;
  ASSERT_EQ(options.strategy, "evolutionary");
  auto strategy = MakeSearchStrategy({f, policy.get(), options, 11});
  ASSERT_TRUE(strategy.ok()) << strategy.status().ToString();
  EvolutionarySearch direct(f, policy.get(), options, 11);
  RandomScorer scorer_a(2), scorer_b(2);
  std::set<uint64_t> measured;
  std::vector<Trace> seeds;
  for (int round = 0; round < 2; ++round) {
    auto a = (*strategy)->NextBatch(6, seeds, measured, scorer_a, {});
    auto b = direct.NextBatch(6, seeds, measured, scorer_b, {});
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_FALSE(a->empty());
    EXPECT_EQ(Hashes(*a), Hashes(*b)) << "round " << round;
    for (const Candidate& c : *a) {
      measured.insert(c.hash);
      seeds.push_back(c.trace);
    }
  }
  // Replay through the interface rebuilds a batch's program.
  auto replayed = (*strategy)->Replay(seeds.front());
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_TRUE(measured.count(replayed->hash));
  auto untuned = (*strategy)->Replay(Trace());
  ASSERT_TRUE(untuned.ok());
  EXPECT_EQ(untuned->trace.size(), 0u);
}

TEST(SearchStrategyTest, AnUnknownNameIsAnErrorNamingTheKnownOnes) {
  EXPECT_EQ(SearchStrategyNames(), std::vector<std::string>{"evolutionary"});
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  SearchOptions options;
  options.strategy = "annealing";
  auto strategy = MakeSearchStrategy({f, policy.get(), options, 1});
  ASSERT_FALSE(strategy.ok());
  EXPECT_EQ(strategy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(strategy.status().message().find("'annealing'"), std::string::npos) << strategy.status().ToString();
  EXPECT_NE(strategy.status().message().find("known: evolutionary"), std::string::npos) << strategy.status().ToString();
}

class SearchStrategyLoopTest : public testing::TuningLogTest {
 protected:
  SearchStrategyLoopTest() : TuningLogTest("tunefarm_strategy_") {}
};

// The loop builds each task's search through the factory: a strategy it
// does not know stops the run before anything is measured.
TEST_F(SearchStrategyLoopTest, TheLoopBuildsItsSearchByName) {
  TuneOptions options = testing::LoopOptions(16);
  options.search.strategy = "annealing";
  TestDeviceMeasurer measurer;
  TuningLoop loop(options, db_.get(), &measurer, nullptr);
  auto task = MakeTuneTask(testing::SmallMatmul());
  ASSERT_TRUE(task.ok());
  std::atomic<bool> stop{false};
  Status st = loop.Run({*task}, stop, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("'annealing'"), std::string::npos) << st.ToString();
  EXPECT_TRUE(Records().empty());

  options.search.strategy = "evolutionary";
  TuningLoop good(options, db_.get(), &measurer, nullptr);
  ASSERT_TRUE(good.Run({*task}, stop, nullptr).ok());
  EXPECT_EQ(Records().size(), 16u);
}

}  // namespace
}  // namespace tunefarm::tuner
