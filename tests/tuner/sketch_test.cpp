// The CPU sketch rules and the evolutionary search on the operator suite:
// every workload has valid samples, and sampled programs compute the same
// as the default schedule (through the interpreter and the JIT).
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

// A search pool small enough for a unit test: 32 programs a generation.
SearchOptions SmallPool(int generations) {
  SearchOptions options;
  options.population = 32;
  options.generations = generations;
  return options;
}

TEST(EvolutionarySearchTest, BatchesNeverRepeatMeasuredPrograms) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SmallPool(2), 5);
  RandomScorer scorer(1);
  std::set<uint64_t> measured;
  std::vector<Trace> seeds;
  for (int round = 0; round < 3; ++round) {
    auto batch = search.NextBatch(8, seeds, measured, scorer, {});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_FALSE(batch->empty());
    for (const Candidate& c : *batch) {
      EXPECT_FALSE(measured.count(c.hash)) << "candidate measured twice";
      measured.insert(c.hash);
      seeds.push_back(c.trace);
    }
  }
}

// Scores every candidate alike and keeps the hashes of the first call's
// candidates: a round's first generation, the log's seeds and the random
// samples of the sketch.
class FirstGenerationScorer : public CandidateScorer {
 public:
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override {
    if (first_generation.empty()) {
      for (const Candidate* c : candidates) first_generation.insert(c->hash);
    }
    return std::vector<double>(candidates.size(), 0.0);
  }
  std::set<uint64_t> first_generation;
};

// The epsilon share of a batch is drawn among the round's random samples of
// the sketch, not among the mutations the pool is mostly made of.
TEST(EvolutionarySearchTest, EpsilonPicksAreRandomSamplesOfTheSketch) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  SearchOptions options = SmallPool(3);
  options.epsilon = 1.0;
  EvolutionarySearch search(f, policy.get(), options, 13);
  auto seed = search.Sample();
  ASSERT_TRUE(seed.ok()) << seed.status().ToString();
  std::set<uint64_t> measured = {seed->hash};
  FirstGenerationScorer scorer;
  auto batch = search.NextBatch(12, {seed->trace}, measured, scorer, {});
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 12u);
  ASSERT_EQ(scorer.first_generation.size(), 32u);
  for (const Candidate& c : *batch) {
    EXPECT_NE(c.hash, seed->hash);
    EXPECT_TRUE(scorer.first_generation.count(c.hash)) << "an epsilon pick that is not a random sample";
  }
}

// Scores the programs that take one categorical value lowest, the others alike:
// a model that has only seen the other values measured.
class AvoidChoiceScorer : public CandidateScorer {
 public:
  explicit AvoidChoiceScorer(std::string key) : keys_{std::move(key)} {}
  explicit AvoidChoiceScorer(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override {
    std::vector<double> scores;
    for (const Candidate* c : candidates) scores.push_back(HasAnyKey(*c) ? -1.0 : 0.0);
    return scores;
  }
  bool HasAnyKey(const Candidate& c) const {
    for (const std::string& key : keys_) {
      if (HasKey(c, key)) return true;
    }
    return false;
  }
  static bool HasKey(const Candidate& c, const std::string& key) {
    std::vector<std::string> keys = ChoiceKeys(c.trace);
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }

 private:
  std::vector<std::string> keys_;
};

// Categorical values some of 24 random programs of `f` take, but fewer than half.
std::vector<std::string> MinorityChoices(const ir::PrimFunc& f, SketchPolicy* policy) {
  EvolutionarySearch probe(f, policy, SmallPool(1), 3);
  std::map<std::string, int> taken_by;
  const int kSamples = 24;
  for (int i = 0; i < kSamples; ++i) {
    auto c = probe.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return {};
    for (const std::string& key : ChoiceKeys(c->trace)) ++taken_by[key];
  }
  std::vector<std::string> keys;
  for (const auto& [k, n] : taken_by) {
    if (n > 0 && n < kSamples / 2) keys.push_back(k);
  }
  return keys;
}

// A value the fastest records lack gets its batch place (choice_picks) however
// the model ranks it; without choice_picks the model's ranking keeps it out.
TEST(EvolutionarySearchTest, ChoicePicksMeasureAValueTheModelRanksLast) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  // A categorical value some random programs take and others do not.
  std::vector<std::string> minority = MinorityChoices(f, policy.get());
  ASSERT_FALSE(minority.empty()) << "no categorical value of the sketch taken by a minority of programs";
  const std::string key = minority.back();
  std::vector<int> with_key;
  for (int picks : {0, 1}) {
    SearchOptions options = SmallPool(2);
    options.epsilon = 0;
    options.choice_picks = picks;
    EvolutionarySearch search(f, policy.get(), options, 7);
    AvoidChoiceScorer scorer(key);
    auto batch = search.NextBatch(8, {}, {}, scorer, {key});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_EQ(batch->size(), 8u);
    with_key.push_back(int(std::count_if(batch->begin(), batch->end(),
                                         [&](const Candidate& c) { return AvoidChoiceScorer::HasKey(c, key); })));
  }
  EXPECT_EQ(with_key[0], 0) << key;
  EXPECT_EQ(with_key[1], 1) << key;
}

