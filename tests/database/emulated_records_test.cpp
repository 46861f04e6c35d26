// Emulated records (measured under qemu, record.h): stored and read back as
// such, marked by an emulated fingerprint even when the record does not say
// so, never ranked against a real device's records nor served in place of
// one, answered (and marked) only where nothing real is, pruned apart, and
// carried through JSON Lines, merge and a layered log; an older log has the
// records of an emulated fingerprint marked, before and after the v6
// migration.
#include <gtest/gtest.h>

#include <sstream>

#include "test_util.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/layered_database.h"

namespace tunefarm::database {
namespace {

using testing::AllRecords;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::TempDir;

constexpr const char* kBoardTarget = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon";

// A real Cortex-A72 board, and the same board's target as a worker under
// qemu reports it: the arch gains "-emulated", the cores are the host's.
Target RealBoard() {
  return Target{kBoardTarget, HardwareFingerprint{"aarch64", {"+neon"}, "cortex-a72", 4, "tuner-built lowering-r9"}};
}
Target EmulatedBoard() {
  return Target{kBoardTarget,
                HardwareFingerprint{"aarch64", {"+neon"}, "cortex-a72-emulated", 2, "tuner-built lowering-r9"}};
}
// What `tunefarm compile --target <board>` asks with on an x86 machine: the
// board's ISA and CPU, this machine's cores and toolchain.
Target CompileHost() {
  return Target{kBoardTarget, HardwareFingerprint{"aarch64", {"+neon"}, "cortex-a72", 16, "llvm-16 lowering-r9"}};
}

TuningRecord Emulated(const Target& target, double secs, const std::string& trace) {
  TuningRecord r = MakeRecord("w1", target, {secs}, trace);
  r.emulated = true;
  r.device = "arm64-emulated";
  return r;
}

using EmulatedRecordsTest = testing::OneWorkloadLogTest;

TEST_F(EmulatedRecordsTest, TheMarkIsStoredAndAnEmulatedFingerprintSetsIt) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.002}, "real")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(RealBoard(), 0.003, "marked")).ok());
  // An older worker under qemu: the record is unmarked, its fingerprint is not.
  TuningRecord unmarked = MakeRecord("w1", EmulatedBoard(), {0.004}, "by-fingerprint");
  ASSERT_FALSE(unmarked.emulated);
  ASSERT_TRUE(db_->CommitRecord(unmarked).ok());

  std::vector<TuningRecord> all = AllRecords(db_.get());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[0].emulated);
  EXPECT_TRUE(all[1].emulated);
  EXPECT_TRUE(all[2].emulated);
  EXPECT_FALSE(all[0].SameContent(all[1]));
  auto stats = db_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->emulated_records, 2);
  EXPECT_EQ(stats->synthetic_records, 0);
}

TEST_F(EmulatedRecordsTest, RealRecordsRankFirstAndAnEmulatedTimeNeverBeatsOne) {
  // The emulated board "measured" two traces far faster than the real one,
  // one of them the real board's own trace; and one record on the real
  // board's target is marked emulated.
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.002}, "real")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.0001, "emulated-fast")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.0002, "real")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(RealBoard(), 0.0001, "real")).ok());

  // Both boards' records share the target string.
  auto by_string = db_->GetTopKByTargetString("w1", kBoardTarget, 10);
  ASSERT_TRUE(by_string.ok()) << by_string.status().ToString();
  ASSERT_EQ(by_string->size(), 1u);
  EXPECT_EQ((*by_string)[0].trace, "real");
  EXPECT_FALSE((*by_string)[0].emulated);
  EXPECT_EQ((*by_string)[0].trace_records, 1) << "an emulated time shares the trace's mean";
  EXPECT_DOUBLE_EQ((*by_string)[0].trace_mean_sec, 0.002);

  auto top = db_->GetTopK("w1", RealBoard(), 10);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 1u);
  EXPECT_FALSE((*top)[0].emulated);
  EXPECT_DOUBLE_EQ((*top)[0].trace_mean_sec, 0.002);

  for (const Target& asking : {RealBoard(), CompileHost(), EmulatedBoard()}) {
    auto best = db_->GetBest("w1", asking);
    ASSERT_TRUE(best.ok());
    ASSERT_TRUE(best->record) << asking.fingerprint.arch;
    EXPECT_EQ(best->record->trace, "real") << asking.fingerprint.arch;
    EXPECT_FALSE(best->record->emulated) << asking.fingerprint.arch;
  }
  // Even the emulated board's own exact target: a real record of its real
  // arch is the answer (same architecture), not its own faster emulated ones.
  auto own = db_->GetBest("w1", EmulatedBoard());
  ASSERT_TRUE(own.ok() && own->record);
  EXPECT_EQ(own->level, FallbackLevel::kSameArch);
  EXPECT_DOUBLE_EQ(*own->record->RankSec(), 0.002);
}

