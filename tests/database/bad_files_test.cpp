// Files that are not a usable tuning log: each gets a clear error naming the
// path, and opening never modifies the file. Also: schema migration.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "test_util.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

// Opens `path` read-write and read-only; both must fail with `code`, a message
// naming the path and containing `phrase`, and leave the file byte-identical.
void ExpectRefused(const std::string& path, StatusCode code, const std::string& phrase) {
  std::string before = ReadFileBytes(path);
  for (bool read_only : {false, true}) {
    OpenOptions options;
    options.read_only = read_only;
    auto db = Database::Open(path, options);
    ASSERT_FALSE(db.ok()) << "opened " << path << (read_only ? " read-only" : "");
    EXPECT_EQ(db.status().code(), code) << db.status().ToString();
    EXPECT_NE(db.status().message().find(path), std::string::npos) << db.status().ToString();
    EXPECT_NE(db.status().message().find(phrase), std::string::npos) << db.status().ToString();
  }
  EXPECT_EQ(ReadFileBytes(path), before) << "the file was modified";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

// A valid database with enough records to span many pages, closed cleanly
// (the WAL is checkpointed into the main file).
std::string MakeValidDatabase(const TempDir& dir, const std::string& name, int records = 2000) {
  std::string path = dir.File(name);
  auto db = OpenOrDie(path);
  EXPECT_TRUE(db->CommitWorkload(MakeWorkload("w1")).ok());
  std::vector<TuningRecord> batch;
  for (int i = 0; i < records; ++i) {
    batch.push_back(MakeRecord("w1", CpuTarget(), {1e-3 * (i + 1)}, "trace number " + std::to_string(i)));
  }
  EXPECT_TRUE(db->CommitRecords(batch).ok());
  return path;
}

TEST(BadFilesTest, TextFileIsForeign) {
  TempDir dir;
  std::string path = dir.File("notes.db");
  WriteFileBytes(path, "these are my notes, not a database\n");
  ExpectRefused(path, StatusCode::kInvalidArgument, "not an SQLite file");
}

TEST(BadFilesTest, EmptyFileIsRefused) {
  TempDir dir;
  std::string path = dir.File("empty.db");
  WriteFileBytes(path, "");
  ExpectRefused(path, StatusCode::kInvalidArgument, "empty file");
}

TEST(BadFilesTest, ForeignSqliteFileIsRefused) {
  TempDir dir;
  std::string path = dir.File("other_app.db");
  testing::RawExec(path, "CREATE TABLE contacts(name TEXT, phone TEXT); INSERT INTO contacts VALUES ('a', '1');");
  ExpectRefused(path, StatusCode::kInvalidArgument, "not a tunefarm tuning log");
}

TEST(BadFilesTest, NewerSchemaIsRefused) {
  TempDir dir;
  std::string path = MakeValidDatabase(dir, "future.db", 10);
  testing::RawExec(path, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  ExpectRefused(path, StatusCode::kFailedPrecondition, "schema version 99");
}

TEST(BadFilesTest, TruncatedFileIsRefused) {
  TempDir dir;
  std::string path = MakeValidDatabase(dir, "cut.db");
  std::string bytes = ReadFileBytes(path);
  ASSERT_GT(bytes.size(), 8 * 4096u);
  WriteFileBytes(path, bytes.substr(0, bytes.size() / 2));  // whole pages: caught by the header's page count
  ExpectRefused(path, StatusCode::kCorruption, "truncated");
  WriteFileBytes(path, bytes.substr(0, bytes.size() / 2 + 100));  // mid-page
  ExpectRefused(path, StatusCode::kCorruption, "truncated");
  WriteFileBytes(path, bytes.substr(0, 60));  // not even a header
  ExpectRefused(path, StatusCode::kCorruption, "truncated");
}

TEST(BadFilesTest, CorruptPagesAreRefused) {
  TempDir dir;
  std::string path = MakeValidDatabase(dir, "garbled.db");
  std::string bytes = ReadFileBytes(path);
  // Scribble over the middle of the file, keeping the header intact.
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 3 * 4096; ++i) bytes[i] = static_cast<char>(i * 7);
  WriteFileBytes(path, bytes);
  ExpectRefused(path, StatusCode::kCorruption, "");
}

TEST(BadFilesTest, DirectoryIsNotADatabase) {
  TempDir dir;
  auto db = Database::Open(dir.path());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(db.status().message().find("is a directory"), std::string::npos);
}

TEST(BadFilesTest, UnwritablePathsAreRefusedWithoutChanges) {
  TempDir dir;
  // A directory that does not exist.
  auto missing_dir = Database::Open(dir.File("no/such/dir/tune.db"));
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.status().code(), StatusCode::kIOError);
  EXPECT_NE(missing_dir.status().message().find("does not exist"), std::string::npos);

  // A database file without write permission.
  std::string path = MakeValidDatabase(dir, "locked.db", 10);
  std::string before = ReadFileBytes(path);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  auto ro_file = Database::Open(path);
  ASSERT_FALSE(ro_file.ok());
  EXPECT_EQ(ro_file.status().code(), StatusCode::kIOError);
  EXPECT_NE(ro_file.status().message().find("not writable"), std::string::npos) << ro_file.status().ToString();
  EXPECT_EQ(ReadFileBytes(path), before);
  // ... which still opens read-only.
  OpenOptions read_only;
  read_only.read_only = true;
  auto reader = Database::Open(path, read_only);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->Stats()->records, 10);
  reader->reset();
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);

  // A writable file in a read-only directory (no room for -wal and -shm).
  TempDir other;
  std::string in_ro_dir = MakeValidDatabase(other, "tune.db", 10);
  ASSERT_EQ(::chmod(other.path().c_str(), 0555), 0);
  auto ro_dir = Database::Open(in_ro_dir);
  ASSERT_FALSE(ro_dir.ok());
  EXPECT_EQ(ro_dir.status().code(), StatusCode::kIOError);
  EXPECT_NE(ro_dir.status().message().find("is not writable"), std::string::npos) << ro_dir.status().ToString();
  ASSERT_EQ(::chmod(other.path().c_str(), 0755), 0);
}

