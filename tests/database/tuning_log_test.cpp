// The TuningLog interface (tuning_log.h): one contract, checked through a
// TuningLog& on each implementation -- a Database, and a LayeredDatabase with
// and without a system layer -- then what a system layer adds.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/database/tuning_log.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::TempDir;

enum class Kind { kDatabase, kLayeredAlone, kLayeredOverEmptySystem };

std::string KindName(const ::testing::TestParamInfo<Kind>& info) {
  switch (info.param) {
    case Kind::kDatabase: return "Database";
    case Kind::kLayeredAlone: return "LayeredAlone";
    case Kind::kLayeredOverEmptySystem: return "LayeredOverEmptySystem";
  }
  return "unknown";
}

class TuningLogContractTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case Kind::kDatabase:
        log_ = OpenOrDie(dir_.File("log.db"));
        break;
      case Kind::kLayeredAlone:
        log_ = Layered("");
        break;
      case Kind::kLayeredOverEmptySystem: {
        auto system = OpenOrDie(dir_.File("system.db"));
        ASSERT_TRUE(system->PrepareForDistribution().ok());
        system.reset();
        log_ = Layered(dir_.File("system.db"));
        break;
      }
    }
    ASSERT_NE(log_, nullptr);
  }

  std::unique_ptr<TuningLog> Layered(const std::string& system_path) {
    auto layered = LayeredDatabase::Open(dir_.File("log.db"), system_path);
    EXPECT_TRUE(layered.ok()) << layered.status().ToString();
    return layered.ok() ? std::move(layered).value() : nullptr;
  }

  TempDir dir_;
  std::unique_ptr<TuningLog> log_;
};

TEST_P(TuningLogContractTest, WorkloadsAreKeptByHashWithTheirFirstText) {
  TuningLog& log = *log_;
  ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w1")).ok());
  Workload again = MakeWorkload("w1");
  again.text = "another text";
  ASSERT_TRUE(log.CommitWorkload(again).ok());
  ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w2")).ok());
  auto w1 = log.GetWorkload("w1");
  ASSERT_TRUE(w1.ok() && w1->has_value());
  EXPECT_EQ(**w1, MakeWorkload("w1"));
  EXPECT_FALSE(log.GetWorkload("w3")->has_value());
  auto all = log.ListWorkloads();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
}

TEST_P(TuningLogContractTest, RecordsRankByTraceAndTheBestSaysItsLevelAndLayer) {
  TuningLog& log = *log_;
  ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w1")).ok());
  auto ids = log.CommitRecords({MakeRecord("w1", CpuTarget(), {3e-3}, "slow"),
                                MakeRecord("w1", CpuTarget(), {1e-3}, "fast"),
                                MakeRecord("w1", CpuTarget("znver4", 64), {0.5e-3}, "other-box")});
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 3u);

  auto top = log.GetTopK("w1", CpuTarget(), 5);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].trace, "fast");
  EXPECT_EQ((*top)[1].trace, "slow");
  auto by_string = log.GetTopKByTargetString("w1", CpuTarget().target, 1);
  ASSERT_TRUE(by_string.ok());
  ASSERT_EQ(by_string->size(), 1u);
  EXPECT_EQ((*by_string)[0].trace, "other-box");

  auto best = log.GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);
  EXPECT_EQ(best->layer, Layer::kUser);
  EXPECT_EQ(best->record->trace, "fast");
  // `usable` passes records over; the answer is the last one it accepted.
  std::vector<std::string> asked;
  best = log.GetBest("w1", CpuTarget(), [&](const TuningRecord& r) {
    asked.push_back(r.trace);
    return r.trace != "fast";
  });
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->record->trace, "slow");
  EXPECT_EQ(asked, (std::vector<std::string>{"fast", "slow"}));
  best = log.GetBest("w1", CpuTarget("unseen", 2), [](const TuningRecord&) { return false; });
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kNone);
  EXPECT_FALSE(best->record.has_value());
}

