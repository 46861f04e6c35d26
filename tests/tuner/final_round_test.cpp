// The final round (TuneOptions::final_candidates): once the search has spent
// its share of the budget, each task's fastest traces are measured again until
// each has final_measurements records, then the next ones while the budget lasts. Its trials come out of the budget, are
// not taught to the cost model, and a log already at its budget gets none.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tuning_loop_test_util.h"

namespace tunefarm::tuner {
namespace {


// Per trace: its records, successful ones' mean, and its first record's id.
struct TraceLog {
  int records = 0;
  int ok = 0;
  double sum = 0;
  int64_t first_id = 0;
  double Mean() const { return sum / ok; }
};

class FinalRoundTest : public testing::TuningLogTest {
 protected:
  FinalRoundTest() : TuningLogTest("tunefarm_final_") {}
  Status Tune(int trials, int final_candidates, const Workload& w = testing::SmallMatmul()) {
    TuneOptions o = testing::LoopOptions(trials);
    o.confirm_best = confirm_best_;
    o.final_candidates = final_candidates;
    o.final_measurements = 3;
    loop_ = std::make_unique<TuningLoop>(o, db_.get(), &measurer_, &model_);
    std::atomic<bool> stop{false};
    return loop_->Run({*MakeTuneTask(w)}, stop, nullptr);
  }
  std::map<std::string, TraceLog> ByTrace() {
    std::map<std::string, TraceLog> out;
    for (const auto& r : Records()) {
      TraceLog& t = out[r.trace];
      if (t.records++ == 0) t.first_id = r.id;
      if (r.ok()) {
        ++t.ok;
        t.sum += *r.TimeSec();
      }
    }
    return out;
  }
  // The `n` fastest tuned traces by mean (ties to the older), as the log ranks them.
  std::vector<std::string> Fastest(size_t n) {
    std::vector<std::pair<std::pair<double, int64_t>, std::string>> ranked;
    for (const auto& [trace, t] : ByTrace()) {
      if (t.ok > 0 && !testing::IsDefaultTrace(trace)) ranked.push_back({{t.Mean(), t.first_id}, trace});
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::string> out;
    for (size_t i = 0; i < std::min(n, ranked.size()); ++i) out.push_back(ranked[i].second);
    return out;
  }
  // The loop's best is the log's: the same trace and mean as GetBest.
  void ExpectBestIsTheLogs() {
    const TaskStatus& status = loop_->status().at(0);
    auto best = db_->GetBest(status.hash, Records().front().target);
    ASSERT_TRUE(best.ok() && best->record) << best.status().ToString();
    EXPECT_EQ(best->record->trace, status.best_trace);
    EXPECT_DOUBLE_EQ(best->record->trace_mean_sec, status.best_seconds);
  }

  testing::LuckyOnceMeasurer measurer_;
  testing::CountingModel model_;
  bool confirm_best_ = true;
  std::unique_ptr<TuningLoop> loop_;
};

TEST_F(FinalRoundTest, TheFastestKernelsEndWithThreeMeasurementsWithinTheBudget) {
  measurer_.lucky_one_in = 0;  // every trace times the same each time: the finalists stay the fastest
  ASSERT_TRUE(Tune(64, 4).ok());
  const std::vector<database::TuningRecord> records = Records();
  EXPECT_EQ(records.size(), 64u) << "the final round's trials are part of the budget";
  const TaskStatus& status = loop_->status().at(0);
  EXPECT_EQ(status.trials, 64);
  // The search left an eighth of the 64 trials; the four leaders owed 7 of them.
  EXPECT_EQ(status.final_trials, 8);
  EXPECT_EQ(status.finalists, 5);

  const std::map<std::string, TraceLog> by_trace = ByTrace();
  const std::vector<std::string> fastest = Fastest(4);
  ASSERT_EQ(fastest.size(), 4u);
  for (const std::string& trace : fastest) EXPECT_EQ(by_trace.at(trace).records, 3) << trace;
  int measured_again = 0;
  for (const auto& [trace, t] : by_trace) {
    EXPECT_LE(t.records, 3) << trace;
    measured_again += t.records - 1;
  }
  EXPECT_EQ(status.confirmations, measured_again);
  // Only each program's first measurement teaches the model.
  EXPECT_EQ(model_.rows, by_trace.size());

  // The round is the log's last records, each of a trace measured before.
  for (size_t i = records.size() - size_t(status.final_trials); i < records.size(); ++i) {
    EXPECT_LT(by_trace.at(records[i].trace).first_id, records[i].id) << "record " << records[i].id;
  }
  EXPECT_EQ(status.best_trace, fastest.front());
  ExpectBestIsTheLogs();
}

TEST_F(FinalRoundTest, OffNoTraceIsMeasuredMoreThanTwice) {
  ASSERT_TRUE(Tune(64, 0).ok());
  EXPECT_EQ(Records().size(), 64u);
  for (const auto& [trace, t] : ByTrace()) EXPECT_LE(t.records, 2) << trace;
  EXPECT_EQ(loop_->status().at(0).final_trials, 0);
  EXPECT_EQ(loop_->status().at(0).finalists, 0);
}

// --trials is the whole job's budget: a log that holds it already measures
// nothing more, and a final round done once is not repeated on resume.
TEST_F(FinalRoundTest, ALogAtItsBudgetGetsNoFinalRound) {
  ASSERT_TRUE(Tune(48, 0).ok());
  ASSERT_TRUE(Tune(48, 4).ok());
  EXPECT_EQ(Records().size(), 48u);
  EXPECT_EQ(loop_->status().at(0).final_trials, 0);

  // More trials: the search goes on, and the new leaders get their round.
  ASSERT_TRUE(Tune(72, 4).ok());
  EXPECT_EQ(Records().size(), 72u);
  EXPECT_GT(loop_->status().at(0).final_trials, 0);
  const std::map<std::string, TraceLog> once = ByTrace();
  ASSERT_TRUE(Tune(72, 4).ok());
  EXPECT_EQ(Records().size(), 72u);
  EXPECT_EQ(loop_->status().at(0).final_trials, 0);
  EXPECT_EQ(ByTrace().size(), once.size());
  ExpectBestIsTheLogs();
}

// Every first measurement is twice as fast as the kernel runs: the leaders
// the search leaves are all lucky, and each finalist measured again falls
// back. With budget to spare (a design space the search exhausts) the next
// leaders get their round too.
TEST_F(FinalRoundTest, FinalistsThatFallBackLetTheNextOnesIn) {
  measurer_.lucky_one_in = 1;
  confirm_best_ = false;
  auto tiny = ParseWorkload("workload scale(N = 8) {\n  A = input f32[N]\n  B[i] = A[i] * 2.0\n  output B\n}\n");
  ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
  ASSERT_TRUE(Tune(400, 2, *tiny).ok());
  const TaskStatus& status = loop_->status().at(0);
  const std::map<std::string, TraceLog> by_trace = ByTrace();
  ASSERT_LT(status.trials, 400) << "the search was to exhaust this design space";
  ASSERT_GE(by_trace.size(), 5u);  // the default and at least four tuned kernels
  EXPECT_GT(status.finalists, 2) << "a round after the first one";
  int with_three = 0;
  for (const auto& [trace, t] : by_trace) with_three += t.records == 3;
  EXPECT_EQ(with_three, status.finalists);
  EXPECT_EQ(status.final_trials, 2 * status.finalists);
  ExpectBestIsTheLogs();
}

}  // namespace
}  // namespace tunefarm::tuner
