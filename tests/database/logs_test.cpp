// The log as a whole: JSON Lines round trips, merge, prune, and the layered
// user-over-system database.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "test_util.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/jsonl.h"
#include "tunefarm/database/layered_database.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::GpuTarget;
using testing::MakeFailedRecord;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::TempDir;

std::map<std::string, TuningRecord> AllRecords(Database& db) {
  std::map<std::string, TuningRecord> by_uid;
  EXPECT_TRUE(db.ForEachRecord({}, [&](const TuningRecord& r) {
                  by_uid[r.uid] = r;
                  return Status::OK();
                }).ok());
  return by_uid;
}

void ExpectSameRecords(Database& a, Database& b) {
  auto left = AllRecords(a);
  auto right = AllRecords(b);
  ASSERT_EQ(left.size(), right.size());
  for (const auto& [uid, record] : left) {
    ASSERT_TRUE(right.count(uid)) << uid;
    EXPECT_TRUE(record.SameContent(right.at(uid))) << uid;
  }
}

// A log with two workloads, CPU and GPU targets, awkward timings and text.
void Populate(Database& db, int per_pair = 20) {
  ASSERT_TRUE(db.CommitWorkload(MakeWorkload("w1")).ok());
  ASSERT_TRUE(db.CommitWorkload(Workload{"w2", "conv \"3x3\"", "line one\nline two\t\\ unicode: \xc2\xb5s"}).ok());
  std::vector<TuningRecord> batch;
  for (const char* w : {"w1", "w2"}) {
    for (const Target& t : {CpuTarget(), GpuTarget()}) {
      for (int i = 0; i < per_pair; ++i) {
        batch.push_back(MakeRecord(w, t, {0.1 / (i + 3), 1.0 / 3.0 * 1e-3, 1e-300 + i * 1e-7},
                                   "trace {\"split\": [" + std::to_string(i) + "]}\n"));
      }
      batch.push_back(MakeFailedRecord(w, t, ErrorKind::kWorkerLost));
    }
  }
  ASSERT_TRUE(db.CommitRecords(batch).ok());
}

TEST(JsonlTest, ExportImportRoundTripIsExact) {
  TempDir dir;
  auto source = OpenOrDie(dir.File("a.db"));
  Populate(*source);
  std::stringstream jsonl;
  ASSERT_TRUE(source->ExportJsonl(jsonl).ok());

  auto copy = OpenOrDie(dir.File("b.db"));
  std::istringstream in(jsonl.str());
  auto stats = copy->ImportJsonl(in, "export.jsonl");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->workloads_added, 2);
  EXPECT_EQ(stats->records_added, 84);
  EXPECT_EQ(stats->records_skipped, 0);
  ExpectSameRecords(*source, *copy);
  EXPECT_EQ(copy->ListWorkloads().value(), source->ListWorkloads().value());

  // Importing again adds nothing: uids make import idempotent.
  std::istringstream again(jsonl.str());
  stats = copy->ImportJsonl(again, "export.jsonl");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->records_added, 0);
  EXPECT_EQ(stats->records_skipped, 84);

  // And the re-export is the same text apart from the header's timestamp.
  std::stringstream second;
  ASSERT_TRUE(copy->ExportJsonl(second).ok());
  auto body = [](const std::string& text) { return text.substr(text.find('\n')); };
  EXPECT_EQ(body(second.str()), body(jsonl.str()));
}

TEST(JsonlTest, ExportCanBeFilteredByWorkload) {
  TempDir dir;
  auto db = OpenOrDie(dir.File("a.db"));
  Populate(*db, 3);
  std::stringstream out;
  ASSERT_TRUE(db->ExportJsonl(out, RecordFilter{"w2", ""}).ok());
  int records = 0, workloads = 0;
  std::string line;
  while (std::getline(out, line)) {
    auto json = nlohmann::json::parse(line);
    if (json["type"] == "record") {
      ++records;
      EXPECT_EQ(json["workload"], "w2");
    }
    workloads += json["type"] == "workload";
  }
  EXPECT_EQ(records, 8);
  EXPECT_EQ(workloads, 1);
}

