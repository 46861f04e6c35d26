// The GPU sketch rules (sketch_cuda.h): every suite workload, shrunk, gets
// GPU programs from them -- every root loop nest bound to blockIdx and
// threadIdx, inputs of tiled reductions staged in shared memory -- that
// compute what the default program computes (through the interpreter, which
// runs a block's threads in phases between barriers).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>

#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

using testing::ShrunkDefault;
using testing::SuiteFiles;

// Every root statement of the program's body is a loop bound to blockIdx.
bool EveryRootNestIsBound(const ir::PrimFunc& f) {
  bool ok = true;
  std::vector<ir::Stmt> roots;
  ir::Stmt s = f.body;
  while (s.kind() == ir::IRNodeKind::kAllocate) s = s.as<ir::Allocate>()->body;
  if (s.kind() == ir::IRNodeKind::kSeqStmt) {
    for (const ir::Stmt& c : s.as<ir::SeqStmt>()->seq) roots.push_back(c);
  } else {
    roots.push_back(s);
  }
  for (ir::Stmt r : roots) {
    while (r.kind() == ir::IRNodeKind::kAllocate) r = r.as<ir::Allocate>()->body;
    // A block realize at the root holds its loops inside.
    while (r.kind() == ir::IRNodeKind::kBlock) r = r.as<ir::Block>()->body;
    ok = ok && r.kind() == ir::IRNodeKind::kFor && r.as<ir::For>()->thread_tag.rfind("blockIdx", 0) == 0;
  }
  return ok;
}

std::set<ir::MemoryScope> ScopesAllocated(const ir::PrimFunc& f) {
  std::set<ir::MemoryScope> scopes;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kAllocate) scopes.insert(static_cast<const ir::Allocate*>(n)->buffer->scope);
  });
  return scopes;
}

// Shrunk workloads have too little work for a warp per block everywhere.
CudaSketchConfig ShrunkConfig() {
  CudaSketchConfig c;
  c.min_threads_per_block = 1;
  return c;
}

TEST(CudaSketchTest, EverySuiteWorkloadGetsBoundProgramsThatComputeTheSame) {
  auto policy = MakeCudaSketchPolicy(ShrunkConfig());
  for (const std::string& path : SuiteFiles()) {
    SCOPED_TRACE(path);
    const ir::PrimFunc f = ShrunkDefault(path);
    int built = 0;
    std::string last_failure;
    for (uint64_t seed = 0; seed < 200 && built < 6; ++seed) {
      Schedule sch(f, seed);
      Status applied = policy->Apply(sch);
      if (!applied.ok()) {
        last_failure = applied.ToString();
        continue;  // limits not met: the search draws again
      }
      ++built;
      EXPECT_TRUE(EveryRootNestIsBound(sch.func())) << ir::ToString(sch.func());
      // The program as it runs on the GPU: lowered, barriers inserted, checked.
      auto lowered = cuda::LowerForCuda(sch.func());
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(sch.func());
      testing::ExpectSameAsDefault(f, *lowered, /*jit=*/false);
      auto module = cuda::GenerateCuda(*lowered);
      EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*lowered);
      Schedule replayed(f, seed + 1000);
      ASSERT_TRUE(sch.trace().ApplyTo(replayed).ok());
      EXPECT_EQ(ir::ToString(replayed.func()), ir::ToString(sch.func()));
    }
    EXPECT_GE(built, 6) << "the rules built too few programs in 200 draws; the last failure: " << last_failure;
  }
}

TEST(CudaSketchTest, MatmulInputsAreStagedInSharedMemoryAndAccumulatedInRegisters) {
  const ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCudaSketchPolicy();
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    std::set<ir::MemoryScope> scopes = ScopesAllocated(sch.func());
    EXPECT_TRUE(scopes.count(ir::MemoryScope::kShared)) << ir::ToString(sch.func());
    EXPECT_TRUE(scopes.count(ir::MemoryScope::kLocal)) << ir::ToString(sch.func());
    return;
  }
  FAIL() << "no GPU program in 50 draws";
}

// At the suite's real sizes, with the shipped knobs, enough draws meet the
// thread limits that the search is not starved of candidates.
TEST(CudaSketchTest, MostDrawsAtFullSizeMeetTheThreadLimits) {
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto policy = MakeCudaSketchPolicy(*config);
  for (const char* name : {"gmm_1024", "c2d_resnet_3x3", "dep_3x3_c256_28", "dense_bias_relu"}) {
    std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto w = ParseWorkload(text);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto f = LowerToPrimFunc(*w);
    ASSERT_TRUE(f.ok());
    int built = 0;
    std::map<std::string, int> why;
    for (uint64_t seed = 0; seed < 100; ++seed) {
      Schedule sch(*f, seed);
      Status st = sch.trace().size() == 0 ? policy->Apply(sch) : Status::OK();
      if (st.ok()) {
        ++built;
      } else {
        ++why[st.message().substr(0, st.message().find(':', st.message().find(':') + 1))];
      }
    }
    std::string reasons;
    for (const auto& [w2, n] : why) reasons += w2 + " x" + std::to_string(n) + "; ";
    EXPECT_GE(built, 25) << name << ": " << built << " of 100 draws built; " << reasons;
  }
}

TEST(CudaSketchTest, KnobsFileErrorsNameTheKey) {
  const std::string path = ::testing::TempDir() + "/cuda_bad.toml";
  {
    std::ofstream out(path);
    out << "max_threads_per_block = 4096\n";
  }
  auto c = LoadCudaSketchConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'max_threads_per_block' must be an integer in [1, 1024]"), std::string::npos)
      << c.status().ToString();
  {
    std::ofstream out(path);
    out << "threads = 3\n";
  }
  c = LoadCudaSketchConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("unknown key 'threads'"), std::string::npos) << c.status().ToString();
  {
    std::ofstream out(path);
    out << "fetch_vector_lanes = [1, 8]\n";
  }
  c = LoadCudaSketchConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'fetch_vector_lanes'"), std::string::npos) << c.status().ToString();
}

}  // namespace
}  // namespace tunefarm::tuner