TEST_F(EmulatedRecordsTest, EmulatedRecordsAloneAreAnsweredAndMarked) {
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.003, "slow")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.001, "fast")).ok());
  // The same trace again: emulated times rank among themselves by their mean.
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.002, "fast")).ok());

  // `tunefarm compile` for the board's target on another machine: the board's
  // arch matches the emulated one's, and the answer says it is emulated.
  auto best = db_->GetBest("w1", CompileHost());
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_TRUE(best->record) << "an emulated record is the only one: it must be answered";
  EXPECT_EQ(best->level, FallbackLevel::kSameArch);
  EXPECT_EQ(best->record->trace, "fast");
  EXPECT_TRUE(best->record->emulated);
  EXPECT_EQ(best->record->trace_records, 2);
  EXPECT_DOUBLE_EQ(best->record->trace_mean_sec, 0.0015);

  auto own = db_->GetBest("w1", EmulatedBoard());
  ASSERT_TRUE(own.ok() && own->record);
  EXPECT_EQ(own->level, FallbackLevel::kSameDevice);
  EXPECT_TRUE(own->record->emulated);

  auto top = db_->GetTopK("w1", EmulatedBoard(), 10);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].trace, "fast");
  EXPECT_TRUE((*top)[0].emulated);
  EXPECT_TRUE((*top)[1].emulated);
  auto by_string = db_->GetTopKByTargetString("w1", kBoardTarget, 1);
  ASSERT_TRUE(by_string.ok());
  ASSERT_EQ(by_string->size(), 1u);
  EXPECT_TRUE((*by_string)[0].emulated);

  // Another architecture is still nothing.
  Target other = CompileHost();
  other.fingerprint.arch = "neoverse-n1";
  auto none = db_->GetBest("w1", other);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->record);

  // A real record, however slow, takes over every answer.
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.5}, "real-slow")).ok());
  auto now = db_->GetBest("w1", CompileHost());
  ASSERT_TRUE(now.ok() && now->record);
  EXPECT_EQ(now->record->trace, "real-slow");
  EXPECT_FALSE(now->record->emulated);
  auto now_top = db_->GetTopKByTargetString("w1", kBoardTarget, 10);
  ASSERT_TRUE(now_top.ok());
  ASSERT_EQ(now_top->size(), 1u);
  EXPECT_EQ((*now_top)[0].trace, "real-slow");
}

TEST_F(EmulatedRecordsTest, AnUnusableRealRecordLeavesTheEmulatedOnes) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.002}, "real-stale")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(EmulatedBoard(), 0.001, "emulated")).ok());
  auto best = db_->GetBest("w1", CompileHost(), [](const TuningRecord& r) { return r.trace != "real-stale"; });
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->record->trace, "emulated");
  EXPECT_TRUE(best->record->emulated);
}

TEST_F(EmulatedRecordsTest, PruneRanksEmulatedRecordsApartFromRealOnes) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.003}, "slow")).ok());
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.002}, "fast")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(RealBoard(), 0.0001, "emulated-fast")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(RealBoard(), 0.0002, "emulated-slow")).ok());
  auto deleted = db_->Prune(1);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 2);
  std::vector<TuningRecord> kept = AllRecords(db_.get());
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].trace, "fast");
  EXPECT_FALSE(kept[0].emulated);
  EXPECT_EQ(kept[1].trace, "emulated-fast");
  EXPECT_TRUE(kept[1].emulated);
}

TEST_F(EmulatedRecordsTest, JsonLinesAndMergeKeepTheMark) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", RealBoard(), {0.002}, "real")).ok());
  ASSERT_TRUE(db_->CommitRecord(Emulated(RealBoard(), 0.001, "qemu-timed")).ok());
  std::ostringstream exported;
  ASSERT_TRUE(db_->ExportJsonl(exported).ok());
  std::string text = exported.str();
  size_t first = text.find("\"emulated\"");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("\"emulated\"", first + 1), std::string::npos) << "only the emulated record says so: " << text;
  EXPECT_NE(text.find("\"emulated\":true"), std::string::npos) << text;

  auto imported = OpenOrDie(dir_.File("imported.db"));
  std::istringstream in(text);
  ASSERT_TRUE(imported->ImportJsonl(in, "exported.jsonl").ok());
  std::vector<TuningRecord> back = AllRecords(imported.get());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_FALSE(back[0].emulated);
  EXPECT_TRUE(back[1].emulated);
  auto best = imported->GetBest("w1", RealBoard());
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->record->trace, "real");

  db_.reset();
  auto merged = OpenOrDie(dir_.File("merged.db"));
  auto stats = merged->Merge(dir_.File("log.db"));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records_added, 2);
  std::vector<TuningRecord> copied = AllRecords(merged.get());
  ASSERT_EQ(copied.size(), 2u);
  EXPECT_TRUE(copied[1].emulated);
  EXPECT_TRUE(copied[1].SameContent(back[1]));

  std::string bad = text;
  size_t at = bad.find("\"emulated\":true");
  bad.replace(at, std::string("\"emulated\":true").size(), "\"emulated\":1");
  std::istringstream bad_in(bad);
  auto refused = merged->ImportJsonl(bad_in, "bad.jsonl");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("emulated"), std::string::npos) << refused.status().ToString();
}

