// Where the GPU sketch's reductions initialise their accumulators once lowered
// for CUDA: the outer reduction loop holds the shared-memory copy stages
// beside the compute nest, and the init still runs as its own nest in front
// of it (lower/decompose_reduction.h), not as "if (k_o == 0 && ...)" in every
// k iteration's innermost body. Checked on drawn programs of gmm, c2d and
// dense+bias+relu: structurally, through the interpreter (shrunk copies), and
// through NVRTC (full size; skipped where NVRTC is not available).
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

using namespace ir;

std::string WorkloadPath(const std::string& name) {
  return std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

PrimFunc FullSize(const std::string& name) {
  auto w = ParseWorkload(ReadFile(WorkloadPath(name)));
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = w.ok() ? LowerToPrimFunc(*w) : Result<PrimFunc>(w.status());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : PrimFunc{};
}

CudaSketchConfig ShippedConfig() {
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : CudaSketchConfig{};
}

// The scheduled program's reductions: the buffers their inits store, the
// loops their reduction bindings use, and whether any is predicated or split
// over threads (cross-thread reduction: lowered on its own terms).
struct Reductions {
  std::set<const BufferNode*> accumulators;
  std::set<const Variable*> loops;
  bool predicated = false;
  bool cross_thread = false;
};

Reductions ReductionsOf(const PrimFunc& scheduled) {
  Reductions r;
  std::vector<const Block*> blocks;
  PostOrderVisit(scheduled.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kBlock) return;
    const auto* b = static_cast<const Block*>(n);
    if (!b->init.defined()) return;
    blocks.push_back(b);
    r.predicated |= b->predicate.defined();
    PostOrderVisit(b->init, [&](const IRNode* s) {
      if (s->kind == IRNodeKind::kStore) r.accumulators.insert(static_cast<const Store*>(s)->buffer.get());
    });
  });
  PostOrderVisit(scheduled.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kFor) return;
    const auto* f = static_cast<const For*>(n);
    for (const Block* b : blocks) {
      for (const IterVar& iv : b->iter_vars) {
        if (iv.kind != IterKind::kReduce || !UsesVar(iv.binding, f->loop_var.get())) continue;
        r.loops.insert(f->loop_var.get());
        r.cross_thread |= f->kind == ForKind::kThreadBinding;
      }
    }
  });
  return r;
}

// Counts the init stores (into an accumulator, of a value that reads
// nothing) of a lowered program: inside a reduction loop or an if, or not.
class InitPlacement : public IRVisitor {
 public:
  explicit InitPlacement(const Reductions& r) : r_(r) {}
  int inside = 0, outside = 0;

 protected:
  void VisitFor(const For* op) override {
    const bool reduction = r_.loops.count(op->loop_var.get()) > 0;
    enclosing_ += reduction;
    IRVisitor::VisitFor(op);
    enclosing_ -= reduction;
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    ++enclosing_;
    IRVisitor::VisitIfThenElse(op);
    --enclosing_;
  }
  void VisitStore(const Store* op) override {
    bool reads = false;
    PostOrderVisit(Evaluate::Make(op->value), [&](const IRNode* n) { reads |= n->kind == IRNodeKind::kLoad; });
    if (r_.accumulators.count(op->buffer.get()) && !reads) ++(enclosing_ > 0 ? inside : outside);
    IRVisitor::VisitStore(op);
  }

 private:
  const Reductions& r_;
  int enclosing_ = 0;
};

// The init is expected in front of the reduction loops unless the block is
// predicated or reduced across threads.
bool ExpectsHoistedInit(const Reductions& r) { return !r.predicated && !r.cross_thread && !r.accumulators.empty(); }