// Choice picks take at most half of the places the model fills: in a batch of
// two, one goes to a missing value and the other to the model's favourite,
// even with two values missing and two picks allowed.
TEST(EvolutionarySearchTest, ChoicePicksLeaveHalfOfASmallBatchToTheModel) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  std::vector<std::string> minority = MinorityChoices(f, policy.get());
  ASSERT_GE(minority.size(), 2u) << "fewer than two categorical values taken by a minority of programs";
  const std::vector<std::string> wanted = {minority[0], minority[1]};
  SearchOptions options = SmallPool(2);
  options.epsilon = 0;
  options.choice_picks = 2;
  EvolutionarySearch search(f, policy.get(), options, 7);
  AvoidChoiceScorer scorer(wanted);
  auto batch = search.NextBatch(2, {}, {}, scorer, wanted);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->size(), 2u);
  EXPECT_TRUE(scorer.HasAnyKey((*batch)[0])) << "the missing value's place";
  EXPECT_FALSE(scorer.HasAnyKey((*batch)[1])) << "the model's favourite";
}

// MissingChoices: the values of the choice seeds that the fastest lack, once each.
TEST(EvolutionarySearchTest, MissingChoicesAreTheChoiceSeedsValuesTheFastestLack) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch probe(f, policy.get(), SmallPool(1), 3);
  std::vector<Trace> seeds;
  for (int i = 0; i < 6; ++i) seeds.push_back(probe.Sample()->trace);
  std::set<std::string> fastest;
  for (int i = 0; i < 3; ++i) {
    for (const std::string& k : ChoiceKeys(seeds[size_t(i)])) fastest.insert(k);
  }
  std::set<std::string> expected;
  for (int i = 3; i < 6; ++i) {
    for (const std::string& k : ChoiceKeys(seeds[size_t(i)])) {
      if (!fastest.count(k)) expected.insert(k);
    }
  }
  ASSERT_FALSE(expected.empty()) << "the last three programs take no value the first three lack";
  std::vector<std::string> missing = MissingChoices(seeds, 3);
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()), expected);
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()).size(), missing.size()) << "a value listed twice";
  EXPECT_TRUE(MissingChoices(seeds, 6).empty());
}

// Counts over 40 mutations of random samples.
struct MutationCounts {
  int children = 0;           // valid mutations
  int same_program = 0;       // children whose program is the parent's
  int unchanged_decisions = 0;
  int categorical_steps = 0;  // children with a categorical decision changed
};

