// The CPU sketch rules on the operator suite: every workload has valid
// samples, and sampled programs compute the same as the default schedule
// (through the interpreter and the JIT); reductions, register tiles and packing.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/seed_selection.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::ExpectSameAsDefault;
using testing::ShrunkDefault;
using testing::SuiteFiles;
namespace fs = std::filesystem;

class SketchSuiteTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SketchSuiteTest, SamplesAreValidAndCorrect) {
  ir::PrimFunc f = ShrunkDefault(GetParam());
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 17);
  int valid = 0;
  std::string last_error;
  for (int i = 0; i < 8; ++i) {
    auto c = search.Sample();
    if (!c.ok()) {
      last_error = c.status().ToString();
      continue;
    }
    ++valid;
    ExpectSameAsDefault(f, c->func, /*jit=*/i % 4 == 0);
    auto m = search.Mutate(*c);
    if (m.ok()) ExpectSameAsDefault(f, m->func, false);
  }
  EXPECT_GE(valid, 4) << "too few valid samples; last error: " << last_error;
}

std::string Name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = fs::path(info.param).stem().string();
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Suite, SketchSuiteTest, ::testing::ValuesIn(SuiteFiles()), Name);

// Rule 2a on the full-size matrix norm (one output, 65,536 reduced elements):
// both rfactor modes are sampled, and both compute the norm through the JIT.
TEST(SketchRFactorTest, FewOutputsLongReductionGetPartialSums) {
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/nrm.tf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(*f, policy.get(), SearchOptions{}, 5);
  int vector_mode = 0, task_mode = 0;
  for (int i = 0; i < 24; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::string text = ir::ToString(c->func);
    ASSERT_NE(text.find("sq_rf"), std::string::npos) << text;
    bool vectorized = text.find("vectorized") != std::string::npos;
    bool parallel = text.find("parallel") != std::string::npos;
    vector_mode += vectorized;
    task_mode += parallel && !vectorized;
    if (i < 6) ExpectSameAsDefault(*f, c->func, /*jit=*/true);
  }
  EXPECT_GE(vector_mode, 3);
  EXPECT_GE(task_mode, 3);
  // Off in the rule set: no rf block.
  CpuSketchConfig off;
  off.rfactor_max_spatial = 0;
  auto plain = MakeCpuSketchPolicy(off);
  EvolutionarySearch plain_search(*f, plain.get(), SearchOptions{}, 5);
  auto c = plain_search.Sample();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(ir::ToString(c->func).find("_rf"), std::string::npos);
}

// Loops inside the first reduction loop of a DEP kernel that reads X and Wt
// in place (the vector axis is w) and move X's channel index: the channel
// tiles of the register tile.
int ChannelLoopsInRegisterTile(const ir::PrimFunc& lowered) {
  std::vector<const ir::For*> loops;
  const ir::Load* x = nullptr;
  const ir::Load* wt = nullptr;
  ir::PostOrderVisit(lowered.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kFor) loops.push_back(static_cast<const ir::For*>(n));
    if (n->kind != ir::IRNodeKind::kLoad) return;
    const auto* l = static_cast<const ir::Load*>(n);
    if (l->buffer->name == "X") x = l;
    if (l->buffer->name == "Wt") wt = l;
  });
  if (!x || !wt) return -1;
  // Loops enclosing the X load, outermost first (an outer loop encloses more nodes).
  std::vector<std::pair<size_t, const ir::For*>> enclosing;
  for (const ir::For* f : loops) {
    size_t nodes = 0;
    bool holds = false;
    ir::PostOrderVisit(f->body, [&](const ir::IRNode* n) {
      ++nodes;
      holds = holds || n == x;
    });
    if (holds) enclosing.push_back({nodes, f});
  }
  std::sort(enclosing.begin(), enclosing.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  bool inside_reduction = false;
  int channel_loops = 0;
  for (const auto& [nodes, f] : enclosing) {
    // The reduction loops are the ones Wt's tap indices (r, s) move.
    bool reduction = ir::UsesVar(wt->indices[1], f->loop_var.get()) || ir::UsesVar(wt->indices[2], f->loop_var.get());
    inside_reduction = inside_reduction || reduction;
    const int64_t* extent = ir::AsConstInt(f->extent);
    if (inside_reduction && !reduction && extent && *extent > 1 && ir::UsesVar(x->indices[1], f->loop_var.get())) {
      ++channel_loops;
    }
  }
  return channel_loops;
}

