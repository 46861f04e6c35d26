// Realigning the log's records with the current sketch: a record written by
// an older sketch, whose decisions are one fewer or one more than the current
// sketch reads (the padding rule added one per guarded input), gets the trace
// the current sketch writes for the same program, so that mutations of it are
// neighbours; a trace no single edit explains comes back unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sketch_test_util.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::ShrunkDefault;

std::vector<std::vector<int64_t>> Decisions(const Trace& trace) {
  std::vector<std::vector<int64_t>> out;
  for (size_t k : trace.DecisionIndices()) out.push_back(trace.instructions()[k].decision);
  return out;
}

// How many decisions differ between two traces of one sketch (positionally);
// a different count of decisions counts as every one differing.
size_t DecisionsChanged(const Trace& a, const Trace& b) {
  auto x = Decisions(a), y = Decisions(b);
  if (x.size() != y.size()) return std::max(x.size(), y.size());
  size_t changed = 0;
  for (size_t k = 0; k < x.size(); ++k) changed += x[k] != y[k];
  return changed;
}

ir::PrimFunc Workload(const std::string& name) {
  return ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf");
}

std::unique_ptr<SketchPolicy> Policy(bool pad_inputs) {
  CpuSketchConfig config;
  config.pad_inputs = pad_inputs;
  return MakeCpuSketchPolicy(config);
}

// Records of the sketch before the padding rule (pad_inputs off: no pad
// decision) on C2D, whose input is read under padding guards.
TEST(SeedRealignTest, OlderRecordGetsTheMissingDecisionAndNeighbouringMutations) {
  ir::PrimFunc f = Workload("c2d_resnet_3x3");
  auto old_policy = Policy(false), policy = Policy(true);
  EvolutionarySearch old_search(f, old_policy.get(), SearchOptions{}, 5);
  SearchOptions tile_steps;  // one tile moved per mutation: the rest of the decisions stay
  tile_steps.tile_mutation_share = 1.0;
  EvolutionarySearch search(f, policy.get(), tile_steps, 6);
  int neighbours = 0, unrelated_without = 0, children = 0;
  for (int i = 0; i < 6; ++i) {
    auto record = old_search.Sample();
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    auto seed = search.Replay(record->trace);
    ASSERT_TRUE(seed.ok()) << seed.status().ToString();
    Candidate realigned = search.Realign(*seed);
    EXPECT_EQ(realigned.hash, seed->hash);
    ASSERT_EQ(Decisions(realigned.trace).size(), Decisions(record->trace).size() + 1) << realigned.trace.ToText();
    // The realigned trace replays to the same program, and the sketch re-run
    // with its decisions gives it again (what Mutate starts from).
    auto replayed = search.Replay(realigned.trace);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    EXPECT_EQ(replayed->hash, seed->hash);
    for (int m = 0; m < 4; ++m) {
      auto child = search.Mutate(realigned);
      auto stray = search.Mutate(*seed);
      if (!child.ok() || !stray.ok()) continue;
      ++children;
      neighbours += DecisionsChanged(realigned.trace, child->trace) == 1;
      unrelated_without += DecisionsChanged(realigned.trace, stray->trace) > 1;
    }
  }
  EXPECT_EQ(search.realigned_seeds(), 6);
  EXPECT_EQ(search.unaligned_seeds(), 0);
  ASSERT_GE(children, 16);
  // Every child of a realigned record differs from it in the one tile moved.
  EXPECT_EQ(neighbours, children);
  // Without realignment the old decisions meet the wrong sampling calls: most
  // children are other programs altogether (what this guards against).
  EXPECT_GE(unrelated_without, children / 2);
}

// A record of a sketch with a decision the current one does not read (the
// padding rule's, with the guards kept) loses it.
TEST(SeedRealignTest, RecordWithAnExtraDecisionLosesIt) {
  ir::PrimFunc f = Workload("c2d_resnet_3x3");
  auto padding_policy = Policy(true), policy = Policy(false);
  EvolutionarySearch padding_search(f, padding_policy.get(), SearchOptions{}, 7);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 8);
  int realigned_records = 0;
  for (int i = 0; i < 24 && realigned_records < 4; ++i) {
    auto record = padding_search.Sample();
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    if (record->trace.ToText().find("pad_input(") != std::string::npos) continue;  // not in the current space
    auto seed = search.Replay(record->trace);
    ASSERT_TRUE(seed.ok()) << seed.status().ToString();
    Candidate realigned = search.Realign(*seed);
    EXPECT_EQ(realigned.hash, seed->hash);
    EXPECT_EQ(Decisions(realigned.trace).size() + 1, Decisions(record->trace).size()) << realigned.trace.ToText();
    ++realigned_records;
  }
  EXPECT_EQ(realigned_records, 4);
}

// A record of the current sketch keeps its trace and counts as neither; a
// program no single edit of the decisions explains (one loop split by a
// sampled tile, which the sketch never gives alone) comes back unchanged and
// is counted once however often it seeds; the default schedule has no
// decision to line up and is not counted.
TEST(SeedRealignTest, CurrentRecordsAndUnexplainedProgramsAreLeftAlone) {
  ir::PrimFunc f = Workload("c2d_resnet_3x3");
  auto policy = Policy(true);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 9);
  for (int i = 0; i < 4; ++i) {
    auto record = search.Sample();
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    EXPECT_EQ(search.Realign(*record).trace.ToText(), record->trace.ToText());
  }
  EXPECT_EQ(search.realigned_seeds(), 0);
  EXPECT_EQ(search.unaligned_seeds(), 0);

  Schedule by_hand(f, 1);
  auto block = by_hand.GetBlock("out");
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  auto loops = by_hand.GetLoops(*block);
  ASSERT_TRUE(loops.ok() && !loops->empty()) << loops.status().ToString();
  auto tile = by_hand.SamplePerfectTile(loops->front(), 2, 64);
  ASSERT_TRUE(tile.ok()) << tile.status().ToString();
  ASSERT_TRUE(by_hand.Split(loops->front(), std::vector<Factor>(tile->begin(), tile->end())).ok());
  auto unexplained = search.Replay(by_hand.trace());
  ASSERT_TRUE(unexplained.ok()) << unexplained.status().ToString();
  auto default_program = search.Replay(Trace{});
  ASSERT_TRUE(default_program.ok()) << default_program.status().ToString();
  for (int again = 0; again < 2; ++again) {
    EXPECT_EQ(search.Realign(*unexplained).trace.ToText(), by_hand.trace().ToText());
    Candidate same = search.Realign(*default_program);
    EXPECT_EQ(same.trace.size(), 0u);
    EXPECT_EQ(same.hash, default_program->hash);
  }
  EXPECT_EQ(search.realigned_seeds(), 0);
  EXPECT_EQ(search.unaligned_seeds(), 1);
}

}  // namespace
}  // namespace tunefarm::tuner