// A user log with only emulated records over a system log with a real one:
// the real one answers, in GetBest and in the merged top k.
TEST(EmulatedRecordsLayeredTest, ARealRecordOfTheSystemLogBeatsEmulatedOnesOfTheUsers) {
  TempDir dir;
  {
    auto system = OpenOrDie(dir.File("system.db"));
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(system->CommitRecord(MakeRecord("w1", RealBoard(), {0.004}, "real")).ok());
    auto user = OpenOrDie(dir.File("user.db"));
    ASSERT_TRUE(user->CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(user->CommitRecord(Emulated(EmulatedBoard(), 0.001, "emulated")).ok());
  }
  auto layered = LayeredDatabase::Open(dir.File("user.db"), dir.File("system.db"));
  ASSERT_TRUE(layered.ok()) << layered.status().ToString();
  auto best = (*layered)->GetBest("w1", CompileHost());
  ASSERT_TRUE(best.ok() && best->record);
  EXPECT_EQ(best->layer, Layer::kSystem);
  EXPECT_EQ(best->record->trace, "real");
  auto top = (*layered)->GetTopKByTargetString("w1", kBoardTarget, 10);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 1u);
  EXPECT_EQ((*top)[0].trace, "real");
}

// A log written before schema v6: records of a target whose arch ends in
// "-emulated" are emulated. Read-only (never migrated) they already rank
// behind real ones; read-write the migration marks them, the rank index is
// keyed by the mark, and records stay append-only.
TEST(EmulatedRecordsMigrationTest, TheRecordsOfAnEmulatedFingerprintInAnOlderLogAreMarked) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  testing::RawExec(path, std::string(testing::kSchemaVersion1Sql) + R"sql(
INSERT INTO targets VALUES (2, 'llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon', 'aarch64', '+neon',
  'cortex-a72', 4, 'tuner-built lowering-r9');
INSERT INTO targets VALUES (3, 'llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon', 'aarch64', '+neon',
  'cortex-a72-emulated', 2, 'tuner-built lowering-r9');
INSERT INTO records VALUES (1, '0123456789abcdef0123456789abcde1', 1, 2, 'real', x'', 0.0020, 0, '', 'w', 'cpu', 'v', 1);
INSERT INTO records VALUES (2, '0123456789abcdef0123456789abcde2', 1, 3, 'emulated', x'', 0.0001, 0, '', 'w', 'cpu', 'v', 2);
INSERT INTO records VALUES (3, '0123456789abcdef0123456789abcde3', 1, 3, 'real', x'', 0.0001, 0, '', 'w', 'cpu', 'v', 3);
)sql");
  auto check = [&](Database* db) {
    std::vector<TuningRecord> all = AllRecords(db);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_FALSE(all[0].emulated);
    EXPECT_TRUE(all[1].emulated);
    EXPECT_TRUE(all[2].emulated);
    EXPECT_EQ(db->Stats()->emulated_records, 2);
    auto top = db->GetTopKByTargetString("w1", kBoardTarget, 10);
    ASSERT_TRUE(top.ok()) << top.status().ToString();
    ASSERT_EQ(top->size(), 1u);
    EXPECT_EQ((*top)[0].trace, "real");
    EXPECT_FALSE((*top)[0].emulated);
    auto best = db->GetBest("w1", EmulatedBoard());
    ASSERT_TRUE(best.ok() && best->record);
    EXPECT_EQ(best->record->id, 1) << "answered with an emulated record";
    auto emulated_only = db->GetBestAtLevel("w1", EmulatedBoard(), FallbackLevel::kSameDevice, {}, true);
    ASSERT_TRUE(emulated_only.ok() && *emulated_only);
    EXPECT_EQ((*emulated_only)->trace, "emulated");
    EXPECT_TRUE((*emulated_only)->emulated);
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
  EXPECT_GE(kSchemaVersion, 6);
  check(db.get());
  EXPECT_EQ(testing::RawQuery(path, "SELECT group_concat(id) FROM records WHERE emulated = 1"), "2,3");
  EXPECT_NE(testing::RawQuery(path, "SELECT sql FROM sqlite_master WHERE name = 'records_rank'").find("emulated"),
            std::string::npos);
  std::string update = testing::RawQuery(path, "UPDATE records SET emulated = 0");
  EXPECT_NE(update.find("append-only"), std::string::npos) << update;
}

}  // namespace
}  // namespace tunefarm::database
