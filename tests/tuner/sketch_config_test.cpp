// Rule-set files (configs/sketch/cpu.toml): the shipped file loads, every key
// is read, and each mistake a user can make in the file is an error that
// names the file and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

class SketchConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_sketch_config_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "sketch");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text) {
    std::string path = (dir_ / "sketch" / "cpu.toml").string();
    std::ofstream(path) << text;
    return path;
  }

  fs::path dir_;
};

TEST_F(SketchConfigTest, ShippedRuleSetLoads) {
  auto c = LoadCpuSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cpu.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->spatial_levels, 4);
  EXPECT_EQ(c->vector_lanes, 16);
  EXPECT_TRUE(c->register_tile_needs_reuse);
  EXPECT_TRUE(c->pad_inputs);
  EXPECT_EQ(c->pad_root_min_reuse, 32);
  EXPECT_EQ(c->guarded_unroll_min_step, 64);
  EXPECT_TRUE(c->stride_classes_outer);
  EXPECT_TRUE(c->pad_vector_axis);
  EXPECT_DOUBLE_EQ(c->pad_axis_max_growth, 2.0);
  EXPECT_TRUE(c->stride_phases);
  // The shipped rules floor the register tile; the built-in default does not.
  EXPECT_EQ(c->register_tile_floor, 4);
  EXPECT_EQ(CpuSketchConfig{}.register_tile_floor, 1);
}

TEST_F(SketchConfigTest, EveryKeyIsRead) {
  std::string path = Write(
      "spatial_levels = 3\nreduce_levels = 1\nmax_vector_lanes = 32\nmax_inner_tile = 8\n"
      "max_reduce_inner_tile = 16\nunroll_steps = [0, 64]\ncache_write = false\ninline_elementwise = false\n"
      "vector_lanes = 8\nmax_vector_register_tile = 2\nrfactor_max_spatial = 0\nrfactor_min_reduction = 4\n"
      "register_tile_needs_reuse = false\npad_inputs = false\npad_root_min_reuse = 7\n"
      "guarded_unroll_min_step = 16\nstride_classes_outer = false\npad_vector_axis = false\n"
      "pad_axis_max_growth = 1.5\nstride_phases = false\nregister_tile_floor = 6\n");
  auto c = LoadCpuSketchConfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->spatial_levels, 3);
  EXPECT_EQ(c->reduce_levels, 1);
  EXPECT_EQ(c->max_vector_lanes, 32);
  EXPECT_EQ(c->max_inner_tile, 8);
  EXPECT_EQ(c->max_reduce_inner_tile, 16);
  EXPECT_EQ(c->unroll_steps, (std::vector<int64_t>{0, 64}));
  EXPECT_FALSE(c->cache_write);
  EXPECT_FALSE(c->inline_elementwise);
  EXPECT_EQ(c->vector_lanes, 8);
  EXPECT_EQ(c->max_vector_register_tile, 2);
  EXPECT_EQ(c->rfactor_max_spatial, 0);
  EXPECT_EQ(c->rfactor_min_reduction, 4);
  EXPECT_FALSE(c->register_tile_needs_reuse);
  EXPECT_FALSE(c->pad_inputs);
  EXPECT_EQ(c->pad_root_min_reuse, 7);
  EXPECT_EQ(c->guarded_unroll_min_step, 16);
  EXPECT_FALSE(c->stride_classes_outer);
  EXPECT_FALSE(c->pad_vector_axis);
  EXPECT_DOUBLE_EQ(c->pad_axis_max_growth, 1.5);
  EXPECT_FALSE(c->stride_phases);
  EXPECT_EQ(c->register_tile_floor, 6);
}

TEST_F(SketchConfigTest, MistakesNameTheFileAndKey) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"spatial_levels = 4\nregister_tile_needs_reuse = \"yes\"\n", "'register_tile_needs_reuse' must be true or false"},
      {"cache_writes = true\n", "unknown key 'cache_writes'"},
      {"spatial_levels = 9\n", "'spatial_levels' must be an integer in [2, 6]"},
      {"unroll_steps = [0, -16]\n", "'unroll_steps' must hold non-negative integers"},
      {"unroll_steps = []\n", "'unroll_steps' must be a non-empty array of integers"},
      {"unroll_steps = [0, 16.0]\n", "'unroll_steps' must hold non-negative integers"},
      {"pad_root_min_reuse = -1\n", "'pad_root_min_reuse' must be an integer in [0, "},
      {"pad_inputs = 1\n", "'pad_inputs' must be true or false"},
      {"guarded_unroll_min_step = -64\n", "'guarded_unroll_min_step' must be an integer in [0, "},
      {"stride_classes_outer = \"yes\"\n", "'stride_classes_outer' must be true or false"},
      {"pad_axis_max_growth = 0.5\n", "'pad_axis_max_growth' must be a number in [1, 16]"},
      {"pad_axis_max_growth = \"two\"\n", "'pad_axis_max_growth' must be a number in [1, 16]"},
      {"register_tile_floor = 0\n", "'register_tile_floor' must be an integer in [1, 64]"},
      {"stride_phases = 1\n", "'stride_phases' must be true or false"},
      {"spatial_levels = 4.0\n", "'spatial_levels' must be an integer in [2, 6]"},
      {"spatial_levels = \n", "cpu.toml:1:"},
  };
  for (const Case& c : cases) {
    std::string path = Write(c.text);
    auto loaded = LoadCpuSketchConfig(path);
    ASSERT_FALSE(loaded.ok()) << c.text;
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(loaded.status().message().find(path.substr(0, path.size() - 9)), std::string::npos)
        << loaded.status().ToString();
    EXPECT_NE(loaded.status().message().find(c.message), std::string::npos) << loaded.status().ToString();
  }
  // Through the policy factory, as `tunefarm tune` reads it.
  Write("vector_lanes = 0\n");
  auto policy = MakeSketchPolicy(Target::Host(), dir_.string());
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("'vector_lanes' must be an integer in [1, 256]"), std::string::npos)
      << policy.status().ToString();
}

}  // namespace
}  // namespace tunefarm::tuner