// A depthwise convolution's channel axis reuses no input (each channel reads
// its own plane and its own weights): with the rule on, no sample tiles it
// inside the reduction loops, and the samples still compute what the default
// does; with the rule off, some do. GMM's axes all reuse an input, so there
// the rule changes no sample.
TEST(SketchReuseTest, AxesWithoutReuseStayOutOfTheRegisterTile) {
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/dep_3x3_c256_28.tf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  for (bool rule : {true, false}) {
    CpuSketchConfig config;
    config.register_tile_needs_reuse = rule;
    auto policy = MakeCpuSketchPolicy(config);
    EvolutionarySearch search(*f, policy.get(), SearchOptions{}, 21);
    int in_place = 0, with_channel_tiles = 0;
    for (int i = 0; i < 48; ++i) {
      auto c = search.Sample();
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      int channel_loops = ChannelLoopsInRegisterTile(c->lowered);
      if (channel_loops < 0) continue;
      ++in_place;
      with_channel_tiles += channel_loops > 0;
      if (rule && in_place <= 2) {
        ExpectSameAsDefault(*f, c->func, /*jit=*/true);
        // A mutation re-runs the sketch: it keeps the rule too (-1: it moved
        // the vector axis to the channels, which packs X and Wt).
        auto m = search.Mutate(*c);
        ASSERT_TRUE(m.ok()) << m.status().ToString();
        EXPECT_LE(ChannelLoopsInRegisterTile(m->lowered), 0) << m->trace.ToText();
      }
    }
    EXPECT_GE(in_place, 12) << (rule ? "on" : "off");
    if (rule) {
      EXPECT_EQ(with_channel_tiles, 0);
    } else {
      EXPECT_GE(with_channel_tiles, 6);
    }
  }
  ir::PrimFunc gmm = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  CpuSketchConfig off;
  off.register_tile_needs_reuse = false;
  auto on_policy = MakeCpuSketchPolicy();
  auto off_policy = MakeCpuSketchPolicy(off);
  EvolutionarySearch on_search(gmm, on_policy.get(), SearchOptions{}, 4), off_search(gmm, off_policy.get(), SearchOptions{}, 4);
  for (int i = 0; i < 8; ++i) {
    auto a = on_search.Sample();
    auto b = off_search.Sample();
    ASSERT_EQ(a.ok(), b.ok());
    if (a.ok()) {
      EXPECT_EQ(a->trace.ToText(), b->trace.ToText());
    }
  }
}

TEST(SketchPackingTest, RootCopiesRunInParallel) {
  ParseOptions small;
  small.param_overrides = {{"C", 8}, {"K", 32}};
  // Weights declared as plain inputs: the copy's placement is then sampled
  // (a constant input's copy is always made at the root, ahead of the calls).
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/t2d.tf");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(text.find("= input const"), std::string::npos);
  text.replace(text.find("= input const"), 13, "= input");
  auto w = ParseWorkload(text, small);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  // Padding off: the padded copy of X would be another parallel copy (b1).
  CpuSketchConfig config;
  config.pad_inputs = false;
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(*f, policy.get(), SearchOptions{}, 9);
  int root_copies = 0;
  for (int i = 0; i < 48 && root_copies < 4; ++i) {
    auto c = search.Sample();
    if (!c.ok()) continue;
    std::string trace = c->trace.ToText();
    std::string text = ir::ToString(c->func);
    // cache_read's copy is b1; at the root unless computed at the kernel's loop.
    if (trace.find("cache_read") == std::string::npos || trace.find("compute_at(b1") != std::string::npos) continue;
    ++root_copies;
    size_t parallel = 0;
    for (size_t at = text.find("parallel"); at != std::string::npos; at = text.find("parallel", at + 1)) ++parallel;
    EXPECT_EQ(parallel, 2u) << trace << "\n" << text;
    ExpectSameAsDefault(*f, c->func, /*jit=*/true);
  }
  EXPECT_GE(root_copies, 1) << "no sample packed the weights once for the whole call";
}

// A constant input read in rows along the vector axis (a matmul's B) may be
// packed into 16-wide panels ahead of the calls: some samples do, their
// copy is the prepack entry (not in what the cost model reads), and they
// compute what the default does through the prepacked call. Declared
// without `const`, no sample packs B.
TEST(SketchPackingTest, ConstantRowsArePackedIntoPanelsAhead) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(text.find("= input const"), std::string::npos);
  for (bool constant : {true, false}) {
    std::string source = text;
    if (!constant) source.replace(source.find("= input const"), 13, "= input");
    ParseOptions small;
    small.param_overrides = {{"M", 16}, {"N", 64}, {"K", 24}};
    auto w = ParseWorkload(source, small);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto f = LowerToPrimFunc(*w);
    ASSERT_TRUE(f.ok());
    auto policy = MakeCpuSketchPolicy();
    EvolutionarySearch search(*f, policy.get(), SearchOptions{}, 13);
    int panels = 0, valid = 0;
    for (int i = 0; i < 32; ++i) {
      auto c = search.Sample();
      if (!c.ok()) continue;
      ++valid;
      auto split = SplitPrepack(c->func);
      if (!split) continue;
      ++panels;
      EXPECT_EQ(split->packed.size(), 1u);
      EXPECT_EQ(split->packed[0]->shape, (std::vector<int64_t>{4, 24, 16})) << ir::ToString(c->func);
      // The copy reads B; what the cost model reads (one measured call) does not.
      EXPECT_NE(ir::ToString(c->func).find(" B["), std::string::npos) << ir::ToString(c->func);
      EXPECT_EQ(ir::ToString(c->lowered).find(" B["), std::string::npos) << ir::ToString(c->lowered);
      EXPECT_EQ(split->prepacked.params.size(), 4u);
      if (panels <= 2) ExpectSameAsDefault(*f, c->func, /*jit=*/true);
    }
    EXPECT_GE(valid, 16) << (constant ? "const" : "plain");
    if (constant) {
      EXPECT_GE(panels, 1) << "no sample packed the constant B into panels";
    } else {
      EXPECT_EQ(panels, 0);
    }
  }
}

}  // namespace
}  // namespace tunefarm::tuner
