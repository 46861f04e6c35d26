// The CPU rules are parameterised by the target's vector unit, not copied per
// architecture: the vector width and the register tile come from the target
// (AVX-512, AVX2, NEON), a rule-set file may still set them, and the programs
// drawn for an AArch64 target vectorize in NEON's four lanes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

Target MustParse(const std::string& text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

const char* kNeon = "llvm -mtriple=aarch64-linux-gnu";

TEST(SketchVectorUnitTest, DefaultsComeFromTheTarget) {
  struct Case {
    const char* target;
    int64_t lanes;
    int64_t register_vectors;
  };
  for (const Case& c : {Case{kNeon, 4, 4}, Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", 4, 4},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", 8, 3},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64", 4, 3},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", 16, 4}}) {
    const CpuSketchConfig config = CpuSketchDefaultsFor(MustParse(c.target));
    EXPECT_EQ(config.vector_lanes, c.lanes) << c.target;
    EXPECT_EQ(config.max_vector_register_tile, c.register_vectors) << c.target;
    // Everything else is the built-in default, whatever the target.
    EXPECT_EQ(config.spatial_levels, CpuSketchConfig{}.spatial_levels) << c.target;
  }
}

TEST(SketchVectorUnitTest, AFileSetsTheVectorUnitOnlyWhereItSaysSo) {
  const auto dir = std::filesystem::temp_directory_path() / ("tunefarm_vector_unit_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cpu.toml").string();
  std::ofstream(path) << "spatial_levels = 3\n";
  auto kept = LoadCpuSketchConfig(path, CpuSketchDefaultsFor(MustParse(kNeon)));
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->vector_lanes, 4);
  EXPECT_EQ(kept->spatial_levels, 3);
  std::ofstream(path) << "vector_lanes = 8\n";
  auto set = LoadCpuSketchConfig(path, CpuSketchDefaultsFor(MustParse(kNeon)));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->vector_lanes, 8);
  EXPECT_EQ(set->max_vector_register_tile, 4);
  std::filesystem::remove_all(dir);
}

// Vectorized loop extents over `n` programs the shipped rules draw for `target`.
std::map<int64_t, int> DrawnVectorExtents(const ir::PrimFunc& f, const Target& target, int n) {
  auto policy = MakeSketchPolicy(target, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  EvolutionarySearch search(f, policy->get(), SearchOptions{}, /*seed=*/11);
  std::map<int64_t, int> histogram;
  for (int i = 0; i < n; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) continue;
    ir::PostOrderVisit(c->lowered.body, [&](const ir::IRNode* node) {
      if (node->kind != ir::IRNodeKind::kFor) return;
      const auto* loop = static_cast<const ir::For*>(node);
      if (loop->kind != ir::ForKind::kVectorized) return;
      if (const auto* imm = loop->extent.as<ir::IntImm>()) ++histogram[imm->value];
    });
  }
  return histogram;
}

