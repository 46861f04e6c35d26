// Synthetic records (a test device's invented times, record.h): stored and
// read back as such, never ranked, never the answer of a lookup, pruned apart
// from measured ones, carried through JSON Lines and merge; older logs have
// the test device's records marked by their toolchain, before and after the
// v5 migration.
#include <gtest/gtest.h>

#include <sstream>

#include "test_util.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

using testing::AllRecords;
using testing::CpuTarget;
using testing::MakeRecord;
using testing::OpenOrDie;
using testing::TempDir;

// The fingerprint a test device reports: the host's ISA and CPU, no toolchain.
Target TestDeviceTarget() { return CpuTarget("znver4", 2, std::string(kTestDeviceToolchain)); }

TuningRecord Synthetic(const Target& target, double secs, const std::string& trace) {
  TuningRecord r = MakeRecord("w1", target, {secs}, trace);
  r.synthetic = true;
  r.device = "test";
  return r;
}

using SyntheticRecordsTest = testing::OneWorkloadLogTest;

TEST_F(SyntheticRecordsTest, AreStoredButNeverRankOrAnswerALookup) {
  const Target real = CpuTarget();
  // A measured trace at 2 ms; the same trace "measured" at 0.1 ms by a
  // synthetic device on the same target, and a faster synthetic trace.
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", real, {0.002}, "measured")).ok());
  ASSERT_TRUE(db_->CommitRecord(Synthetic(real, 0.0001, "measured")).ok());
  ASSERT_TRUE(db_->CommitRecord(Synthetic(real, 0.0005, "invented")).ok());

  std::vector<TuningRecord> all = AllRecords(db_.get());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[0].synthetic);
  EXPECT_TRUE(all[1].synthetic);
  EXPECT_TRUE(all[2].synthetic);

  auto top = db_->GetTopK("w1", real, 10);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ((*top)[0].trace, "measured");
  EXPECT_FALSE((*top)[0].synthetic);
  EXPECT_EQ((*top)[0].trace_records, 1) << "a synthetic time shares the trace's mean";
  EXPECT_DOUBLE_EQ((*top)[0].trace_mean_sec, 0.002);

  auto by_string = db_->GetTopKByTargetString("w1", real.target, 10);
  ASSERT_TRUE(by_string.ok());
  ASSERT_EQ(by_string->size(), 1u);
  EXPECT_EQ((*by_string)[0].trace, "measured");

  auto best = db_->GetBest("w1", real);
  ASSERT_TRUE(best.ok());
  ASSERT_TRUE(best->record);
  EXPECT_EQ(best->record->trace, "measured");
  EXPECT_FALSE(best->record->synthetic);
}

TEST_F(SyntheticRecordsTest, ATestDevicesRecordsAloneLeaveNothingToServe) {
  // Only a test device's records, marked (a current worker) and unmarked but
  // carrying its toolchain (a worker of an older version): both are synthetic.
  ASSERT_TRUE(db_->CommitRecord(Synthetic(TestDeviceTarget(), 0.001, "a")).ok());
  TuningRecord unmarked = MakeRecord("w1", TestDeviceTarget(), {0.0009}, "b");
  ASSERT_FALSE(unmarked.synthetic);
  ASSERT_TRUE(db_->CommitRecord(unmarked).ok());
  for (const TuningRecord& r : AllRecords(db_.get())) EXPECT_TRUE(r.synthetic) << r.trace;

  // Same ISA and CPU as the test device: the same_arch rung must not take them.
  auto best = db_->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kNone);
  EXPECT_FALSE(best->record);
  // Not even when asked for the test device's own fingerprint.
  auto own = db_->GetBest("w1", TestDeviceTarget());
  ASSERT_TRUE(own.ok());
  EXPECT_FALSE(own->record);
  auto top = db_->GetTopK("w1", TestDeviceTarget(), 10);
  ASSERT_TRUE(top.ok());
  EXPECT_TRUE(top->empty());

  auto stats = db_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->records, 2);
  EXPECT_EQ(stats->synthetic_records, 2);
}

TEST_F(SyntheticRecordsTest, PruneRanksSyntheticRecordsApartFromMeasuredOnes) {
  const Target real = CpuTarget();
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", real, {0.003}, "slow")).ok());
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", real, {0.002}, "fast")).ok());
  ASSERT_TRUE(db_->CommitRecord(Synthetic(real, 0.0001, "invented-fast")).ok());
  ASSERT_TRUE(db_->CommitRecord(Synthetic(real, 0.0002, "invented-slow")).ok());
  auto deleted = db_->Prune(1);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 2);
  std::vector<TuningRecord> kept = AllRecords(db_.get());
  ASSERT_EQ(kept.size(), 2u);
  // The fastest measured trace stays though two invented times beat it.
  EXPECT_EQ(kept[0].trace, "fast");
  EXPECT_FALSE(kept[0].synthetic);
  EXPECT_EQ(kept[1].trace, "invented-fast");
  EXPECT_TRUE(kept[1].synthetic);
}

