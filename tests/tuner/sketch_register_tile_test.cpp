// The register tile floor (register_tile_floor): sampled kernels keep at
// least that many accumulator vectors in their innermost spatial tiles where
// the axes allow, never fewer than they can; the trace records the bound, it
// replays, and a mutation keeps to it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sketch_test_util.h"
#include "tunefarm/tuner/mutation.h"

namespace tunefarm::tuner::testing {
namespace {


// The innermost factors of the trace's spatial tiles of the dense block,
// vector axis first: (vectors along j, rows along i).
std::pair<int64_t, int64_t> RegisterTile(const Trace& trace) {
  std::vector<std::vector<int64_t>> tiles;
  for (const Instruction& inst : trace.instructions()) {
    if (inst.kind == InstructionKind::kSamplePerfectTile && inst.decision.size() == 4) tiles.push_back(inst.decision);
  }
  // i is sampled first, then j's vectors.
  EXPECT_GE(tiles.size(), 2u);
  if (tiles.size() < 2) return {0, 0};
  return {tiles[1].back(), tiles[0].back()};
}

TEST(SketchRegisterTileTest, KernelsHoldAtLeastTheFloor) {
  CpuSketchConfig config;
  config.register_tile_floor = 4;
  auto policy = MakeCpuSketchPolicy(config);
  ir::PrimFunc f = LowerWithOverrides(kDenseLayer, {{"M", 24}, {"N", 64}, {"K", 32}});
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 3);
  for (int i = 0; i < 24; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto [vectors, rows] = RegisterTile(c->trace);
    EXPECT_GE(vectors * rows, 4) << c->trace.ToText();
    EXPECT_NE(c->trace.ToText().find("min_innermost="), std::string::npos);
    if (i % 6 == 0) ExpectSameAsDefault(f, c->func, /*jit=*/true);
    // The bound is part of the trace text, and the text replays to the same trace.
    auto parsed = Trace::Parse(c->trace.ToText());
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    Schedule fresh(f, 99);
    ASSERT_TRUE(parsed->ApplyTo(fresh).ok());
    EXPECT_EQ(fresh.trace().ToText(), c->trace.ToText());
    // Mutations keep to the bound: a mutated tile decision is a valid one.
    for (const Instruction& inst : c->trace.instructions()) {
      if (inst.kind != InstructionKind::kSamplePerfectTile) continue;
      std::mt19937_64 rng{uint64_t(i)};
      auto moved = NeighbourDecision(inst, rng);
      if (!moved) continue;
      int64_t floor = 1;
      for (const TraceArg& a : inst.args) {
        if (a.key == "min_innermost") floor = a.value;
      }
      EXPECT_GE(moved->back(), floor);
    }
  }
}

TEST(SketchRegisterTileTest, AxesThatCannotReachItTakeWhatTheyCan) {
  CpuSketchConfig config;
  config.register_tile_floor = 8;
  auto policy = MakeCpuSketchPolicy(config);
  // One row (a batch-1 layer) and one vector: the tile can hold one vector only.
  ir::PrimFunc f = LowerWithOverrides(kDenseLayer, {{"M", 1}, {"N", 16}, {"K", 32}});
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 3);
  for (int i = 0; i < 8; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->trace.ToText().find("min_innermost="), std::string::npos) << c->trace.ToText();
  }
}

TEST(SketchRegisterTileTest, FloorOneLeavesTheTracesAsTheyWere) {
  ir::PrimFunc f = LowerWithOverrides(kDenseLayer, {{"M", 24}, {"N", 64}, {"K", 32}});
  CpuSketchConfig off;
  off.register_tile_floor = 1;
  for (const std::string& text : SampleTraces(f, off, 8, 4)) {
    EXPECT_EQ(text.find("min_innermost="), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace tunefarm::tuner::testing
