// XGBoostCostModel::Predict (features extracted and scored a chunk at a
// time) gives exactly the scores of extracting every row first and
// scoring the whole matrix, across chunk boundaries and a partial chunk.
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

TEST(XGBoostCostModelPredictTest, ChunkedPredictEqualsWholeMatrix) {
  ParseOptions options;
  options.param_overrides = {{"M", 128}, {"N", 128}, {"K", 128}};
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf", options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  std::vector<ir::PrimFunc> lowered;
  for (uint64_t seed = 1; seed <= 150; ++seed) {  // 2 full chunks of 64 and a partial one
    auto scheduled = SampleRandomSchedule(*base, seed);
    ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
    auto l = LowerForCodegen(*scheduled);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    lowered.push_back(std::move(*l));
  }
  std::vector<const ir::PrimFunc*> programs;
  for (const ir::PrimFunc& f : lowered) programs.push_back(&f);

  // Trained on made-up timings: only the agreement of the two paths matters.
  std::mt19937_64 rng(5);
  std::vector<MeasuredCandidate> train;
  for (const ir::PrimFunc& f : lowered) {
    train.push_back(MeasuredCandidate::FromLowered("gmm", f, std::uniform_real_distribution<double>(1e-4, 1e-3)(rng)));
  }
  XGBoostCostModelOptions model_options;
  model_options.params.num_rounds = 20;
  XGBoostCostModel model(model_options);
  ASSERT_TRUE(model.Update(train).ok());

  auto whole = model.PredictFeatures(ExtractFeatureMatrix(programs));
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  auto chunked = model.Predict(programs);
  ASSERT_TRUE(chunked.ok()) << chunked.status().ToString();
  EXPECT_EQ(*chunked, *whole);
  // The scores are not all equal (a constant model would agree trivially).
  EXPECT_NE(*std::min_element(whole->begin(), whole->end()), *std::max_element(whole->begin(), whole->end()));
  // A second, smaller batch reuses the chunk buffer.
  std::vector<const ir::PrimFunc*> few(programs.begin() + 70, programs.begin() + 75);
  auto again = model.Predict(few);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, std::vector<double>(whole->begin() + 70, whole->begin() + 75));
}

}  // namespace
}  // namespace tunefarm::costmodel
