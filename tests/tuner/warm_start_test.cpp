// Transfer: a tuning loop on a new workload learns first from the log's
// records of other workloads on the same target and device, and only those.
#include "tunefarm/tuner/warm_start.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/costmodel/metrics.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

Workload Matmul(int m) {
  auto w = ParseWorkload("workload mm(M = " + std::to_string(m) +
                         ", N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

class WarmStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("tunefarm_warm_" + std::to_string(::getpid()) + ".db");
    fs::remove(path_);
    auto db = database::Database::Open(path_.string());
    ASSERT_TRUE(db.ok());
    db_ = std::move(db).value();
  }
  void TearDown() override {
    db_.reset();
    fs::remove(path_);
    fs::remove(path_.string() + "-wal");
    fs::remove(path_.string() + "-shm");
  }
  // Tunes `w` for `trials` on the test device (synthetic times), as `device`.
  TuningLoop Tune(const Workload& w, int trials, const std::string& device, int warm_start,
                  costmodel::CostModel* model, TestDeviceMeasurer* measurer) {
    TuneOptions o;
    o.target = Target::Host();
    o.trials = trials;
    o.batch_size = 8;
    o.device = device;
    o.warm_start_records = warm_start;
    o.search.population = 32;
    return TuningLoop(o, db_.get(), measurer, model);
  }
  fs::path path_;
  std::unique_ptr<database::Database> db_;
};

TEST_F(WarmStartTest, NewWorkloadLearnsFromOtherWorkloadsOfTheSameDevice) {
  TestDeviceMeasurer measurer;
  std::atomic<bool> stop{false};
  {
    costmodel::XGBoostCostModel model;
    TuningLoop a = Tune(Matmul(64), 24, "dev-a", 1000, &model, &measurer);
    ASSERT_TRUE(a.Run({*MakeTuneTask(Matmul(64))}, stop, nullptr).ok());
    EXPECT_EQ(a.transfer_records(), 0);  // nothing else in the log yet
  }
  {
    costmodel::XGBoostCostModel model;
    TuningLoop other = Tune(Matmul(96), 16, "dev-b", 1000, &model, &measurer);
    ASSERT_TRUE(other.Run({*MakeTuneTask(Matmul(96))}, stop, nullptr).ok());
    EXPECT_EQ(other.transfer_records(), 0) << "dev-a's records were taken for dev-b";
  }
  costmodel::XGBoostCostModel model;
  TuningLoop b = Tune(Matmul(48), 8, "dev-a", 1000, &model, &measurer);
  ASSERT_TRUE(b.Run({*MakeTuneTask(Matmul(48))}, stop, nullptr).ok());
  EXPECT_EQ(b.transfer_records(), 24);  // all of mm64's on dev-a, none of dev-b's
  EXPECT_EQ(b.transfer_workloads(), 1);

  costmodel::XGBoostCostModel off;
  TuningLoop c = Tune(Matmul(40), 8, "dev-a", 0, &off, &measurer);
  ASSERT_TRUE(c.Run({*MakeTuneTask(Matmul(40))}, stop, nullptr).ok());
  EXPECT_EQ(c.transfer_records(), 0);
}

// Pairs of candidates of a measured batch whose throughputs differ: the
// pairs a ranking check can count (equal times rank neither way).
size_t DistinctPairs(const std::vector<costmodel::MeasuredCandidate>& batch) {
  std::vector<double> throughput;
  for (const costmodel::MeasuredCandidate& c : batch) throughput.push_back(!c.failed && c.seconds > 0 ? 1 / c.seconds : 0);
  return costmodel::CountAgreeingPairs(throughput, throughput).pairs;
}

// The XGBoost model, noting per Update the batch's distinct pairs and how
// many pairs the transfer check counted on it.
class BatchRecordingModel : public costmodel::XGBoostCostModel {
 public:
  using XGBoostCostModel::XGBoostCostModel;
  Status Update(const std::vector<costmodel::MeasuredCandidate>& measured) override {
    const size_t before = transfer_report().pairs;
    Status status = XGBoostCostModel::Update(measured);
    counted.push_back(transfer_report().pairs - before);
    distinct.push_back(DistinctPairs(measured));
    return status;
  }
  std::vector<size_t> counted, distinct;
};

