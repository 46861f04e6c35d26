// A new best measured once is measured again, with the task's next batch:
// the tuning loop's best is the trace with the lowest mean over its
// measurements, the same trace the database hands out, also after a resume;
// without confirmation the best is the luckiest single measurement. A
// confirmation is a trial, is never repeated (also across a resume), and is
// not taught to the cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tuning_loop_test_util.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner {
namespace {


struct TraceMeans {
  std::map<std::string, std::pair<double, int>> sums;  // trace -> (sum of means, records)
  std::map<std::string, int64_t> first_id;             // ties go to the older trace, as in the database
  std::string best;
  double Mean(const std::string& trace) const { return sums.at(trace).first / sums.at(trace).second; }
};

class ConfirmBestTest : public testing::TuningLogTest {
 protected:
  ConfirmBestTest() : TuningLogTest("tunefarm_confirm_") {}
  Status Tune(int trials, bool confirm) {
    TuneOptions o = testing::LoopOptions(trials);
    o.confirm_best = confirm;
    loop_ = std::make_unique<TuningLoop>(o, db_.get(), &measurer_, model_);
    std::atomic<bool> stop{false};
    return loop_->Run({*MakeTuneTask(testing::SmallMatmul())}, stop, nullptr);
  }
  // Tune, stopped (as Ctrl-C stops it) after the first batch that leaves a
  // tuned best measured once; returns that best, or "" if no batch did.
  std::string TuneStoppedOnAnUnconfirmedBest(int trials) {
    loop_ = std::make_unique<TuningLoop>(testing::LoopOptions(trials), db_.get(), &measurer_, model_);
    std::atomic<bool> stop{false};
    std::string unconfirmed;
    auto on_progress = [&](const Progress& p) {
      const std::string& best = p.tasks->at(0).best_trace;
      if (stop || best.empty() || best == Trace().ToText() || RecordsPerTrace()[best] != 1) return;
      unconfirmed = best;
      stop = true;
    };
    Status st = loop_->Run({*MakeTuneTask(testing::SmallMatmul())}, stop, on_progress);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return unconfirmed;
  }
  // Every trace's mean over its records, by brute force, and the lowest; a
  // trace with a wrong result on record is never the best.
  TraceMeans Means() {
    TraceMeans means;
    std::set<std::string> wrong;
    for (const auto& r : Records()) {
      if (r.error_kind == database::ErrorKind::kWrongResult) wrong.insert(r.trace);
    }
    for (const auto& r : Records()) {
      if (!r.ok()) continue;
      auto& sum = means.sums[r.trace];
      sum.first += *r.TimeSec();
      sum.second += 1;
      means.first_id.emplace(r.trace, r.id);
    }
    for (const auto& [trace, sum] : means.sums) {
      if (wrong.count(trace)) continue;
      if (means.best.empty() || means.Mean(trace) < means.Mean(means.best) ||
          (means.Mean(trace) == means.Mean(means.best) && means.first_id[trace] < means.first_id[means.best])) {
        means.best = trace;
      }
    }
    return means;
  }
  // The loop's best, the database's best and the brute-force best agree.
  void ExpectBestsAgree() {
    TraceMeans means = Means();
    const TaskStatus& status = loop_->status().at(0);
    EXPECT_EQ(status.best_trace, means.best);
    EXPECT_DOUBLE_EQ(status.best_seconds, means.Mean(means.best));
    auto best = db_->GetBest(status.hash, Records().front().target);
    ASSERT_TRUE(best.ok() && best->record) << best.status().ToString();
    EXPECT_EQ(best->record->trace, means.best);
    EXPECT_EQ(best->record->id, status.best_record_id);
    EXPECT_DOUBLE_EQ(best->record->trace_mean_sec, means.Mean(means.best));
  }

  // Every trace's count of records in the log.
  std::map<std::string, int> RecordsPerTrace() {
    std::map<std::string, int> per_trace;
    for (const auto& r : Records()) ++per_trace[r.trace];
    return per_trace;
  }

  testing::LuckyOnceMeasurer measurer_;
  costmodel::CostModel* model_ = nullptr;  // what Tune's loop is taught through; none by default
  std::unique_ptr<TuningLoop> loop_;
};

TEST_F(ConfirmBestTest, ANewBestIsMeasuredAgainAndRanksByItsMean) {
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());
  std::vector<database::TuningRecord> records = Records();
  EXPECT_EQ(records.size(), 96u);  // a confirmation is a trial of the budget
  const TaskStatus& status = loop_->status().at(0);
  EXPECT_EQ(status.trials, 96);
  TraceMeans means = Means();
  int measured_again = 0;
  for (const auto& [trace, sum] : means.sums) measured_again += sum.second - 1;
  EXPECT_GT(status.confirmations, 0);
  EXPECT_EQ(status.confirmations, measured_again);
  // Lucky traces lead at first; once measured again they fall back.
  bool a_lucky_trace_was_confirmed = false;
  for (const auto& [trace, sum] : means.sums) {
    if (sum.second > 1 && testing::LuckyOnceMeasurer::IsLucky(trace)) a_lucky_trace_was_confirmed = true;
  }
  EXPECT_TRUE(a_lucky_trace_was_confirmed);
  ExpectBestsAgree();
}

