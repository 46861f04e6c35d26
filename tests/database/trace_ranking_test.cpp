// A trace measured more than once ranks by the mean of its measurements:
// top-k and best answer one entry per trace, prune keeps whole traces, the
// v3 migration groups the records of files written before it, and an older
// file opened read-only still answers (a trace by its fastest record).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "test_util.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeRecord;
using testing::OpenOrDie;
using testing::TempDir;

class TraceRankingTest : public testing::OneWorkloadLogTest {
 protected:
  int64_t Commit(const std::string& trace, double ms, const Target& target = CpuTarget()) {
    auto id = db_->CommitRecord(MakeRecord("w1", target, {ms * 1e-3}, trace));
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
};

// "a" was lucky once (1.0 ms) and measured again (1.6 ms): its mean, 1.3 ms,
// ranks behind "b" (1.2 ms, once). The answer for "a" is its fastest record.
TEST_F(TraceRankingTest, ATraceRanksByTheMeanOfItsMeasurements) {
  int64_t a_fast = Commit("a", 1.0);
  int64_t b = Commit("b", 1.2);
  Commit("a", 1.6);
  Commit("c", 1.4);

  auto top = db_->GetTopK("w1", CpuTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->size(), 3u);  // one entry per trace
  EXPECT_EQ((*top)[0].trace, "b");
  EXPECT_EQ((*top)[0].id, b);
  EXPECT_EQ((*top)[0].trace_records, 1);
  EXPECT_DOUBLE_EQ((*top)[0].trace_mean_sec, 1.2e-3);
  EXPECT_EQ((*top)[1].trace, "a");
  EXPECT_EQ((*top)[1].id, a_fast);
  EXPECT_EQ((*top)[1].trace_records, 2);
  EXPECT_DOUBLE_EQ((*top)[1].trace_mean_sec, 1.3e-3);
  EXPECT_DOUBLE_EQ(*(*top)[1].TimeSec(), 1.0e-3);  // the record itself is unchanged
  EXPECT_DOUBLE_EQ(*(*top)[1].RankSec(), 1.3e-3);
  EXPECT_EQ((*top)[2].trace, "c");

  auto best = db_->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok() && best->record) << best.status().ToString();
  EXPECT_EQ(best->record->trace, "b");

  // k = 1 must not stop at "a"'s lucky record: its mean is only known after
  // looking at all its records.
  auto first = db_->GetTopK("w1", CpuTarget(), 1);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ(first->front().trace, "b");
}

// Records of the same trace on another target are another measurement
// context: they neither join nor shift this target's mean.
TEST_F(TraceRankingTest, TheMeanIsPerTarget) {
  Commit("a", 1.0);
  Commit("a", 9.0, CpuTarget("znver5"));
  auto top = db_->GetTopK("w1", CpuTarget(), 5);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ(top->front().trace_records, 1);
  EXPECT_DOUBLE_EQ(top->front().trace_mean_sec, 1.0e-3);
  auto by_string = db_->GetTopKByTargetString("w1", CpuTarget().target, 5);
  ASSERT_TRUE(by_string.ok());
  EXPECT_EQ(by_string->size(), 1u);  // znver5 is another target string
}

// Random logs: top-k agrees with ranking every trace by brute force.
TEST_F(TraceRankingTest, TopKAgreesWithBruteForceOnRandomLogs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> time_ms(1.0, 2.0);
  std::map<std::string, std::pair<double, int>> sums;
  for (int i = 0; i < 300; ++i) {
    std::string trace = "t" + std::to_string(rng() % 120);
    double ms = time_ms(rng);
    Commit(trace, ms);
    sums[trace].first += ms * 1e-3;
    sums[trace].second += 1;
  }
  std::vector<std::pair<double, std::string>> expected;
  for (const auto& [trace, sum] : sums) expected.push_back({sum.first / sum.second, trace});
  std::sort(expected.begin(), expected.end());
  for (int k : {1, 2, 5, 17, 200}) {
    auto top = db_->GetTopK("w1", CpuTarget(), k);
    ASSERT_TRUE(top.ok());
    ASSERT_EQ(top->size(), std::min<size_t>(k, expected.size())) << "k=" << k;
    for (size_t i = 0; i < top->size(); ++i) {
      EXPECT_EQ((*top)[i].trace, expected[i].second) << "k=" << k << " rank " << i;
      EXPECT_NEAR((*top)[i].trace_mean_sec, expected[i].first, 1e-15);
      EXPECT_EQ((*top)[i].trace_records, sums[expected[i].second].second);
    }
  }
}

