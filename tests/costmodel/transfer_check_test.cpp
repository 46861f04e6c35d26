// XGBoostCostModel's transfer check: transfer records that rank this job's
// measured batches worse than a model of the job's own records are dropped;
// transfer that ranks them better is kept; the check can be turned off.
// Synthetic rows: feature 0 sets the throughput, features 1-31 are uniform
// noise, the rest 0 (constant features cost training time and change nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/metrics.h"

namespace tunefarm::costmodel {
namespace {

using Throughput = std::function<double(float x0)>;
constexpr int kNoisyFeatures = 32;

// `n` candidates of workload `key` whose throughput is f(feature 0).
std::vector<MeasuredCandidate> Rows(const std::string& key, int n, const Throughput& f, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<MeasuredCandidate> out;
  for (int r = 0; r < n; ++r) {
    MeasuredCandidate c;
    c.workload_key = key;
    c.features.assign(kNumFeatures, 0.f);
    for (int f = 0; f < kNoisyFeatures; ++f) c.features[f] = u(rng);
    c.seconds = 1.0 / f(c.features[0]);
    out.push_back(std::move(c));
  }
  return out;
}

// Held-out pairwise accuracy of the model on fresh rows of `f`.
double HeldOut(XGBoostCostModel& model, const Throughput& f, std::mt19937_64& rng) {
  std::vector<MeasuredCandidate> rows = Rows("held-out", 200, f, rng);
  FeatureMatrix x(static_cast<Eigen::Index>(rows.size()), kNumFeatures);
  std::vector<double> truth;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::copy(rows[i].features.begin(), rows[i].features.end(), x.row(static_cast<Eigen::Index>(i)).data());
    truth.push_back(1.0 / rows[i].seconds);
  }
  auto scores = model.PredictFeatures(x);
  EXPECT_TRUE(scores.ok());
  return scores.ok() ? PairwiseAccuracy(*scores, truth) : 0;
}

XGBoostCostModelOptions SmallOptions() {
  XGBoostCostModelOptions o;
  o.params.num_rounds = 30;
  o.params.max_depth = 4;
  return o;
}

const Throughput kRising = [](float x0) { return 1.0 + x0; };
const Throughput kFalling = [](float x0) { return 2.0 - x0; };

TEST(TransferCheckTest, MisleadingTransferIsDroppedOnceEnoughPairsAreRanked) {
  std::mt19937_64 rng(11);
  XGBoostCostModel model(SmallOptions());
  // Two other workloads where a larger feature 0 is faster; in this job it is slower.
  std::vector<MeasuredCandidate> transfer = Rows("other-a", 200, kRising, rng);
  for (MeasuredCandidate& c : Rows("other-b", 200, kRising, rng)) transfer.push_back(std::move(c));
  ASSERT_TRUE(model.WarmStart(transfer).ok());
  EXPECT_EQ(model.transfer_report().transfer_records, 400u);
  EXPECT_LT(HeldOut(model, kFalling, rng), 0.2);  // transfer alone ranks this job backwards

  // Batch 1 trains the own-records model; batch 2 (120 pairs) is ranked by
  // both but is below the 200 pairs needed; batch 3 brings 240 and the drop.
  ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  EXPECT_EQ(model.transfer_report().pairs, 0u);
  ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  EXPECT_EQ(model.transfer_report().pairs, 120u);
  EXPECT_FALSE(model.transfer_report().dropped);
  EXPECT_EQ(model.dataset().num_workloads(), 3u);
  ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());

  const TransferReport& r = model.transfer_report();
  EXPECT_TRUE(r.dropped);
  EXPECT_EQ(r.pairs, 240u);
  EXPECT_EQ(r.own_records_at_drop, 48u);
  EXPECT_GT(r.own_only, r.with_transfer);
  EXPECT_LT(r.with_transfer, 0.5);
  // Only the job's own records are left, and the model now ranks this job right.
  EXPECT_EQ(model.dataset().num_workloads(), 1u);
  EXPECT_EQ(model.dataset().size(), 48u);
  EXPECT_GT(HeldOut(model, kFalling, rng), 0.8);

  // No more checks after the drop.
  ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  EXPECT_EQ(model.transfer_report().pairs, 240u);
  EXPECT_EQ(model.dataset().size(), 64u);
}

