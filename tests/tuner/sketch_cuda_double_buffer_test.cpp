// The GPU sketch rules' double-buffered stage (sketch_cuda.h, rule 2): where
// the outer reduction tiles make two stages or more, a sampled decision in
// the trace annotates the stage loop (the outer reduction loops fused) with
// kDoubleBufferAnnotation. Drawn programs of that kind for a GEMM of odd
// sizes, the dense layer with its epilogue and a 3x3 convolution, shrunk,
// lower to doubled shared buffers and compute what the default program
// computes in the interpreter; their traces replay (text included); at full
// size NVRTC compiles them for sm_80 and sm_90; the doubled tiles stay
// within the shared-memory knob; the knob off draws none.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "../compiler/codegen/cuda/cuda_test_util.h"
#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

constexpr std::string_view kOddGemm = R"(
workload gemm(M = 17, N = 33, K = 100) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
)";

std::string Workload(const std::string& name) { return std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf"; }

ir::PrimFunc FullSize(const std::string& name) {
  std::ifstream in(Workload(name));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok());
  return *f;
}

bool Doubled(const ir::PrimFunc& scheduled) {
  bool found = false;
  ir::PostOrderVisit(scheduled.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kFor) {
      found |= static_cast<const ir::For*>(n)->annotations.count(ir::kDoubleBufferAnnotation) > 0;
    }
  });
  return found;
}

// Shared buffers of a lowered program: (count, of them with a leading 2, bytes).
struct SharedSummary {
  int buffers = 0, doubled = 0;
  int64_t bytes = 0;
};

SharedSummary Shared(const ir::PrimFunc& lowered) {
  SharedSummary s;
  ir::PostOrderVisit(lowered.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kAllocate) return;
    const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
    if (b->scope != ir::MemoryScope::kShared) return;
    ++s.buffers;
    s.doubled += !b->shape.empty() && b->shape[0] == 2;
    s.bytes += b->size_bytes();
  });
  return s;
}

CudaSketchConfig ShrunkConfig() {
  CudaSketchConfig c;
  c.min_threads_per_block = 1;
  return c;
}

TEST(CudaSketchDoubleBufferTest, DrawnDoubleBufferedProgramsComputeTheSame) {
  struct Case {
    std::string name;
    ir::PrimFunc f;
  };
  std::vector<Case> cases = {{"gemm 17x33x100", testing::LowerWithOverrides(kOddGemm, {})},
                             {"gmm_1024 shrunk", testing::ShrunkDefault(Workload("gmm_1024"))},
                             {"dense_bias_relu shrunk", testing::ShrunkDefault(Workload("dense_bias_relu"))},
                             {"c2d_resnet_3x3 shrunk", testing::ShrunkDefault(Workload("c2d_resnet_3x3"))}};
  auto policy = MakeCudaSketchPolicy(ShrunkConfig());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    int doubled = 0, plain = 0;
    for (uint64_t seed = 0; seed < 400 && (doubled < 4 || plain < 1); ++seed) {
      Schedule sch(c.f, seed);
      if (!policy->Apply(sch).ok()) continue;
      const bool is_doubled = Doubled(sch.func());
      if (is_doubled ? doubled >= 4 : plain >= 1) continue;
      ++(is_doubled ? doubled : plain);
      auto lowered = cuda::LowerForCuda(sch.func());
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(sch.func());
      const SharedSummary shared = Shared(*lowered);
      if (is_doubled) {
        EXPECT_GT(shared.doubled, 0) << ir::ToString(*lowered);
        EXPECT_EQ(shared.doubled, shared.buffers) << ir::ToString(*lowered);
        EXPECT_NE(sch.trace().ToText().find(ir::kDoubleBufferAnnotation), std::string::npos);
      } else {
        EXPECT_EQ(shared.doubled, 0) << ir::ToString(*lowered);
      }
      testing::ExpectSameAsDefault(c.f, *lowered, /*jit=*/false);
      auto module = cuda::GenerateCuda(*lowered);
      EXPECT_TRUE(module.ok()) << module.status().ToString();
      // The trace replays, through its text too (what a worker receives).
      auto parsed = Trace::Parse(sch.trace().ToText());
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      Schedule replayed(c.f, seed + 1000);
      ASSERT_TRUE(parsed->ApplyTo(replayed).ok());
      EXPECT_EQ(ir::ToString(replayed.func()), ir::ToString(sch.func()));
    }
    EXPECT_EQ(doubled, 4) << "too few double-buffered draws";
    EXPECT_EQ(plain, 1) << "too few single-buffered draws";
  }
}

