// PredictCached scores exactly as Predict does and extracts each program's
// features once, into its CachedFeatures; an untrained model extracts
// nothing; a model taught from those cached features (FromFeatures) is the
// model taught from the programs (FromLowered).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/dataset_gen.h"

namespace tunefarm::costmodel {
namespace {

// Lowered random schedules of a 128^3 matmul.
std::vector<ir::PrimFunc> SamplePrograms(int n) {
  ParseOptions options;
  options.param_overrides = {{"M", 128}, {"N", 128}, {"K", 128}};
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf", options);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  EXPECT_TRUE(base.ok()) << base.status().ToString();
  std::vector<ir::PrimFunc> lowered;
  for (uint64_t seed = 1; seed <= uint64_t(n); ++seed) {
    auto scheduled = SampleRandomSchedule(*base, seed);
    EXPECT_TRUE(scheduled.ok()) << scheduled.status().ToString();
    auto l = LowerForCodegen(*scheduled);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    lowered.push_back(std::move(*l));
  }
  return lowered;
}

std::vector<double> MadeUpSeconds(size_t n) {
  std::mt19937_64 rng(5);
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::uniform_real_distribution<double>(1e-4, 1e-3)(rng));
  return out;
}

XGBoostCostModelOptions SmallModel() {
  XGBoostCostModelOptions o;
  o.params.num_rounds = 20;
  return o;
}

TEST(CachedFeaturesTest, ExtractsOnceAndGivesTheProgramsFeatures) {
  std::vector<ir::PrimFunc> lowered = SamplePrograms(1);
  CachedFeatures cache;
  EXPECT_FALSE(cache.extracted());
  const FeatureVector& first = cache.Get(lowered[0]);
  EXPECT_TRUE(cache.extracted());
  EXPECT_EQ(first, ExtractFeatures(lowered[0]));
  EXPECT_EQ(&cache.Get(lowered[0]), &first);  // kept, not extracted again
}

TEST(CachedFeaturesTest, PredictCachedScoresAsPredictFromOneExtraction) {
  std::vector<ir::PrimFunc> lowered = SamplePrograms(80);  // a full chunk of 64 and a partial one
  const std::vector<double> seconds = MadeUpSeconds(lowered.size());
  std::vector<const ir::PrimFunc*> programs;
  std::vector<CachedFeatures> caches(lowered.size());
  std::vector<CostModel::CachedProgram> cached;
  for (size_t i = 0; i < lowered.size(); ++i) {
    programs.push_back(&lowered[i]);
    cached.push_back({&lowered[i], &caches[i]});
  }
  XGBoostCostModel model(SmallModel());
  // Untrained: zeros, and nothing extracted.
  auto untrained = model.PredictCached(cached);
  ASSERT_TRUE(untrained.ok());
  EXPECT_EQ(*untrained, std::vector<double>(lowered.size(), 0.0));
  for (const CachedFeatures& c : caches) EXPECT_FALSE(c.extracted());

  std::vector<MeasuredCandidate> train;
  for (size_t i = 0; i < lowered.size(); ++i) train.push_back(MeasuredCandidate::FromLowered("gmm", lowered[i], seconds[i]));
  ASSERT_TRUE(model.Update(train).ok());
  auto plain = model.Predict(programs);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  auto from_cache = model.PredictCached(cached);
  ASSERT_TRUE(from_cache.ok()) << from_cache.status().ToString();
  EXPECT_EQ(*from_cache, *plain);
  EXPECT_NE(*std::min_element(plain->begin(), plain->end()), *std::max_element(plain->begin(), plain->end()));
  for (size_t i = 0; i < caches.size(); ++i) {
    ASSERT_TRUE(caches[i].extracted());
    EXPECT_EQ(caches[i].Get(lowered[i]), ExtractFeatures(lowered[i]));
  }
  // Scored again from the kept features, and with no cache at all.
  auto again = model.PredictCached(cached);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *plain);
  std::vector<CostModel::CachedProgram> uncached;
  for (const ir::PrimFunc& f : lowered) uncached.push_back({&f, nullptr});
  auto none = model.PredictCached(uncached);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, *plain);
}

TEST(CachedFeaturesTest, ModelsThatReadNoFeaturesExtractNone) {
  std::vector<ir::PrimFunc> lowered = SamplePrograms(4);
  std::vector<CachedFeatures> caches(lowered.size());
  std::vector<const ir::PrimFunc*> programs;
  std::vector<CostModel::CachedProgram> cached;
  for (size_t i = 0; i < lowered.size(); ++i) {
    programs.push_back(&lowered[i]);
    cached.push_back({&lowered[i], &caches[i]});
  }
  RandomCostModel a(7), b(7);
  auto plain = a.Predict(programs);
  auto from_cache = b.PredictCached(cached);
  ASSERT_TRUE(plain.ok() && from_cache.ok());
  EXPECT_EQ(*from_cache, *plain);
  for (const CachedFeatures& c : caches) EXPECT_FALSE(c.extracted());
}

TEST(CachedFeaturesTest, LearningFromCachedFeaturesIsLearningFromThePrograms) {
  std::vector<ir::PrimFunc> lowered = SamplePrograms(40);
  const std::vector<double> seconds = MadeUpSeconds(lowered.size());
  std::vector<MeasuredCandidate> from_lowered, from_features;
  for (size_t i = 0; i < lowered.size(); ++i) {
    const bool failed = i % 9 == 4;
    from_lowered.push_back(MeasuredCandidate::FromLowered("gmm", lowered[i], seconds[i], failed));
    CachedFeatures cache;
    from_features.push_back(MeasuredCandidate::FromFeatures("gmm", cache.Get(lowered[i]), seconds[i], failed));
  }
  XGBoostCostModel a(SmallModel()), b(SmallModel());
  ASSERT_TRUE(a.Update(from_lowered).ok());
  ASSERT_TRUE(b.Update(from_features).ok());
  std::vector<const ir::PrimFunc*> programs;
  for (const ir::PrimFunc& f : lowered) programs.push_back(&f);
  auto pa = a.Predict(programs), pb = b.Predict(programs);
  ASSERT_TRUE(pa.ok() && pb.ok());
  EXPECT_EQ(*pa, *pb);
}

}  // namespace
}  // namespace tunefarm::costmodel