MutationCounts MutateSamples(const std::string& workload, SearchOptions options) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + workload + ".tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), options, 11);
  MutationCounts counts;
  for (int i = 0; i < 40; ++i) {
    auto parent = search.Sample();
    EXPECT_TRUE(parent.ok()) << parent.status().ToString();
    if (!parent.ok()) continue;
    auto child = search.Mutate(*parent);
    if (!child.ok()) continue;  // an invalid mutation is dropped by the search
    ++counts.children;
    counts.same_program += child->hash == parent->hash;
    std::vector<size_t> a = parent->trace.DecisionIndices(), b = child->trace.DecisionIndices();
    bool categorical_changed = false, any_changed = a.size() != b.size();
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
      const Instruction& x = parent->trace.instructions()[a[k]];
      const Instruction& y = child->trace.instructions()[b[k]];
      if (x.decision == y.decision) continue;
      any_changed = true;
      categorical_changed |= x.name == "sample_categorical" && y.name == "sample_categorical";
    }
    counts.unchanged_decisions += !any_changed;
    counts.categorical_steps += categorical_changed;
  }
  return counts;
}

// A mutation gives a program other than its parent's (a step that changes
// nothing is retried on another decision) with some of the parent's
// decisions changed; its program computes what the default does
// (SamplesAreValidAndCorrect checks that over the suite).
TEST(EvolutionarySearchTest, MutationGivesANeighbouringProgram) {
  for (const char* workload : {"c2d_resnet_3x3", "gmm_512"}) {
    MutationCounts counts = MutateSamples(workload, SearchOptions{});
    EXPECT_GE(counts.children, 36) << workload;
    EXPECT_EQ(counts.same_program, 0) << workload;
    EXPECT_EQ(counts.unchanged_decisions, 0) << workload;
  }
}

// tile_mutation_share weighs which decision steps. On GMM the sketch samples
// the packing panel, the unroll depth and the accumulator level as
// categoricals whose effect is written into the trace as fixed steps: a step
// of one of these changes the program too, because the sketch is re-run
// (replaying the parent's trace with the decision changed would not).
TEST(EvolutionarySearchTest, TileShareWeighsWhichDecisionSteps) {
  SearchOptions only_tiles, no_tiles;
  only_tiles.tile_mutation_share = 1.0;
  no_tiles.tile_mutation_share = 0.0;
  MutationCounts tiles = MutateSamples("gmm_512", only_tiles);
  EXPECT_GE(tiles.children, 36);
  EXPECT_EQ(tiles.categorical_steps, 0);
  // Without tile steps, most children differ in a categorical (a step that
  // lowers to the parent's program, as an unroll depth on a short loop can,
  // falls through to another decision, tiles last).
  MutationCounts others = MutateSamples("gmm_512", no_tiles);
  EXPECT_GE(others.children, 36);
  EXPECT_EQ(others.same_program, 0);
  EXPECT_GE(others.categorical_steps, 24);
}

// Re-running the sketch with a sample's own decisions as hints gives the
// sample back (what a mutation starts from).
TEST(EvolutionarySearchTest, SketchRerunWithItsDecisionsGivesTheSameProgram) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/t2d.tf");
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 4);
  for (int i = 0; i < 8; ++i) {
    auto sample = search.Sample();
    ASSERT_TRUE(sample.ok()) << sample.status().ToString();
    std::vector<std::vector<int64_t>> hints;
    for (size_t k : sample->trace.DecisionIndices()) hints.push_back(sample->trace.instructions()[k].decision);
    Schedule again(f, 1000 + uint64_t(i));
    again.SetDecisionHints(hints);
    ASSERT_TRUE(policy->Apply(again).ok());
    EXPECT_EQ(again.trace().ToText(), sample->trace.ToText());
  }
}

// A packed copy made once for the whole call runs in parallel over its outer
// loop (the suite's transposed convolution shrunk to 8 -> 32 channels: its
// weights are packed along the output channels, 16 wide). Samples with such
// a copy have two parallel loops (the copy's and the kernel's) and compute
// what the default does.
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