TEST(TransferCheckTest, TransferThatRanksBetterIsKept) {
  std::mt19937_64 rng(12);
  // A throughput with several peaks: 400 transfer rows teach it, 16 to 48 own
  // rows among 31 noise features do not.
  const Throughput peaks = [](float x0) { return 2.0 + std::sin(18.0 * x0); };
  XGBoostCostModel model(SmallOptions());
  ASSERT_TRUE(model.WarmStart(Rows("other", 400, peaks, rng)).ok());
  for (int batch = 0; batch < 4; ++batch) ASSERT_TRUE(model.Update(Rows("own", 16, peaks, rng)).ok());

  const TransferReport& r = model.transfer_report();
  EXPECT_FALSE(r.dropped);
  EXPECT_EQ(r.pairs, 360u);
  EXPECT_GT(r.with_transfer, r.own_only);
  EXPECT_GT(r.with_transfer, 0.75);
  EXPECT_EQ(model.dataset().num_workloads(), 2u);
  EXPECT_EQ(model.dataset().size(), 464u);
}

TEST(TransferCheckTest, TurnedOffKeepsTransferUnchecked) {
  std::mt19937_64 rng(13);
  XGBoostCostModelOptions options = SmallOptions();
  options.transfer_check_min_pairs = 0;
  XGBoostCostModel model(options);
  ASSERT_TRUE(model.WarmStart(Rows("other", 200, kRising, rng)).ok());
  for (int batch = 0; batch < 4; ++batch) ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  EXPECT_EQ(model.transfer_report().transfer_records, 200u);
  EXPECT_FALSE(model.transfer_report().dropped);
  EXPECT_EQ(model.transfer_report().pairs, 0u);
  EXPECT_EQ(model.dataset().size(), 264u);
}

TEST(TransferCheckTest, WithoutTransferThereIsNothingToCheck) {
  std::mt19937_64 rng(14);
  XGBoostCostModel model(SmallOptions());
  for (int batch = 0; batch < 3; ++batch) ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  EXPECT_EQ(model.transfer_report().transfer_records, 0u);
  EXPECT_EQ(model.transfer_report().pairs, 0u);
  EXPECT_FALSE(model.transfer_report().dropped);
  EXPECT_GT(HeldOut(model, kFalling, rng), 0.8);
}

TEST(TransferCheckTest, ABatchWithoutUsableRowsIsRejected) {
  std::mt19937_64 rng(15);
  XGBoostCostModel model(SmallOptions());
  ASSERT_TRUE(model.WarmStart(Rows("other", 100, kRising, rng)).ok());
  ASSERT_TRUE(model.Update(Rows("own", 16, kFalling, rng)).ok());
  MeasuredCandidate empty;
  empty.workload_key = "own";
  Status st = model.Update({empty});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("neither features nor a lowered program"), std::string::npos) << st.message();
}

TEST(DatasetTest, EraseCountAndBuildWithout) {
  std::mt19937_64 rng(16);
  Dataset d;
  for (const MeasuredCandidate& c : Rows("a", 3, kRising, rng)) ASSERT_TRUE(d.Add(c).ok());
  for (const MeasuredCandidate& c : Rows("b", 5, kRising, rng)) ASSERT_TRUE(d.Add(c).ok());
  EXPECT_EQ(d.CountRows({}), 8u);
  EXPECT_EQ(d.CountRows({"a"}), 5u);
  Dataset::TrainingSet t = d.Build(LabelKind::kNormalized, 2, {"a"});
  EXPECT_EQ(t.x.rows(), 5);
  EXPECT_EQ(t.groups, (std::vector<unsigned>{5}));
  d.Erase("a");
  d.Erase("missing");
  EXPECT_EQ(d.size(), 5u);
  EXPECT_EQ(d.num_workloads(), 1u);
}

TEST(MetricsTest, AgreeingPairCountsAddUpAcrossBatches) {
  PairCounts c = CountAgreeingPairs({1, 3, 2, 4}, {1, 2, 3, 4});
  EXPECT_EQ(c.pairs, 6u);
  EXPECT_DOUBLE_EQ(c.agree, 5.0);
  c = CountAgreeingPairs({1, 1, 2}, {1, 2, 2});  // one tie in scores, one in truth
  EXPECT_EQ(c.pairs, 2u);
  EXPECT_DOUBLE_EQ(c.agree, 1.5);
}

}  // namespace
}  // namespace tunefarm::costmodel