::testing::AssertionResult InitInFrontOfTheReductionLoops(const PrimFunc& scheduled, const PrimFunc& lowered) {
  InitPlacement placement(ReductionsOf(scheduled));
  placement.Visit(lowered.body);
  if (placement.inside == 0 && placement.outside > 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << placement.inside << " init stores inside a reduction loop or an if, "
                                       << placement.outside << " in front of them\n"
                                       << ToString(lowered);
}

// Draws programs until `wanted` applied ones; `use` gets each.
template <typename Use>
int Draw(const PrimFunc& f, const CudaSketchConfig& config, int wanted, Use use) {
  auto policy = MakeCudaSketchPolicy(config);
  int got = 0;
  for (uint64_t seed = 0; seed < 2000 && got < wanted; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;  // limits not met: the search draws again
    ++got;
    use(sch);
  }
  return got;
}

TEST(CudaSketchInitTest, GmmProgramsInitialiseInFrontOfTheReductionLoops) {
  const PrimFunc f = FullSize("gmm_1024");
  int inside = 0, checked = 0;
  const int got = Draw(f, ShippedConfig(), 50, [&](const Schedule& sch) {
    const Reductions r = ReductionsOf(sch.func());
    if (!ExpectsHoistedInit(r)) return;
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << sch.trace().ToText();
    ++checked;
    auto hoisted = InitInFrontOfTheReductionLoops(sch.func(), *lowered);
    inside += !hoisted;
    EXPECT_TRUE(hoisted) << sch.trace().ToText();
  });
  ASSERT_EQ(got, 50);
  std::cout << "gmm_1024: the init inside the k loop in " << inside << " of " << checked
            << " drawn programs (" << got - checked << " predicated or cross-thread)\n";
  EXPECT_EQ(checked, 50);
}

class CudaSketchInitWorkloadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaSketchInitWorkloadTest, ShrunkProgramsComputeWhatTheDefaultDoes) {
  const std::string path = WorkloadPath(GetParam());
  auto w = ShrinkWorkload(ReadFile(path), path, {}, 1.5e4);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  CudaSketchConfig config = ShippedConfig();
  config.min_threads_per_block = 1;  // shrunk workloads have too little work for a warp per block
  int hoisted = 0;
  const int got = Draw(*f, config, 12, [&](const Schedule& sch) {
    SCOPED_TRACE(sch.trace().ToText());
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    if (ExpectsHoistedInit(ReductionsOf(sch.func()))) {
      EXPECT_TRUE(InitInFrontOfTheReductionLoops(sch.func(), *lowered));
      ++hoisted;
    }
    testing::ExpectSameAsDefault(*f, *lowered, /*jit=*/false);
  });
  EXPECT_EQ(got, 12);
  EXPECT_GT(hoisted, 0) << "every drawn program was predicated or reduced across threads";
}

TEST_P(CudaSketchInitWorkloadTest, FullSizeProgramsGenerateAndCompile) {
  const PrimFunc f = FullSize(GetParam());
  std::vector<cuda::CudaModule> modules;
  Draw(f, ShippedConfig(), 3, [&](const Schedule& sch) {
    SCOPED_TRACE(sch.trace().ToText());
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    if (ExpectsHoistedInit(ReductionsOf(sch.func()))) {
      EXPECT_TRUE(InitInFrontOfTheReductionLoops(sch.func(), *lowered));
    }
    auto module = cuda::GenerateCuda(*lowered);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    modules.push_back(*std::move(module));
  });
  ASSERT_EQ(modules.size(), 3u);
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) {
    GTEST_SKIP() << "lowered and generated, not compiled: NVRTC is not available: " << why_not;
  }
  for (const cuda::CudaModule& module : modules) {
    auto compiled = cuda::CompileCudaSource(module.source, "sm_80");
    EXPECT_TRUE(compiled.ok()) << compiled.status().ToString() << "\n" << module.source;
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, CudaSketchInitWorkloadTest,
                         ::testing::Values("gmm_512", "c2d_resnet_3x3", "dense_bias_relu"));

}  // namespace
}  // namespace tunefarm::tuner
