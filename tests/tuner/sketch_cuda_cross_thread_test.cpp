// The GPU sketch rules' cross-thread reduction (sketch_cuda_cross_thread.h):
// drawn for softmax, layer norm, the matrix norm and batch-1 dense at odd
// sizes (rows of 77 and 1000), the programs include the cross-thread form
// beside the tiled one, every program lowered for CUDA computes what the
// default program computes (through the interpreter, a block's threads in
// phases between barriers), and the cross-thread ones compile with NVRTC for
// sm_80 and sm_90.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "../compiler/codegen/cuda/cuda_test_util.h"
#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

constexpr uint64_t kDraws = 40;    // per workload
constexpr int kCompiled = 2;       // cross-thread programs per workload compiled with NVRTC

std::string SuiteText(const std::string& name) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Extents of the reductions of the program split across the threads of a
// block: loops bound to threadIdx.x that a reduction block reduces over.
std::vector<int64_t> CrossThreadExtents(const ir::PrimFunc& f) {
  std::vector<int64_t> extents;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* node) {
    if (node->kind != ir::IRNodeKind::kFor) return;
    const auto* loop = static_cast<const ir::For*>(node);
    if (loop->thread_tag != "threadIdx.x") return;
    bool reduces = false;
    ir::PostOrderVisit(loop->body, [&](const ir::IRNode* inner) {
      if (inner->kind != ir::IRNodeKind::kBlock) return;
      for (const ir::IterVar& iv : static_cast<const ir::Block*>(inner)->iter_vars) {
        reduces |= iv.kind == ir::IterKind::kReduce && ir::UsesVar(iv.binding, loop->loop_var.get());
      }
    });
    const int64_t* e = ir::AsConstInt(loop->extent);
    if (reduces) extents.push_back(e ? *e : -1);
  });
  return extents;
}

int CrossThreadLoops(const ir::PrimFunc& f) { return int(CrossThreadExtents(f).size()); }

struct Case {
  std::string name;
  std::string text;
  std::map<std::string, int64_t> overrides;
};

std::vector<Case> Cases() {
  return {
      {"softmax 4x77", SuiteText("softmax"), {{"M", 4}, {"N", 77}}},
      {"softmax 3x1000", SuiteText("softmax"), {{"M", 3}, {"N", 1000}}},
      {"layer_norm 5x77", SuiteText("layer_norm"), {{"M", 5}, {"N", 77}}},
      {"layer_norm 2x1000", SuiteText("layer_norm"), {{"M", 2}, {"N", 1000}}},
      {"nrm 2x7x11", SuiteText("nrm"), {{"B", 2}, {"M", 7}, {"N", 11}}},
      {"nrm 1x40x25", SuiteText("nrm"), {{"B", 1}, {"M", 40}, {"N", 25}}},
      {"dense 1x24x1000", std::string(testing::kDenseLayer), {{"M", 1}, {"N", 24}, {"K", 1000}}},
      {"dense 1x9x77", std::string(testing::kDenseLayer), {{"M", 1}, {"N", 9}, {"K", 77}}},
  };
}

CudaSketchConfig TestConfig() {
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  CudaSketchConfig c = config.ok() ? *config : CudaSketchConfig{};
  c.min_threads_per_block = 1;  // the tiled alternative's work is small here
  return c;
}

TEST(CudaSketchCrossThreadTest, LongReductionsGetTheCrossThreadFormAndComputeTheSame) {
  auto policy = MakeCudaSketchPolicy(TestConfig());
  std::string why_not;
  const bool nvrtc = cuda::NvrtcAvailable(&why_not);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const ir::PrimFunc f = testing::LowerWithOverrides(c.text, c.overrides);
    ASSERT_FALSE(HasFailure());
    std::set<std::string> seen;
    int programs = 0, cross_thread = 0, compiled = 0;
    for (uint64_t seed = 0; seed < kDraws; ++seed) {
      Schedule sch(f, seed);
      if (!policy->Apply(sch).ok()) continue;  // limits not met: the search draws again
      const std::string trace = sch.trace().ToText();
      if (!seen.insert(trace).second) continue;
      SCOPED_TRACE(trace);
      ++programs;
      const bool across = CrossThreadLoops(sch.func()) > 0;
      cross_thread += across;
      auto lowered = cuda::LowerForCuda(sch.func());
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(sch.func());
      testing::ExpectSameAsDefault(f, *lowered, /*jit=*/false);
      auto module = cuda::GenerateCuda(*lowered);
      ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*lowered);
      Schedule replayed(f, seed + 1000);
      ASSERT_TRUE(sch.trace().ApplyTo(replayed).ok());
      EXPECT_EQ(ir::ToString(replayed.func()), ir::ToString(sch.func()));
      if (across && nvrtc && compiled < kCompiled) {
        ++compiled;
        EXPECT_TRUE(::tunefarm::testing::CompilesForGpus(*module));
      }
      if (HasFailure()) return;  // one wrong program, shown with its trace, is enough
    }
    EXPECT_GT(cross_thread, 0) << programs << " programs, none reduces across threads";
    EXPECT_LT(cross_thread, programs) << "the tiled form is no longer drawn";
  }
  if (!nvrtc) GTEST_SKIP() << "interpreted, not compiled: NVRTC is not available: " << why_not;
}