TEST(JsonlTest, BadInputNamesTheLineAndImportsNothing) {
  TempDir dir;
  auto db = OpenOrDie(dir.File("a.db"));
  std::string header = JsonlHeader().dump() + "\n";
  std::string workload = WorkloadToJson(MakeWorkload("w1")).dump() + "\n";
  TuningRecord good = MakeRecord("w1", CpuTarget(), {1e-3});
  good.uid = NewRecordUid();
  good.created_at_us = 5;
  good.tunefarm_version = "0.1.0";
  std::string good_line = RecordToJson(good).dump() + "\n";

  struct Case {
    std::string text;
    std::string expected;
  };
  std::vector<Case> cases = {
      {"", "empty file"},
      {"{\"type\":\"record\"}\n", "in.jsonl:1: not a tunefarm tuning log"},
      {header + workload + good_line + "{oops\n", "in.jsonl:4: not valid JSON"},
      {header + workload + good_line + "{\"type\":\"record\",\"uid\":\"x\"}\n", "in.jsonl:4: missing field 'workload'"},
      {header + good_line, "in.jsonl:2: "},  // workload never defined
      {header + workload + "{\"type\":\"bogus\"}\n", "in.jsonl:3: unknown line type 'bogus'"},
      {header + workload + "{\"type\":5}\n", "in.jsonl:3: unknown line type '5'"},
      {R"({"type":["header"],"format":"tunefarm-tuning-log","version":1})" "\n", "in.jsonl:1: not a tunefarm tuning log"},
      {R"({"type":"header","format":"tunefarm-tuning-log","version":7})" "\n", "version 7"},
      // A later header of a concatenated file is checked like the first.
      {header + workload + R"({"type":"header","format":"tunefarm-tuning-log","version":7})" "\n", "in.jsonl:3: "},
  };
  for (const Case& c : cases) {
    std::istringstream in(c.text);
    auto stats = db->ImportJsonl(in, "in.jsonl");
    ASSERT_FALSE(stats.ok()) << c.text;
    EXPECT_NE(stats.status().message().find(c.expected), std::string::npos)
        << stats.status().ToString() << " -- expected: " << c.expected;
  }
  EXPECT_EQ(db->Stats()->records, 0);
  EXPECT_EQ(db->Stats()->workloads, 0);  // the workload line of a failed import was rolled back
  std::istringstream ok(header + workload + good_line);
  EXPECT_TRUE(db->ImportJsonl(ok, "in.jsonl").ok());
  EXPECT_EQ(db->Stats()->records, 1);
}

TEST(JsonlTest, ConcatenatedExportsImportAsOne) {
  TempDir dir;
  std::string parts;
  for (const std::string& hash : {std::string("w1"), std::string("w2")}) {
    auto source = OpenOrDie(dir.File(hash + ".db"));
    ASSERT_TRUE(source->CommitWorkload(MakeWorkload(hash)).ok());
    ASSERT_TRUE(source->CommitRecords({MakeRecord(hash, CpuTarget(), {1e-3}), MakeRecord(hash, CpuTarget(), {2e-3})}).ok());
    std::ostringstream out;
    ASSERT_TRUE(source->ExportJsonl(out).ok());
    parts += out.str();
  }
  auto db = OpenOrDie(dir.File("both.db"));
  std::istringstream in(parts);
  auto stats = db->ImportJsonl(in, "both.jsonl");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records_added, 4);
  EXPECT_EQ(db->Stats()->workloads, 2);
}

