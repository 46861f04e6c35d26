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
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", 8, 2},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64", 4, 2},
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

}  // namespace
}  // namespace tunefarm::tuner