// A dense layer 12 wide: a multiple of NEON's 4 lanes, not of AVX-512's 16.
TEST(SketchVectorUnitTest, NeonProgramsVectorizeInFourLanes) {
  const ir::PrimFunc f = testing::LowerWithOverrides(testing::kDenseLayer, {{"M", 24}, {"N", 12}, {"K", 32}});
  const std::map<int64_t, int> neon = DrawnVectorExtents(f, MustParse(kNeon), 60);
  const std::map<int64_t, int> avx512 =
      DrawnVectorExtents(f, MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4"), 60);
  ASSERT_FALSE(neon.empty());
  // NEON: whole 4-lane vectors in the register tile; never AVX-512's 16-lane
  // tile padded out of 12.
  EXPECT_GT(neon.count(4) ? neon.at(4) : 0, 0);
  EXPECT_EQ(neon.count(16), 0u);
  // The same workload for AVX-512 reaches 16 lanes only by padding 12 to 16.
  EXPECT_GT(avx512.count(16) ? avx512.at(16) : 0, 0);
}

// Every drawn NEON program compiles for AArch64 (run under emulation in the
// worker's tests, where a loader exists for the board's objects).
TEST(SketchVectorUnitTest, DrawnNeonProgramsCompileForAArch64) {
  const Target neon = MustParse(kNeon);
  auto policy = MakeSketchPolicy(neon, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  const ir::PrimFunc f = testing::LowerWithOverrides(testing::kDenseLayer, {{"M", 24}, {"N", 12}, {"K", 32}});
  EvolutionarySearch search(f, policy->get(), SearchOptions{}, /*seed=*/5);
  for (int i = 0; i < 20; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto object = EmitObject(c->lowered, neon);
    ASSERT_TRUE(object.ok()) << c->trace.ToText() << "\n" << object.status().ToString();
    EXPECT_EQ(object->substr(0, 4), "\x7f" "ELF");
  }
}

// The last decision of the register tile along the vector axis: the
// sample_perfect_tile of the loop split off whole `lanes`-wide vectors
// (split(l, [-1, lanes])); 0 when the program has none.
int64_t VectorsPerRegisterTile(const Trace& trace, int64_t lanes) {
  std::string vector_count_loop;
  for (const Instruction& in : trace.instructions()) {
    if (in.kind == InstructionKind::kSplit && in.args.size() == 2 && in.args[1].kind == TraceArg::Kind::kList &&
        in.args[1].list.size() == 2 && in.args[1].list[1].value == lanes && in.args[1].list[0].value == -1) {
      vector_count_loop = in.outputs[0];
    }
    if (in.kind == InstructionKind::kSamplePerfectTile && !vector_count_loop.empty() &&
        in.args[0].ref == vector_count_loop && !in.decision.empty()) {
      return in.decision.back();
    }
  }
  return 0;
}

// A 1x1 convolution to 24 output channels (MobileNet-V2's projections) on
// AVX2: the channels are 3 vectors of 8 lanes, and the register tile may
// hold all three (12 accumulators with 4 pixels, 3 weight vectors and a
// broadcast: 16 registers). With at most 2 vectors per tile it held one,
// and its kernels stayed at half of oneDNN's speed. Drawn programs with the
// 3-vector tile compute what the default program does, at an odd width.
TEST(SketchVectorUnitTest, Avx2RegisterTilesHoldThreeVectorsOf24Channels) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/mobilenet_v2_b1_conv1x1_c144_k24_h56_s1.tf");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const ir::PrimFunc f = testing::LowerWithOverrides(text, {{"C", 16}, {"H", 6}, {"W", 7}});
  const Target avx2 = MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  auto policy = MakeSketchPolicy(avx2, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EvolutionarySearch search(f, policy->get(), SearchOptions{}, /*seed=*/3);
  int three = 0;
  for (int i = 0; i < 200 && three < 4; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (VectorsPerRegisterTile(c->trace, 8) != 3) continue;
    ++three;
    SCOPED_TRACE(c->trace.ToText());
    testing::ExpectSameAsDefault(f, c->func, /*jit=*/true);
  }
  EXPECT_EQ(three, 4) << "the rules drew fewer than 4 programs with a 3-vector register tile in 200";
}

// Where 2-vector tiles divide the axis (48 channels: 6 vectors of 8), AVX2
// keeps them as the widest: a 3-vector choice beside them thinned their
// samples and cost dense+bias+relu's 150-trial kernels 7.6 % at one thread.
TEST(SketchVectorUnitTest, Avx2KeepsTwoVectorTilesWhereTheyDivideTheAxis) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/mobilenet_v2_b1_conv1x1_c144_k24_h56_s1.tf");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const ir::PrimFunc f = testing::LowerWithOverrides(text, {{"C", 16}, {"K", 48}, {"H", 6}, {"W", 7}});
  auto policy = MakeSketchPolicy(MustParse("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"),
                                 std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EvolutionarySearch search(f, policy->get(), SearchOptions{}, /*seed=*/3);
  std::map<int64_t, int> tiles;
  for (int i = 0; i < 120; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ++tiles[VectorsPerRegisterTile(c->trace, 8)];
  }
  EXPECT_GT(tiles[2], 0);
  EXPECT_EQ(tiles.count(3), 0u);
}

}  // namespace
}  // namespace tunefarm::tuner