TEST(CudaSketchDoubleBufferTest, FullSizeDoubleBufferedProgramsCompileWithNvrtc) {
  TF_SKIP_WITHOUT_NVRTC();
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(config->double_buffer);
  auto policy = MakeCudaSketchPolicy(*config);
  for (const char* name : {"gmm_1024", "dense_bias_relu", "c2d_resnet_3x3"}) {
    SCOPED_TRACE(name);
    const ir::PrimFunc f = FullSize(name);
    int compiled = 0;
    for (uint64_t seed = 0; seed < 200 && compiled < 1; ++seed) {
      Schedule sch(f, seed);
      if (!policy->Apply(sch).ok() || !Doubled(sch.func())) continue;
      auto lowered = cuda::LowerForCuda(sch.func());
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << sch.trace().ToText();
      EXPECT_LE(Shared(*lowered).bytes, config->max_shared_bytes);
      auto module = cuda::GenerateCuda(*lowered);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      EXPECT_TRUE(::tunefarm::testing::CompilesForGpus(*module)) << sch.trace().ToText();
      ++compiled;
    }
    EXPECT_EQ(compiled, 1);
  }
}

TEST(CudaSketchDoubleBufferTest, DoubledTilesStayWithinTheSharedMemoryKnob) {
  CudaSketchConfig config;
  config.max_shared_bytes = 16 * 1024;
  auto policy = MakeCudaSketchPolicy(config);
  const ir::PrimFunc f = FullSize("gmm_1024");
  int doubled = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    EXPECT_LE(Shared(*lowered).bytes, config.max_shared_bytes) << sch.trace().ToText();
    doubled += Doubled(sch.func());
  }
  EXPECT_GT(doubled, 0);
}

TEST(CudaSketchDoubleBufferTest, TheKnobOffDrawsNoDecision) {
  CudaSketchConfig on, off;
  off.double_buffer = false;
  const ir::PrimFunc f = testing::LowerWithOverrides(kOddGemm, {});
  on.min_threads_per_block = off.min_threads_per_block = 1;
  auto with = MakeCudaSketchPolicy(on), without = MakeCudaSketchPolicy(off);
  int doubled_on = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule a(f, seed), b(f, seed);
    if (with->Apply(a).ok()) doubled_on += Doubled(a.func());
    if (without->Apply(b).ok()) {
      EXPECT_FALSE(Doubled(b.func()));
      EXPECT_EQ(b.trace().ToText().find(ir::kDoubleBufferAnnotation), std::string::npos);
    }
  }
  EXPECT_GT(doubled_on, 0);
  // The shipped knobs' file names the key.
  const std::string path = ::testing::TempDir() + "/cuda_no_double_buffer.toml";
  {
    std::ofstream out(path);
    out << "double_buffer = false\n";
  }
  auto loaded = LoadCudaSketchConfig(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->double_buffer);
}

// Workers that do not list the annotation key (from before it) get no
// double-buffered program: the rule set built for them draws none.
TEST(CudaSketchDoubleBufferTest, FollowsWhatWorkersReplay) {
  auto cuda = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  const std::string configs = std::string(TUNEFARM_SOURCE_DIR) + "/configs";
  const std::set<std::string> old_worker = {"split", "annotate", ir::kAutoUnrollMaxStepAnnotation};
  const std::set<std::string> new_worker = {"split", "annotate", ir::kAutoUnrollMaxStepAnnotation,
                                            ir::kDoubleBufferAnnotation};
  auto for_old = MakeSketchPolicy(*cuda, configs, &old_worker);
  auto for_new = MakeSketchPolicy(*cuda, configs, &new_worker);
  ASSERT_TRUE(for_old.ok() && for_new.ok());
  const ir::PrimFunc f = testing::LowerWithOverrides(kOddGemm, {{"M", 64}, {"N", 64}, {"K", 256}});
  int doubled_old = 0, doubled_new = 0, built_old = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule a(f, seed), b(f, seed);
    if ((*for_old)->Apply(a).ok()) {
      ++built_old;
      doubled_old += Doubled(a.func());
    }
    if ((*for_new)->Apply(b).ok()) doubled_new += Doubled(b.func());
  }
  EXPECT_GT(built_old, 0);
  EXPECT_EQ(doubled_old, 0);
  EXPECT_GT(doubled_new, 0);
}

}  // namespace
}  // namespace tunefarm::tuner