// "a" ran fast once and then computed a wrong result: it never ranks, and
// prune drops it with its fast record.
TEST_F(TraceRankingTest, ATraceWithAWrongResultNeverRanks) {
  Commit("a", 1.0);
  TuningRecord wrong = testing::MakeFailedRecord("w1", CpuTarget(), ErrorKind::kWrongResult);
  wrong.trace = "a";
  ASSERT_TRUE(db_->CommitRecord(wrong).ok());
  Commit("b", 1.2);
  TuningRecord timeout = testing::MakeFailedRecord("w1", CpuTarget(), ErrorKind::kTimeout);
  timeout.trace = "b";  // a timeout says nothing about correctness
  ASSERT_TRUE(db_->CommitRecord(timeout).ok());
  auto top = db_->GetTopK("w1", CpuTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ(top->front().trace, "b");
  EXPECT_EQ(top->front().trace_records, 1);
  ASSERT_TRUE(db_->Prune(5).ok());
  EXPECT_EQ(db_->Stats()->records, 1);
  auto best = db_->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->record->trace, "b");
}

// Prune keeps every record of the k best traces: dropping a kept trace's
// slower records would rank it by its luckiest time again.
TEST_F(TraceRankingTest, PruneKeepsWholeTraces) {
  Commit("a", 1.0);
  Commit("b", 1.2);
  Commit("a", 1.6);
  Commit("c", 1.25);
  Commit("d", 1.9);
  auto deleted = db_->Prune(2);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 3);  // "a" (both records) and "d"
  auto top = db_->GetTopK("w1", CpuTarget(), 10);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].trace, "b");
  EXPECT_EQ((*top)[1].trace, "c");

  Commit("b", 2.0);  // b: 1.6 ms mean, behind c
  ASSERT_TRUE(db_->Prune(1).ok());
  auto stats = db_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->records, 1);
  auto best = db_->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->record->trace, "c");
}

// A file of schema version 1 with a trace measured twice: opened read-only
// (never migrated) a trace ranks by its fastest record, as that version did;
// opened read-write it is migrated and the two records rank as one trace.
TEST(TraceRankingMigrationTest, OlderFilesRankTheirRecordsAloneUntilMigrated) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  testing::RawExec(path, std::string(testing::kSchemaVersion1Sql) + R"sql(
INSERT INTO records VALUES (1, '0123456789abcdef0123456789abcde1', 1, 1, 'lucky', x'', 0.0010, 0, '', 'w', 'g', 'v', 1);
INSERT INTO records VALUES (2, '0123456789abcdef0123456789abcde2', 1, 1, 'steady', x'', 0.0012, 0, '', 'w', 'g', 'v', 2);
INSERT INTO records VALUES (3, '0123456789abcdef0123456789abcde3', 1, 1, 'lucky', x'', 0.0016, 0, '', 'w', 'g', 'v', 3);
)sql");
  {
    OpenOptions read_only;
    read_only.read_only = true;
    auto db = OpenOrDie(path, read_only);
    ASSERT_NE(db, nullptr);
    auto top = db->GetTopK("w1", testing::GpuTarget(), 10);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    ASSERT_EQ(top->size(), 2u);
    EXPECT_EQ((*top)[0].trace, "lucky");  // its fastest record, as that version ranked it
    EXPECT_EQ((*top)[0].trace_records, 1);
    EXPECT_DOUBLE_EQ((*top)[0].trace_mean_sec, 0.0010);
  }
  auto db = OpenOrDie(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->Stats()->schema_version, kSchemaVersion);
  auto top = db->GetTopK("w1", testing::GpuTarget(), 10);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].trace, "steady");
  EXPECT_EQ((*top)[1].trace, "lucky");
  EXPECT_EQ((*top)[1].trace_records, 2);
  EXPECT_DOUBLE_EQ((*top)[1].trace_mean_sec, 0.0013);
  // The migration lifted the append-only trigger for its own update only.
  std::string update = testing::RawQuery(path, "UPDATE records SET worker = 'x'");
  EXPECT_NE(update.find("append-only"), std::string::npos) << update;
  // ... and filled the new column for the records written before it.
  EXPECT_EQ(testing::RawQuery(path, "SELECT count(*) FROM records WHERE trace_hash = 0"), "0");
}