// The loop's measured batches reach the transfer check: each batch after the
// own-records model exists is ranked by both models, and the report and the
// dataset agree on whether the transfer records are still there.
TEST_F(WarmStartTest, MeasuredBatchesAreCheckedAgainstTheTransferRecords) {
  TestDeviceMeasurer measurer;
  std::atomic<bool> stop{false};
  {
    costmodel::XGBoostCostModel model;
    TuningLoop a = Tune(Matmul(64), 40, "dev", 0, &model, &measurer);
    ASSERT_TRUE(a.Run({*MakeTuneTask(Matmul(64))}, stop, nullptr).ok());
  }
  costmodel::XGBoostCostModelOptions options;
  options.transfer_check_min_pairs = 1000000;  // never drop: every batch is counted
  BatchRecordingModel model(options);
  TuningLoop b = Tune(Matmul(48), 41, "dev", 1000, &model, &measurer);
  ASSERT_TRUE(b.Run({*MakeTuneTask(Matmul(48))}, stop, nullptr).ok());
  ASSERT_EQ(b.transfer_records(), 40);
  const costmodel::TransferReport& r = model.transfer_report();
  EXPECT_EQ(r.transfer_records, 40u);
  // The default schedule, then the batches of 8: with the first of them the
  // own-records model has rows to learn from; every later batch is ranked
  // by both models, each of its pairs of distinct measured times counted
  // once (the test device times a program the same whenever it measures
  // it, so a program measured again ties, and so may two programs).
  ASSERT_GE(model.counted.size(), 6u);
  for (size_t i = 0; i < model.counted.size(); ++i) {
    SCOPED_TRACE("Update " + std::to_string(i));
    EXPECT_EQ(model.counted[i], i < 2 ? 0u : model.distinct[i]);
  }
  EXPECT_GT(r.pairs, 2u * 28u);
  EXPECT_FALSE(r.dropped);
  EXPECT_EQ(model.dataset().num_workloads(), 2u);
  EXPECT_GE(r.with_transfer, 0.0);
  EXPECT_LE(r.with_transfer, 1.0);
  EXPECT_GE(r.own_only, 0.0);
  EXPECT_LE(r.own_only, 1.0);

  // With the default threshold, a drop leaves only the job's own rows.
  costmodel::XGBoostCostModel checked;
  TuningLoop c = Tune(Matmul(40), 81, "dev", 1000, &checked, &measurer);
  ASSERT_TRUE(c.Run({*MakeTuneTask(Matmul(40))}, stop, nullptr).ok());
  const costmodel::TransferReport& rc = checked.transfer_report();
  EXPECT_GT(rc.pairs, 0u);
  EXPECT_EQ(checked.dataset().num_workloads(), rc.dropped ? 1u : 1u + size_t(c.transfer_workloads()));
  if (rc.dropped) {
    EXPECT_GE(rc.own_only, rc.with_transfer);
  }
}

TEST_F(WarmStartTest, CollectsEvenlyAndSkipsTheJobsOwnWorkloads) {
  TestDeviceMeasurer measurer;
  std::atomic<bool> stop{false};
  for (int m : {64, 80}) {
    costmodel::XGBoostCostModel model;
    TuningLoop loop = Tune(Matmul(m), 24, "dev", 0, &model, &measurer);
    ASSERT_TRUE(loop.Run({*MakeTuneTask(Matmul(m))}, stop, nullptr).ok());
  }
  auto policy = MakeSketchPolicy(Target::Host(), "");
  ASSERT_TRUE(policy.ok());
  TransferOptions o;
  o.target = RecordTarget(Target::Host()).target;
  o.device = "dev";
  o.max_records = 1000;
  o.max_per_workload = 10;
  auto set = CollectTransferRecords(db_.get(), policy->get(), o);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->records.size(), 20u);
  EXPECT_EQ(set->workloads, 2);
  o.skip.insert(MakeTuneTask(Matmul(64))->hash);
  set = CollectTransferRecords(db_.get(), policy->get(), o);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->records.size(), 10u);
  for (const auto& r : set->records) EXPECT_EQ(r.workload_key, MakeTuneTask(Matmul(80))->hash);
  o.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1";
  set = CollectTransferRecords(db_.get(), policy->get(), o);
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->records.empty());
}

}  // namespace
}  // namespace tunefarm::tuner