TEST(MergeTest, MergeAddsMissingRecordsOnlyOnce) {
  TempDir dir;
  auto a = OpenOrDie(dir.File("a.db"));
  auto b = OpenOrDie(dir.File("b.db"));
  Populate(*a, 5);
  ASSERT_TRUE(b->CommitWorkload(MakeWorkload("w3")).ok());
  ASSERT_TRUE(b->CommitRecord(MakeRecord("w3", CpuTarget(), {2e-3})).ok());
  b.reset();

  auto stats = a->Merge(dir.File("b.db"));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->workloads_added, 1);
  EXPECT_EQ(stats->records_added, 1);
  stats = a->Merge(dir.File("b.db"));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->records_added, 0);
  EXPECT_EQ(stats->records_skipped, 1);
  EXPECT_EQ(a->Stats()->records, 24 + 1);

  // Merging a into a fresh c gives a copy of a.
  auto c = OpenOrDie(dir.File("c.db"));
  ASSERT_TRUE(c->Merge(dir.File("a.db")).ok());
  ExpectSameRecords(*a, *c);

  testing::WriteFileBytes(dir.File("junk.db"), "junk");
  auto bad = a->Merge(dir.File("junk.db"));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(PruneTest, KeepsTheTopKPerWorkloadAndTarget) {
  TempDir dir;
  auto db = OpenOrDie(dir.File("a.db"));
  Populate(*db, 20);
  auto before_w1_cpu = db->GetTopK("w1", CpuTarget(), 3).value();
  auto deleted = db->Prune(3);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 4 * 18);  // per pair: 21 records (one failed) -> 3
  EXPECT_EQ(db->Stats()->records, 12);
  EXPECT_EQ(db->Stats()->failed_records, 0);
  auto after = db->GetTopK("w1", CpuTarget(), 10).value();
  ASSERT_EQ(after.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(after[i].uid, before_w1_cpu[i].uid);
  EXPECT_EQ(db->Prune(0).status().code(), StatusCode::kInvalidArgument);
}

TEST(LayeredTest, UserDatabaseTakesPrecedenceOverTheSystemOne) {
  TempDir dir;
  std::string system_path = dir.File("system.db");
  {
    auto system = OpenOrDie(system_path);
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("w2")).ok());
    ASSERT_TRUE(system->CommitRecord(MakeRecord("w1", CpuTarget(), {1e-3}, "system-fast")).ok());
    ASSERT_TRUE(system->CommitRecord(MakeRecord("w2", CpuTarget(), {1e-3}, "system-only")).ok());
    ASSERT_TRUE(system->PrepareForDistribution().ok());
  }
  std::string before = testing::ReadFileBytes(system_path);
  auto layered = LayeredDatabase::Open(dir.File("user.db"), system_path);
  ASSERT_TRUE(layered.ok()) << layered.status().ToString();
  Database& user = (*layered)->user();
  ASSERT_TRUE(user.CommitWorkload(MakeWorkload("w1")).ok());
  ASSERT_TRUE(user.CommitRecord(MakeRecord("w1", CpuTarget(), {5e-3}, "user-slow")).ok());

  auto best = (*layered)->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->layer, Layer::kUser);  // the user's own measurement wins at the same level
  EXPECT_EQ(best->record->trace, "user-slow");
  best = (*layered)->GetBest("w2", CpuTarget());
  EXPECT_EQ(best->layer, Layer::kSystem);
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);
  EXPECT_EQ(best->record->trace, "system-only");
  // A same-device system record beats a same-arch user record.
  ASSERT_TRUE(user.CommitWorkload(MakeWorkload("w2")).ok());
  ASSERT_TRUE(user.CommitRecord(MakeRecord("w2", CpuTarget("znver4", 64), {0.1e-3}, "user-arch")).ok());
  best = (*layered)->GetBest("w2", CpuTarget());
  EXPECT_EQ(best->layer, Layer::kSystem);

  auto top = (*layered)->GetTopK("w1", CpuTarget(), 5);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].trace, "system-fast");
  EXPECT_TRUE((*layered)->GetWorkload("w2")->has_value());
  EXPECT_EQ((*layered)->system()->CommitWorkload(MakeWorkload("w9")).code(), StatusCode::kFailedPrecondition);
  layered->reset();
  EXPECT_EQ(testing::ReadFileBytes(system_path), before);  // never written

  // No system file: the user layer alone; unless the caller requires one.
  auto alone = LayeredDatabase::Open(dir.File("user.db"), dir.File("missing.db"));
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*alone)->system(), nullptr);
  alone->reset();
  EXPECT_EQ(LayeredDatabase::Open(dir.File("user.db"), dir.File("missing.db"), {}, true).status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace tunefarm::database