TEST_P(TuningLogContractTest, ForEachRecordAndExportSeeEveryRecordInOrder) {
  TuningLog& log = *log_;
  ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w1")).ok());
  ASSERT_TRUE(log.CommitRecords({MakeRecord("w1", CpuTarget(), {2e-3}, "a"),
                                 MakeRecord("w1", CpuTarget(), {1e-3}, "b")})
                  .ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(log.ForEachRecord({}, [&](const TuningRecord& r) {
                   seen.push_back(r.trace);
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
  // A visitor's error stops the walk and is the answer.
  int visits = 0;
  Status stopped = log.ForEachRecord({"w1", ""}, [&](const TuningRecord&) {
    ++visits;
    return Status::Cancelled("enough");
  });
  EXPECT_EQ(stopped.code(), StatusCode::kCancelled);
  EXPECT_EQ(visits, 1);

  std::ostringstream out;
  ASSERT_TRUE(log.ExportJsonl(out).ok());
  std::istringstream lines(out.str());
  int count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_EQ(count, 1 + 1 + 2);  // header, workload, records
}

INSTANTIATE_TEST_SUITE_P(EveryImplementation, TuningLogContractTest,
                         ::testing::Values(Kind::kDatabase, Kind::kLayeredAlone, Kind::kLayeredOverEmptySystem),
                         KindName);

// What a system layer under the user's adds, seen through the interface.
class LayeredTuningLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto system = OpenOrDie(dir_.File("system.db"));
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("w2")).ok());
    shared_ = MakeRecord("w1", CpuTarget(), {4e-3}, "shared");
    shared_.uid = "0123456789abcdef0123456789abcdef";
    ASSERT_TRUE(system->CommitRecords({MakeRecord("w1", CpuTarget(), {1e-3}, "system-fast"), shared_,
                                       MakeRecord("w2", CpuTarget(), {1e-3}, "system-w2")})
                    .ok());
    ASSERT_TRUE(system->PrepareForDistribution().ok());
    system.reset();
    system_bytes_ = testing::ReadFileBytes(dir_.File("system.db"));
    auto layered = LayeredDatabase::Open(dir_.File("user.db"), dir_.File("system.db"));
    ASSERT_TRUE(layered.ok()) << layered.status().ToString();
    layered_ = std::move(layered).value();
    TuningLog& log = *layered_;
    ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(log.CommitWorkload(MakeWorkload("w3")).ok());
    ASSERT_TRUE(log.CommitRecords({MakeRecord("w1", CpuTarget(), {2e-3}, "user"), shared_}).ok());
  }

  TempDir dir_;
  TuningRecord shared_;
  std::string system_bytes_;
  std::unique_ptr<LayeredDatabase> layered_;
};

TEST_F(LayeredTuningLogTest, WritesGoToTheUserLayerOnly) {
  EXPECT_EQ(layered_->user().ListWorkloads()->size(), 2u);
  int user_records = 0;
  ASSERT_TRUE(layered_->user().ForEachRecord({}, [&](const TuningRecord&) {
                   ++user_records;
                   return Status::OK();
                 }).ok());
  EXPECT_EQ(user_records, 2);
  layered_.reset();
  EXPECT_EQ(testing::ReadFileBytes(dir_.File("system.db")), system_bytes_);
}

TEST_F(LayeredTuningLogTest, ListsAndWalksBothLayersTheUsersFirstAndEachOnce) {
  TuningLog& log = *layered_;
  auto workloads = log.ListWorkloads();
  ASSERT_TRUE(workloads.ok());
  std::vector<std::string> hashes;
  for (const Workload& w : *workloads) hashes.push_back(w.hash);
  EXPECT_EQ(hashes, (std::vector<std::string>{"w1", "w3", "w2"}));

  std::vector<std::string> traces;
  ASSERT_TRUE(log.ForEachRecord({"w1", ""}, [&](const TuningRecord& r) {
                   traces.push_back(r.trace);
                   return Status::OK();
                 }).ok());
  // "shared" has one uid in both layers: one measurement, visited once.
  EXPECT_EQ(traces, (std::vector<std::string>{"user", "shared", "system-fast"}));
}

TEST_F(LayeredTuningLogTest, TopListsAreTheUnionAndTheExportIsTheUsers) {
  TuningLog& log = *layered_;
  auto top = log.GetTopKByTargetString("w1", CpuTarget().target, 5);
  ASSERT_TRUE(top.ok());
  std::vector<std::string> traces;
  for (const TuningRecord& r : *top) traces.push_back(r.trace);
  EXPECT_EQ(traces, (std::vector<std::string>{"system-fast", "user", "shared"}));
  auto exact = log.GetTopK("w1", CpuTarget(), 2);
  ASSERT_TRUE(exact.ok());
  ASSERT_EQ(exact->size(), 2u);
  EXPECT_EQ((*exact)[0].trace, "system-fast");

  // The same lines after the header (which carries the export's time).
  std::ostringstream layered_export, user_export;
  ASSERT_TRUE(log.ExportJsonl(layered_export).ok());
  ASSERT_TRUE(layered_->user().ExportJsonl(user_export).ok());
  auto body = [](const std::string& jsonl) { return jsonl.substr(jsonl.find('\n')); };
  EXPECT_EQ(body(layered_export.str()), body(user_export.str()));
  EXPECT_NE(layered_export.str().find("\"user\""), std::string::npos);
  EXPECT_EQ(layered_export.str().find("system-fast"), std::string::npos);
}

TEST_F(LayeredTuningLogTest, GetBestAsksTheSystemLayerWhenUsablePassesTheUsersOver) {
  TuningLog& log = *layered_;
  auto best = log.GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->layer, Layer::kUser);  // at equal levels the user's own measurement wins
  EXPECT_EQ(best->record->trace, "user");
  best = log.GetBest("w1", CpuTarget(), [](const TuningRecord& r) { return r.trace.rfind("system", 0) == 0; });
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->layer, Layer::kSystem);
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);
  EXPECT_EQ(best->record->trace, "system-fast");
}

}  // namespace
}  // namespace tunefarm::database