TEST(CudaSketchCrossThreadTest, ThreadCountsArePowersOfTwoWithinTheLimits) {
  CudaSketchConfig config = TestConfig();
  config.max_threads_per_block = 256;
  auto policy = MakeCudaSketchPolicy(config);
  // A row of 77: 32, 64 or 128 threads (77 rounded up), never 256.
  const ir::PrimFunc f = testing::LowerWithOverrides(SuiteText("softmax"), {{"M", 4}, {"N", 77}});
  std::set<int64_t> drawn;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    auto module = cuda::GenerateCuda(*lowered);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    if (CrossThreadLoops(sch.func()) == 0) continue;
    for (const cuda::CudaLaunch& launch : module->launches) {
      EXPECT_LE(launch.block[0] * launch.block[1] * launch.block[2], 256);
    }
    for (int64_t t : CrossThreadExtents(sch.func())) drawn.insert(t);
  }
  for (int64_t t : drawn) EXPECT_TRUE(t == 32 || t == 64 || t == 128) << t;
  EXPECT_FALSE(drawn.empty()) << "no cross-thread program in 60 draws";
}

TEST(CudaSketchCrossThreadTest, ShortReductionsAndLargeSpatialWorkKeepTheTiling) {
  auto policy = MakeCudaSketchPolicy(TestConfig());
  // 16 x 16 outputs of a reduction of 8 (short), and 128 x 128 outputs of
  // 64 (more than 64 outputs per reduction element): tiled only.
  for (const auto& overrides : {std::map<std::string, int64_t>{{"M", 16}, {"N", 16}, {"K", 8}},
                                std::map<std::string, int64_t>{{"M", 128}, {"N", 128}, {"K", 64}}}) {
    const ir::PrimFunc f = testing::LowerWithOverrides(testing::kDenseLayer, overrides);
    int programs = 0;
    for (uint64_t seed = 0; seed < 30; ++seed) {
      Schedule sch(f, seed);
      if (!policy->Apply(sch).ok()) continue;
      ++programs;
      EXPECT_EQ(CrossThreadLoops(sch.func()), 0) << ir::ToString(sch.func());
    }
    EXPECT_GT(programs, 0);
  }
}

TEST(CudaSketchCrossThreadTest, TheKnobsFileTurnsItOffAndSetsItsBounds) {
  const std::string path = ::testing::TempDir() + "/cuda_cross_thread.toml";
  {
    std::ofstream out(path);
    out << "cross_thread_reduction = false\ncross_thread_min_reduce = 500\ncross_thread_max_outputs_per_reduce = 2\n";
  }
  auto config = LoadCudaSketchConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_FALSE(config->cross_thread_reduction);
  EXPECT_EQ(config->cross_thread_min_reduce, 500);
  EXPECT_EQ(config->cross_thread_max_outputs_per_reduce, 2);
  config->min_threads_per_block = 1;
  const ir::PrimFunc f = testing::LowerWithOverrides(SuiteText("softmax"), {{"M", 4}, {"N", 77}});
  for (bool on : {false, true}) {
    config->cross_thread_reduction = on;
    config->cross_thread_min_reduce = 64;
    auto policy = MakeCudaSketchPolicy(*config);
    int cross_thread = 0;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      Schedule sch(f, seed);
      if (policy->Apply(sch).ok()) cross_thread += CrossThreadLoops(sch.func()) > 0;
    }
    if (on) {
      EXPECT_GT(cross_thread, 0);
    } else {
      EXPECT_EQ(cross_thread, 0);
    }
  }
  // Too short for a minimum of 500.
  config->cross_thread_reduction = true;
  config->cross_thread_min_reduce = 500;
  auto policy = MakeCudaSketchPolicy(*config);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Schedule sch(f, seed);
    if (policy->Apply(sch).ok()) EXPECT_EQ(CrossThreadLoops(sch.func()), 0);
  }
}

}  // namespace
}  // namespace tunefarm::tuner