TEST(BadFilesTest, MissingFileOpenedReadOnlyIsNotFound) {
  TempDir dir;
  OpenOptions options;
  options.read_only = true;
  auto db = Database::Open(dir.File("absent.db"), options);
  EXPECT_EQ(db.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir.File("absent.db")));
}

TEST(MigrationTest, VersionOneFileIsUpgradedKeepingItsRecords) {
  TempDir dir;
  std::string path = dir.File("v1.db");
  // What a schema-1 tunefarm wrote: no jobs table.
  testing::RawExec(path, std::string(testing::kSchemaVersion1Sql) + R"sql(
INSERT INTO records VALUES (1, '0123456789abcdef0123456789abcdef', 1, 1, 'old trace',
  x'fca9f1d24d62503f', 0.001, 0, '', 'w', 'cuda:0', '0.0.9', 42);
)sql");
  ASSERT_EQ(sizeof(double), 8u);
  auto db = OpenOrDie(path);
  auto stats = db->Stats();
  EXPECT_EQ(stats->schema_version, kSchemaVersion);
  EXPECT_EQ(stats->records, 1);
  auto best = db->GetBest("w1", testing::GpuTarget());
  ASSERT_TRUE(best.ok() && best->record.has_value()) << best.status().ToString();
  EXPECT_EQ(best->record->trace, "old trace");
  EXPECT_EQ(best->record->run_secs, std::vector<double>{0.001});
  JobState job;
  job.id = "after-migration";
  EXPECT_TRUE(db->CreateJob(job).ok());  // the v2 jobs table exists now
}

}  // namespace
}  // namespace tunefarm::database