TEST_F(SyntheticRecordsTest, JsonLinesAndMergeKeepTheMark) {
  const Target real = CpuTarget();
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", real, {0.002}, "measured")).ok());
  ASSERT_TRUE(db_->CommitRecord(Synthetic(real, 0.001, "invented")).ok());
  std::ostringstream exported;
  ASSERT_TRUE(db_->ExportJsonl(exported).ok());
  std::string text = exported.str();
  // Only the synthetic record's line carries the field.
  size_t first = text.find("\"synthetic\"");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("\"synthetic\"", first + 1), std::string::npos) << text;
  EXPECT_NE(text.find("\"synthetic\":true"), std::string::npos) << text;

  auto imported = OpenOrDie(dir_.File("imported.db"));
  std::istringstream in(text);
  ASSERT_TRUE(imported->ImportJsonl(in, "exported.jsonl").ok());
  std::vector<TuningRecord> back = AllRecords(imported.get());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_FALSE(back[0].synthetic);
  EXPECT_TRUE(back[1].synthetic);
  auto best = imported->GetBest("w1", real);
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->record->trace, "measured");

  db_.reset();
  auto merged = OpenOrDie(dir_.File("merged.db"));
  auto stats = merged->Merge(dir_.File("log.db"));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records_added, 2);
  std::vector<TuningRecord> copied = AllRecords(merged.get());
  ASSERT_EQ(copied.size(), 2u);
  EXPECT_TRUE(copied[1].SameContent(back[1]));

  // A bad value is an error naming the field.
  std::string bad = text;
  size_t at = bad.find("\"synthetic\":true");
  bad.replace(at, std::string("\"synthetic\":true").size(), "\"synthetic\":\"yes\"");
  std::istringstream bad_in(bad);
  auto refused = merged->ImportJsonl(bad_in, "bad.jsonl");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("synthetic"), std::string::npos) << refused.status().ToString();
}

// A log written before schema v5: the test device's records are those of a
// target with its toolchain. Read-only (never migrated) they already never
// rank; read-write the migration marks them, and the rank index leaves them out.
TEST(SyntheticRecordsMigrationTest, TheTestDevicesRecordsOfAnOlderLogAreMarked) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  testing::RawExec(path, std::string(testing::kSchemaVersion1Sql) + R"sql(
INSERT INTO targets VALUES (2, 'cuda -arch=sm_90', 'cuda', '', 'sm_90', 132, 'none (test device)');
INSERT INTO records VALUES (1, '0123456789abcdef0123456789abcde1', 1, 1, 'measured', x'', 0.0020, 0, '', 'w', 'g', 'v', 1);
INSERT INTO records VALUES (2, '0123456789abcdef0123456789abcde2', 1, 2, 'invented', x'', 0.0010, 0, '', 'w', 'test', 'v', 2);
INSERT INTO records VALUES (3, '0123456789abcdef0123456789abcde3', 1, 2, 'measured', x'', 0.0001, 0, '', 'w', 'test', 'v', 3);
)sql");
  Target test_device = testing::GpuTarget();
  test_device.fingerprint.toolchain = std::string(kTestDeviceToolchain);
  auto check = [&](Database* db) {
    // Same SM architecture: the same_arch rung sees both targets.
    auto same_arch = db->GetBestAtLevel("w1", testing::GpuTarget(), FallbackLevel::kSameArch);
    ASSERT_TRUE(same_arch.ok()) << same_arch.status().ToString();
    ASSERT_TRUE(*same_arch);
    EXPECT_EQ((*same_arch)->trace, "measured");
    EXPECT_DOUBLE_EQ((*same_arch)->trace_mean_sec, 0.0020);
    auto top = db->GetTopKByTargetString("w1", "cuda -arch=sm_90", 10);
    ASSERT_TRUE(top.ok());
    ASSERT_EQ(top->size(), 1u);
    EXPECT_EQ((*top)[0].trace, "measured");
    auto own = db->GetBest("w1", test_device);
    ASSERT_TRUE(own.ok());
    ASSERT_TRUE(own->record);
    EXPECT_EQ(own->level, FallbackLevel::kSameArch);
    EXPECT_EQ(own->record->id, 1) << "answered with a test device's record";
    std::vector<TuningRecord> all = AllRecords(db);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_FALSE(all[0].synthetic);
    EXPECT_TRUE(all[1].synthetic);
    EXPECT_TRUE(all[2].synthetic);
    EXPECT_EQ(db->Stats()->synthetic_records, 2);
  };
  {
    OpenOptions read_only;
    read_only.read_only = true;
    auto db = OpenOrDie(path, read_only);
    ASSERT_NE(db, nullptr);
    check(db.get());
  }
  auto db = OpenOrDie(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->Stats()->schema_version, kSchemaVersion);
  check(db.get());
  EXPECT_EQ(testing::RawQuery(path, "SELECT group_concat(id) FROM records WHERE synthetic = 1"), "2,3");
  EXPECT_NE(testing::RawQuery(path, "SELECT sql FROM sqlite_master WHERE name = 'records_rank'").find("synthetic = 0"),
            std::string::npos);
  std::string update = testing::RawQuery(path, "UPDATE records SET synthetic = 0");
  EXPECT_NE(update.find("append-only"), std::string::npos) << update;
}

}  // namespace
}  // namespace tunefarm::database
