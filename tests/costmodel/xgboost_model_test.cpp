// XGBoostModel and XGBoostCostModel: train, predict, save/load round trips,
// error paths carrying XGBoost's message; metrics on hand-checked inputs.
#include <gtest/gtest.h>

#include <cmath>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/metrics.h"
#include "tunefarm/costmodel/xgboost_model.h"

namespace tunefarm::costmodel {
namespace {

// Two groups of synthetic rows whose label is a noisy function of two features.
struct Synthetic {
  FeatureMatrix x;
  std::vector<float> labels;
  std::vector<unsigned> groups;
};

Synthetic MakeSynthetic(int rows_per_group, int cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Synthetic s;
  s.x.resize(2 * rows_per_group, cols);
  for (int r = 0; r < s.x.rows(); ++r) {
    for (int c = 0; c < cols; ++c) s.x(r, c) = u(rng);
    s.labels.push_back(0.7f * s.x(r, 0) + 0.3f * (1 - s.x(r, 1)));
  }
  s.groups = {static_cast<unsigned>(rows_per_group), static_cast<unsigned>(rows_per_group)};
  return s;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tunefarm_cm_" + std::to_string(::getpid()) + "_" + name)).string();
}

XGBoostParams SmallParams() {
  XGBoostParams p;
  p.num_rounds = 30;
  p.max_depth = 4;
  return p;
}

// Predict walks tunefarm's flattened copy of the trees; it must give
// XGBoost's own scores up to float rounding (the base score is read back
// rounded, and XGBoost adds it in its own order), NaN features (XGBoost's
// missing values) included, trees of uneven depth, after a reload.
TEST(XGBoostModelTest, FlattenedTreesMatchXGBoost) {
  for (const char* objective : {"rank:pairwise", "reg:squarederror"}) {
    Synthetic s = MakeSynthetic(300, 8, 5);
    XGBoostParams params = SmallParams();
    params.objective = objective;
    params.max_depth = 6;
    for (int r = 0; r < 300; r += 7) s.x(r, r % 8) = std::numeric_limits<float>::quiet_NaN();
    XGBoostModel m;
    ASSERT_TRUE(m.Train(s.x, s.labels, s.groups, params).ok());
    for (int round = 0; round < 2; ++round) {
      ASSERT_TRUE(m.uses_flattened_trees()) << objective;
      auto fast = m.Predict(s.x);
      ASSERT_TRUE(fast.ok());
      std::vector<float> reference(300);
      ASSERT_TRUE(m.PredictWithXGBoost(s.x.data(), 300, 8, reference.data()).ok());
      for (size_t i = 0; i < reference.size(); ++i) EXPECT_NEAR((*fast)[i], reference[i], 1e-5f) << objective;
      // Without NaN (the other path), and 299 rows: the last block of 16
      // ends in rows that walk alone rather than four together.
      FeatureMatrix clean = s.x.topRows(299);
      for (Eigen::Index i = 0; i < clean.size(); ++i) {
        if (std::isnan(clean.data()[i])) clean.data()[i] = 0.5f;
      }
      auto fast_clean = m.Predict(clean);
      ASSERT_TRUE(fast_clean.ok());
      ASSERT_TRUE(m.PredictWithXGBoost(clean.data(), 299, 8, reference.data()).ok());
      for (size_t i = 0; i < 299; ++i) EXPECT_NEAR((*fast_clean)[i], reference[i], 1e-5f) << objective << " row " << i;
      auto bytes = m.SaveToBytes();  // the reloaded booster is flattened again
      ASSERT_TRUE(bytes.ok());
      ASSERT_TRUE(m.LoadFromBytes(*bytes).ok());
    }
  }
}

TEST(XGBoostModelTest, TrainPredictSaveLoadRoundTrip) {
  Synthetic s = MakeSynthetic(100, 6, 1);
  XGBoostModel m;
  ASSERT_TRUE(m.Train(s.x, s.labels, s.groups, SmallParams()).ok());
  EXPECT_TRUE(m.trained());
  EXPECT_EQ(m.num_features(), 6);
  auto p = m.Predict(s.x);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->size(), 200u);
  std::vector<double> pd(p->begin(), p->end()), truth(s.labels.begin(), s.labels.end());
  EXPECT_GT(PairwiseAccuracy(pd, truth), 0.85);  // learns the training data