TEST_F(ConfirmBestTest, WithoutConfirmationTheBestIsTheLuckiestMeasurement) {
  ASSERT_TRUE(Tune(96, /*confirm=*/false).ok());
  TraceMeans means = Means();
  for (const auto& [trace, sum] : means.sums) EXPECT_EQ(sum.second, 1) << trace;
  EXPECT_EQ(loop_->status().at(0).confirmations, 0);
  EXPECT_TRUE(testing::LuckyOnceMeasurer::IsLucky(means.best));
  ExpectBestsAgree();
}

// A confirmation rides with the task's next batch instead of being a round of
// its own, which on a fleet would leave every worker but one idle: the
// one-candidate rounds are the untuned baseline and the closing confirmation
// (the search's last batch may have found a new best), and every round
// between them but the search's last is a full batch.
TEST_F(ConfirmBestTest, AConfirmationIsMeasuredWithTheNextBatch) {
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());
  ASSERT_GT(loop_->status().at(0).confirmations, 0);
  const std::vector<size_t>& sizes = measurer_.batch_sizes;
  ASSERT_GE(sizes.size(), 3u);
  EXPECT_EQ(sizes.front(), 1u);  // the baseline
  // The closing round: one confirmation at a time (each may hand the lead on).
  size_t search_rounds_end = sizes.size();
  while (search_rounds_end > 1 && sizes[search_rounds_end - 1] == 1) --search_rounds_end;
  EXPECT_GE(sizes.size() - search_rounds_end, 1u) << "no closing confirmation";
  EXPECT_LE(sizes.size() - search_rounds_end, 2u);
  for (size_t k = 1; k + 1 < search_rounds_end; ++k) EXPECT_EQ(sizes[k], 8u) << "round " << k;
  EXPECT_EQ(Records().size(), 96u);
  // Every trace measured twice had its second record first in a later round
  // than its first record's (ids count up from 1 in commit order).
  std::vector<int64_t> round_start;  // the id of each round's first record
  int64_t next_id = 1;
  for (size_t size : sizes) {
    round_start.push_back(next_id);
    next_id += int64_t(size);
  }
  auto round_of = [&](int64_t id) { return std::upper_bound(round_start.begin(), round_start.end(), id) - round_start.begin() - 1; };
  std::map<std::string, std::vector<int64_t>> ids;
  for (const auto& r : Records()) ids[r.trace].push_back(r.id);
  int measured_again = 0;
  for (const auto& [trace, trace_ids] : ids) {
    if (trace_ids.size() < 2) continue;
    ++measured_again;
    EXPECT_GT(round_of(trace_ids[1]), round_of(trace_ids[0])) << trace;
    EXPECT_EQ(trace_ids[1], round_start[size_t(round_of(trace_ids[1]))]) << trace;
  }
  EXPECT_EQ(measured_again, loop_->status().at(0).confirmations);
  ExpectBestsAgree();
}

// A confirmation that fails is not tried again: the trace keeps its one
// time, and every trace is measured at most twice.
TEST_F(ConfirmBestTest, AFailedConfirmationIsNotRepeated) {
  measurer_.fail_again = true;
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());
  std::map<std::string, int> per_trace;
  int failed = 0;
  for (const auto& r : Records()) {
    ++per_trace[r.trace];
    failed += !r.ok();
  }
  int measured_again = 0;
  for (const auto& [trace, count] : per_trace) {
    EXPECT_LE(count, 2) << trace;
    measured_again += count - 1;
  }
  const TaskStatus& status = loop_->status().at(0);
  EXPECT_GT(failed, 0);
  EXPECT_EQ(status.errors, failed);
  EXPECT_EQ(status.confirmations, measured_again);
  ExpectBestsAgree();
}

// A best whose second measurement is a wrong result is dropped: the loop and
// the database then agree on the next trace.
TEST_F(ConfirmBestTest, ABestThatComputesAWrongResultOnceIsDropped) {
  measurer_.fail_again = true;
  measurer_.again_error = MeasureErrorKind::kWrongResult;
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());
  std::set<std::string> wrong;
  for (const auto& r : Records()) {
    if (r.error_kind == database::ErrorKind::kWrongResult) wrong.insert(r.trace);
  }
  ASSERT_FALSE(wrong.empty());
  EXPECT_EQ(wrong.count(loop_->status().at(0).best_trace), 0u);
  ExpectBestsAgree();
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());  // resumed: the same best
  EXPECT_EQ(wrong.count(loop_->status().at(0).best_trace), 0u);
  ExpectBestsAgree();
}