// Schema v4: a record's time is its fastest timed group. A file written
// before ranks by the means it stored until it is opened read-write; the
// migration then recomputes every successful record's time from its groups,
// and keeps the stored time of one whose groups cannot be read.
TEST(RecordTimeMigrationTest, OlderFilesRankByTheFastestGroupOnceMigrated) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  // 'bursty': groups 3, 1 and 2 ms (stored mean 2 ms); 'even': 1.5, 1.6 and
  // 1.4 ms (1.5 ms); 'unreadable': no groups, stored at 1.7 ms.
  testing::RawExec(path, std::string(testing::kSchemaVersion1Sql) + R"sql(
INSERT INTO records VALUES (1, '0123456789abcdef0123456789abcde1', 1, 1, 'bursty',
  x'fa7e6abc7493683ffca9f1d24d62503ffca9f1d24d62603f', 0.002, 0, '', 'w', 'g', 'v', 1);
INSERT INTO records VALUES (2, '0123456789abcdef0123456789abcde2', 1, 1, 'even',
  x'fa7e6abc7493583f2d431cebe2365a3fc7bab88d06f0563f', 0.0015, 0, '', 'w', 'g', 'v', 2);
INSERT INTO records VALUES (3, '0123456789abcdef0123456789abcde3', 1, 1, 'unreadable', x'', 0.0017, 0, '', 'w', 'g', 'v', 3);
INSERT INTO records VALUES (4, '0123456789abcdef0123456789abcde4', 1, 1, 'failed', x'', NULL, 3, 'timeout', 'w', 'g', 'v', 4);
)sql");
  auto ranked = [](Database* db) {
    std::vector<std::pair<std::string, double>> out;
    auto top = db->GetTopK("w1", testing::GpuTarget(), 10);
    EXPECT_TRUE(top.ok()) << top.status().ToString();
    if (top.ok()) {
      for (const TuningRecord& r : *top) out.push_back({r.trace, r.trace_mean_sec});
    }
    return out;
  };
  {
    OpenOptions read_only;
    read_only.read_only = true;
    auto db = OpenOrDie(path, read_only);
    ASSERT_NE(db, nullptr);
    using Ranked = std::vector<std::pair<std::string, double>>;
    EXPECT_EQ(ranked(db.get()), (Ranked{{"even", 0.0015}, {"unreadable", 0.0017}, {"bursty", 0.002}}));
  }
  auto db = OpenOrDie(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->Stats()->schema_version, kSchemaVersion);
  auto after = ranked(db.get());
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].first, "bursty");
  EXPECT_DOUBLE_EQ(after[0].second, 0.001);
  EXPECT_EQ(after[1].first, "even");
  EXPECT_DOUBLE_EQ(after[1].second, 0.0014);
  EXPECT_EQ(after[2].first, "unreadable");
  EXPECT_DOUBLE_EQ(after[2].second, 0.0017);
  EXPECT_EQ(testing::RawQuery(path, "SELECT count(*) FROM records WHERE mean_sec IS NULL"), "1");
  std::string update = testing::RawQuery(path, "UPDATE records SET worker = 'x'");
  EXPECT_NE(update.find("append-only"), std::string::npos) << update;
}

TEST(RecordTimeTest, TheFastestGroupAndNoneWithoutGroups) {
  EXPECT_EQ(RecordTime({}), std::nullopt);
  EXPECT_DOUBLE_EQ(*RecordTime({3e-3, 1e-3, 2e-3}), 1e-3);
  TuningRecord failed;
  failed.error_kind = ErrorKind::kTimeout;
  failed.run_secs = {1e-3};
  EXPECT_EQ(failed.TimeSec(), std::nullopt);
}

}  // namespace
}  // namespace tunefarm::database