  // To bytes and back.
  auto bytes = m.SaveToBytes();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  XGBoostModel from_bytes;
  ASSERT_TRUE(from_bytes.LoadFromBytes(*bytes).ok());
  EXPECT_EQ(from_bytes.num_features(), 6);
  auto p2 = from_bytes.Predict(s.x);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(*p2, *p);

  // To a file and back.
  const std::string path = TempPath("model.json");
  ASSERT_TRUE(m.SaveToFile(path).ok());
  XGBoostModel from_file;
  Status st = from_file.LoadFromFile(path);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto p3 = from_file.Predict(s.x);
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ(*p3, *p);
  std::filesystem::remove(path);

  // Moving keeps the booster.
  XGBoostModel moved = std::move(from_file);
  auto p4 = moved.Predict(s.x);
  ASSERT_TRUE(p4.ok());
  EXPECT_EQ(*p4, *p);
}

TEST(XGBoostModelTest, GarbageModelFileGivesXGBoostsMessage) {
  const std::string path = TempPath("garbage.json");
  {
    std::ofstream out(path);
    out << "{ this is not a model";
  }
  XGBoostModel m;
  Status s = m.LoadFromFile(path);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("XGBoosterLoadModel"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  // XGBoost's own text follows the call name (more than our prefix).
  EXPECT_GT(s.message().size(), std::string("XGBoost XGBoosterLoadModel(" + path + "): ").size() + 5) << s.message();
  EXPECT_FALSE(m.trained());
  std::filesystem::remove(path);

  Status b = m.LoadFromBytes("garbage bytes, not a model");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.message().find("XGBoosterLoadModelFromBuffer"), std::string::npos) << b.message();
}

TEST(XGBoostModelTest, MisuseIsReported) {
  XGBoostModel m;
  FeatureMatrix x = FeatureMatrix::Zero(3, 4);
  auto p = m.Predict(x);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(m.SaveToBytes().ok());

  EXPECT_EQ(m.Train(x, {1, 2}, {}, SmallParams()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.Train(x, {1, 2, 3}, {2}, SmallParams()).code(), StatusCode::kInvalidArgument);

  XGBoostParams bad = SmallParams();
  bad.objective = "no:such_objective";
  Status s = m.Train(x, {1, 2, 3}, {}, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("XGBoost"), std::string::npos) << s.message();

  ASSERT_TRUE(m.Train(x, {1, 2, 3}, {3}, SmallParams()).ok());
  FeatureMatrix wrong = FeatureMatrix::Zero(2, 5);
  EXPECT_EQ(m.Predict(wrong).status().code(), StatusCode::kInvalidArgument);
}

MeasuredCandidate Candidate(const std::string& key, const FeatureMatrix& x, int row, double seconds) {
  MeasuredCandidate c;
  c.workload_key = key;
  c.features.assign(x.row(row).data(), x.row(row).data() + x.cols());
  c.seconds = seconds;
  return c;
}

TEST(XGBoostCostModelTest, UpdatePredictSaveLoadAndLabels) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  FeatureMatrix x(60, kNumFeatures);
  for (int r = 0; r < x.rows(); ++r) {
    for (int c = 0; c < x.cols(); ++c) x(r, c) = u(rng);
  }
  std::vector<MeasuredCandidate> batch;
  for (int r = 0; r < 60; ++r) batch.push_back(Candidate(r < 30 ? "w1" : "w2", x, r, 1e-3 * (1 + x(r, 5))));
  batch[7].failed = true;

  XGBoostCostModelOptions options;
  options.params = SmallParams();
  XGBoostCostModel model(options);
  auto before = model.PredictFeatures(x);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, std::vector<double>(60, 0.0));  // untrained: ties
  ASSERT_TRUE(model.Update(batch).ok());
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(model.dataset().size(), 60u);
  EXPECT_EQ(model.dataset().num_workloads(), 2u);

