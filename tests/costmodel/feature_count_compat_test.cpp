// A model saved before the GpuFeature block (616 features) meets this
// build's longer vectors: scoring must fail with an error that names both
// counts, not read the new columns as old ones. Retraining on this build's
// measurements replaces it.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/xgboost_model.h"

namespace tunefarm::costmodel {
namespace {

constexpr int kFeaturesBeforeGpuBlock = 616;

TEST(FeatureCountCompatTest, ModelOfTheOldCountIsAClearError) {
  ASSERT_NE(kNumFeatures, kFeaturesBeforeGpuBlock);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  FeatureMatrix old_x(40, kFeaturesBeforeGpuBlock);
  std::vector<float> labels;
  for (int r = 0; r < old_x.rows(); ++r) {
    for (int c = 0; c < old_x.cols(); ++c) old_x(r, c) = u(rng);
    labels.push_back(old_x(r, 3));
  }
  XGBoostParams params;
  params.num_rounds = 5;
  params.max_depth = 3;
  params.objective = "reg:squarederror";
  XGBoostModel old_model;
  ASSERT_TRUE(old_model.Train(old_x, labels, {}, params).ok());
  auto bytes = old_model.SaveToBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();

  XGBoostCostModel model;
  ASSERT_TRUE(model.LoadFromBytes(*bytes).ok());
  FeatureMatrix x = FeatureMatrix::Zero(3, kNumFeatures);
  auto scores = model.PredictFeatures(x);
  ASSERT_FALSE(scores.ok());
  EXPECT_EQ(scores.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(scores.status().message().find(std::to_string(kNumFeatures) + " features, the model has 616"),
            std::string::npos)
      << scores.status().ToString();

  // The search's path: features extracted from lowered programs.
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_1024.tf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok());
  auto lowered = LowerForCodegen(*base);
  ASSERT_TRUE(lowered.ok());
  auto predicted = model.Predict({&*lowered});
  ASSERT_FALSE(predicted.ok());
  EXPECT_EQ(predicted.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefarm::costmodel
