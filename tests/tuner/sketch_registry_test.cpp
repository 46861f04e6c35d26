// Sketch rules per target kind (sketch_registry.h): `llvm` gets the CPU rules
// and its knobs' file; a kind without rules is an InvalidArgument that names
// it and the registered kinds; a registered kind's constructor gets its own
// file's path when the config folder has it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "sketch_test_util.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/sketch.h"
#include "tunefarm/tuner/sketch_cuda.h"
#include "tunefarm/tuner/sketch_registry.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

// An AVX-512 x86 target: the shipped cpu.toml's 16 f32 lanes, whatever the
// host running the test has.
Target Avx512Target() {
  auto t = Target::Parse("llvm -mtriple=x86_64-linux-gnu -mattr=+avx2,+avx512f");
  EXPECT_TRUE(t.ok());
  return t.ok() ? *t : Target::Host();
}

TEST(SketchRegistryTest, TheCpuRulesServeLlvm) {
  EXPECT_EQ(SketchRegistry::BuiltIn().Kinds(), (std::vector<std::string>{"cuda", "llvm"}));
  auto policy = MakeSketchPolicy(Avx512Target(), std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  // The registry's policy is the shipped cpu.toml's rules: the same programs.
  ir::PrimFunc f = testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/c2d_resnet_3x3.tf");
  EvolutionarySearch from_registry(f, policy->get(), SearchOptions{}, 5);
  auto shipped = LoadCpuSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cpu.toml");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  const std::vector<std::string> defaults = testing::SampleTraces(f, *shipped, 5, 6);
  for (const std::string& expected : defaults) {
    auto c = from_registry.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->trace.ToText(), expected);
  }
}

TEST(SketchRegistryTest, AKindWithoutRulesIsNamedWithTheRegisteredOnes) {
  Target arm;
  arm.kind = "arm";  // parses nowhere yet: a kind with no rules
  auto policy = MakeSketchPolicy(arm, "");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(policy.status().message().find("no sketch rules for target kind 'arm'"), std::string::npos)
      << policy.status().ToString();
  EXPECT_NE(policy.status().message().find("(registered: cuda, llvm)"), std::string::npos) << policy.status().ToString();
}

TEST(SketchRegistryTest, CudaTargetsGetTheGpuRulesWithTheShippedKnobs) {
  auto cuda = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  auto policy = MakeSketchPolicy(*cuda, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  auto shipped = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
}

// A rule set that records what its constructor was given.
struct Recorded {
  std::vector<std::string> paths;
  std::vector<bool> replayable;
};

SketchRuleSet RecordingRules(const std::string& file, Recorded* out) {
  SketchRuleSet rules;
  rules.config_file = file;
  rules.make = [out](const Target&, const std::string& path, const std::set<std::string>* replayable)
      -> Result<std::unique_ptr<SketchPolicy>> {
    out->paths.push_back(path);
    out->replayable.push_back(replayable != nullptr);
    return MakeCpuSketchPolicy();
  };
  return rules;
}

TEST(SketchRegistryTest, ARegisteredKindGetsItsOwnFile) {
  const fs::path dir = fs::temp_directory_path() / ("tunefarm_sketch_registry_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sketch");
  std::ofstream(dir / "sketch" / "gpu.toml") << "# knobs\n";

  SketchRegistry registry;
  Recorded gpu, arm;
  ASSERT_TRUE(registry.Register("cuda", RecordingRules("gpu.toml", &gpu)).ok());
  ASSERT_TRUE(registry.Register("arm", RecordingRules("arm.toml", &arm)).ok());
  Status again = registry.Register("cuda", RecordingRules("other.toml", &gpu));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_EQ(registry.Kinds(), (std::vector<std::string>{"arm", "cuda"}));

  auto cuda = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok());
  const std::set<std::string> replayable = {"split"};
  ASSERT_TRUE(registry.Make(*cuda, dir.string(), &replayable).ok());
  ASSERT_TRUE(registry.Make(*cuda, "", nullptr).ok());  // no config folder: the defaults
  EXPECT_EQ(gpu.paths, (std::vector<std::string>{(dir / "sketch" / "gpu.toml").string(), ""}));
  EXPECT_EQ(gpu.replayable, (std::vector<bool>{true, false}));

  Target arm_target = Target::Host();
  arm_target.kind = "arm";
  ASSERT_TRUE(registry.Make(arm_target, dir.string(), nullptr).ok());
  EXPECT_EQ(arm.paths, std::vector<std::string>{""});  // arm.toml is not in the folder

  auto llvm = registry.Make(Avx512Target(), dir.string(), nullptr);
  ASSERT_FALSE(llvm.ok());
  EXPECT_EQ(llvm.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(llvm.status().message().find("'llvm' yet (registered: arm, cuda)"), std::string::npos)
      << llvm.status().ToString();
  fs::remove_all(dir);
}

// The padding and phase rules are off when a measuring worker cannot replay
// pad_input, pad_axis and split_phases.
TEST(SketchRegistryTest, ThePaddingRuleFollowsWhatWorkersReplay) {
  ir::PrimFunc f = testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/dep_3x3_c256_28.tf");
  CpuSketchConfig no_padding;
  no_padding.pad_inputs = false;
  no_padding.pad_vector_axis = false;
  no_padding.stride_phases = false;
  const std::set<std::string> without_pad = {"split"};
  auto policy = MakeSketchPolicy(Avx512Target(), "", &without_pad);
  ASSERT_TRUE(policy.ok());
  EvolutionarySearch search(f, policy->get(), SearchOptions{}, 8);
  const std::vector<std::string> expected = testing::SampleTraces(f, no_padding, 8, 4);
  for (const std::string& text : expected) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->trace.ToText(), text);
  }
  // And DEP's defaults do pad: the two rule sets differ on it.
  EXPECT_NE(testing::SampleTraces(f, CpuSketchConfig{}, 8, 4), expected);
}

}  // namespace
}  // namespace tunefarm::tuner