  Dataset::TrainingSet t = model.dataset().Build();
  EXPECT_EQ(t.groups, (std::vector<unsigned>{30, 30}));
  EXPECT_EQ(t.labels[7], 0.f);  // failed
  EXPECT_EQ(*std::max_element(t.labels.begin(), t.labels.begin() + 30), 1.f);
  EXPECT_EQ(*std::max_element(t.labels.begin() + 30, t.labels.end()), 1.f);

  auto scores = model.PredictFeatures(x);
  ASSERT_TRUE(scores.ok());
  std::vector<double> truth;
  for (int r = 0; r < 60; ++r) truth.push_back(r == 7 ? 0 : 1 / (1 + x(r, 5)));
  EXPECT_GT(PairwiseAccuracy(*scores, truth), 0.8);

  const std::string path = TempPath("costmodel.json");
  ASSERT_TRUE(model.Save(path).ok());
  XGBoostCostModel loaded(options);
  ASSERT_TRUE(loaded.Load(path).ok());
  auto again = loaded.PredictFeatures(x);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *scores);
  std::filesystem::remove(path);

  MeasuredCandidate empty;
  empty.workload_key = "w3";
  EXPECT_EQ(model.Update({empty}).code(), StatusCode::kInvalidArgument);
}

TEST(DatasetTest, LabelKinds) {
  FeatureMatrix x = FeatureMatrix::Zero(4, kNumFeatures);
  Dataset d;
  // Throughputs 1000, 500, 125 per second and one failure.
  for (int r = 0; r < 4; ++r) {
    MeasuredCandidate c = Candidate("w", x, r, r == 0 ? 1e-3 : r == 1 ? 2e-3 : 8e-3);
    c.failed = r == 3;
    ASSERT_TRUE(d.Add(c).ok());
  }
  EXPECT_EQ(d.Build().labels, (std::vector<float>{1, 0.5f, 0.125f, 0}));
  EXPECT_EQ(d.Build(LabelKind::kLog).labels, (std::vector<float>{0, -1, -3, -4}));
  EXPECT_EQ(d.Build(LabelKind::kLogBins, 2).labels, (std::vector<float>{0, -2, -6, -8}));
  EXPECT_EQ(d.Build(LabelKind::kLevels).labels, (std::vector<float>{31, 16, 4, 0}));
}

TEST(RandomCostModelTest, ScoresAreUniformAndSeeded) {
  RandomCostModel a(5), b(5);
  FeatureMatrix x = FeatureMatrix::Zero(100, kNumFeatures);
  auto sa = a.PredictFeatures(x);
  auto sb = b.PredictFeatures(x);
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(*sa, *sb);
  for (double v : *sa) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(MetricsTest, PairwiseAndTopK) {
  std::vector<double> truth = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({10, 20, 30, 40}, truth), 1.0);
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({40, 30, 20, 10}, truth), 0.0);
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({1, 1, 1, 1}, truth), 0.5);
  // One swapped pair out of six.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({1, 3, 2, 4}, truth), 5.0 / 6);
  // Pairs with equal truth do not count.
  EXPECT_DOUBLE_EQ(PairwiseAccuracy({2, 1, 3}, {5, 5, 6}), 1.0);

  EXPECT_DOUBLE_EQ(TopKScore({4, 3, 2, 1}, truth, 1), 0.25);  // picks the slowest
  EXPECT_DOUBLE_EQ(TopKScore({4, 3, 2, 1}, truth, 2), 0.5);
  EXPECT_DOUBLE_EQ(TopKScore({1, 2, 3, 4}, truth, 1), 1.0);
  EXPECT_DOUBLE_EQ(TopKScore({1, 2, 3, 4}, {0, 0, 0, 0}, 1), 0.0);

  RankingReport r = EvaluateRanking({1, 2, 2, 1}, {1, 2, 1, 2}, {"a", "a", "b", "b"});
  EXPECT_EQ(r.num_groups, 2u);
  EXPECT_DOUBLE_EQ(r.pairwise, 0.5);  // right in a, wrong in b
  EXPECT_DOUBLE_EQ(r.top1, 0.75);     // 1 in a, 1/2 in b
}

}  // namespace
}  // namespace tunefarm::costmodel