// A resumed loop reads the log's repeated measurements back into the same
// ranking, before it measures anything.
TEST_F(ConfirmBestTest, AResumedLoopRanksByTheMean) {
  ASSERT_TRUE(Tune(64, /*confirm=*/true).ok());
  ASSERT_GT(loop_->status().at(0).confirmations, 0);
  ASSERT_TRUE(Tune(64, /*confirm=*/true).ok());  // the budget is spent: resume only
  EXPECT_EQ(Records().size(), 64u);
  ExpectBestsAgree();
}

// A resumed run counts the confirmations already in the log, and measures
// no trace a third time: not one confirmed before, nor one whose confirmation
// failed and so still has its one lucky time.
TEST_F(ConfirmBestTest, AResumedRunCountsTheLogsConfirmationsAndRepeatsNone) {
  measurer_.fail_again = true;
  ASSERT_TRUE(Tune(48, /*confirm=*/true).ok());
  const int first_run = loop_->status().at(0).confirmations;
  ASSERT_GT(first_run, 0);
  ASSERT_TRUE(Tune(120, /*confirm=*/true).ok());
  EXPECT_EQ(Records().size(), 120u);
  int measured_again = 0;
  for (const auto& [trace, count] : RecordsPerTrace()) {
    EXPECT_LE(count, 2) << trace;
    measured_again += count - 1;
  }
  EXPECT_EQ(loop_->status().at(0).confirmations, measured_again);
  ExpectBestsAgree();
}

// The cost model learns each program once: a confirmation is not taught
// again, neither as it is measured nor when a resumed run reads the log back.
TEST_F(ConfirmBestTest, AConfirmationIsNotTaughtToTheModel) {
  testing::CountingModel live;
  model_ = &live;
  ASSERT_TRUE(Tune(64, /*confirm=*/true).ok());
  ASSERT_GT(loop_->status().at(0).confirmations, 0);
  const size_t programs = RecordsPerTrace().size();
  EXPECT_EQ(live.rows, programs);
  testing::CountingModel resumed;
  model_ = &resumed;
  ASSERT_TRUE(Tune(64, /*confirm=*/true).ok());  // the budget is spent: resume only
  EXPECT_EQ(resumed.rows, programs);
}

// A run that spends its budget ends with its best measured at least twice:
// the search leaves a trial for the new best of its last batch, and a best
// that still has one measurement after it is measured again past the budget.
// (A 32-trial job could hand out a best measured once.)
TEST_F(ConfirmBestTest, EveryRunEndsWithItsBestMeasuredTwice) {
  measurer_.default_slowdown = 10;  // a tuned kernel leads from the first batch on
  int tuned_bests = 0;
  for (int trials = 9; trials <= 97; trials += 8) {
    ASSERT_TRUE(Tune(trials, /*confirm=*/true).ok());  // resumes the log, 8 more trials each time
    // The budget is spent; past it, only measurements of traces measured
    // before (a confirmation that fell back hands the lead on).
    std::vector<database::TuningRecord> records = Records();
    ASSERT_GE(records.size(), size_t(trials));
    std::set<std::string> seen;
    for (size_t k = 0; k < records.size(); ++k) {
      if (k >= size_t(trials)) {
        EXPECT_EQ(seen.count(records[k].trace), 1u) << "record " << k + 1 << " past the budget";
      }
      seen.insert(records[k].trace);
    }
    const std::string best = loop_->status().at(0).best_trace;
    if (best.empty() || best == Trace().ToText()) continue;  // the untuned default is never measured again
    ++tuned_bests;
    EXPECT_GE(RecordsPerTrace()[best], 2) << "a run of " << trials << " trials ended on a best measured once";
    ExpectBestsAgree();
  }
  EXPECT_GT(tuned_bests, 0);
}

// A best the stopped run left measured once is the first candidate the
// resumed run measures.
TEST_F(ConfirmBestTest, AResumedRunFirstConfirmsTheBestTheStoppedRunLeft) {
  const std::string best = TuneStoppedOnAnUnconfirmedBest(96);
  ASSERT_FALSE(best.empty()) << "no batch left a best measured once";
  const size_t stopped_at = Records().size();
  ASSERT_LT(stopped_at, 96u);
  ASSERT_TRUE(Tune(96, /*confirm=*/true).ok());
  std::vector<database::TuningRecord> records = Records();
  ASSERT_EQ(records.size(), 96u);
  EXPECT_EQ(records[stopped_at].trace, best) << "the resumed run's first record is not the unconfirmed best";
}

}  // namespace
}  // namespace tunefarm::tuner
