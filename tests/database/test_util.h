// Helpers for the database tests: scratch directories, sample records, a
// one-workload log fixture, raw SQLite access (to look at a file
// independently of the Database class).
#pragma once

#include <sqlite3.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tunefarm/database/database.h"
#include "tunefarm/database/tuning_log.h"

namespace tunefarm::database::testing {

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tunefarm_db_test_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline Target CpuTarget(std::string arch = "znver4", int64_t cores = 2, std::string toolchain = "llvm-16") {
  return Target{"llvm -mtriple=x86_64-linux-gnu -mcpu=" + arch,
                HardwareFingerprint{"x86_64", {"avx512f", "avx2", "fma"}, arch, cores, std::move(toolchain)}};
}

inline Target GpuTarget(std::string sm = "sm_90", int64_t sms = 132) {
  return Target{"cuda -arch=" + sm, HardwareFingerprint{"cuda", {}, sm, sms, "cuda-12.4"}};
}

inline Workload MakeWorkload(const std::string& hash) {
  return Workload{hash, "matmul_" + hash, "workload matmul(M = 64, N = 64, K = 64) { ... } # " + hash};
}

inline TuningRecord MakeRecord(const std::string& workload_hash, const Target& target,
                               std::vector<double> run_secs, std::string trace = "") {
  TuningRecord record;
  record.workload_hash = workload_hash;
  record.target = target;
  record.trace = trace.empty() ? "split(i, 8); vectorize(j) # " + std::to_string(run_secs.empty() ? 0 : run_secs[0])
                               : std::move(trace);
  record.run_secs = std::move(run_secs);
  record.worker = "localhost:worker-0";
  record.device = "cpu";
  return record;
}

inline TuningRecord MakeFailedRecord(const std::string& workload_hash, const Target& target, ErrorKind kind) {
  TuningRecord record = MakeRecord(workload_hash, target, {});
  record.error_kind = kind;
  record.error_msg = "kernel failed: " + std::string(ErrorKindName(kind));
  return record;
}

inline std::unique_ptr<Database> OpenOrDie(const std::string& path, OpenOptions options = {}) {
  auto db = Database::Open(path, options);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

// Every record of `log`, in the order ForEachRecord visits them.
inline std::vector<TuningRecord> AllRecords(TuningLog* log) {
  std::vector<TuningRecord> out;
  EXPECT_TRUE(log->ForEachRecord({}, [&](const TuningRecord& r) {
                   out.push_back(r);
                   return Status::OK();
                 }).ok());
  return out;
}

// A fresh log at dir_.File("log.db") (owned by db_) that knows workload "w1"
// and holds no records yet.
class OneWorkloadLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenOrDie(dir_.File("log.db"));
    ASSERT_NE(db_, nullptr);
    ASSERT_TRUE(db_->CommitWorkload(MakeWorkload("w1")).ok());
  }
  TempDir dir_;
  std::unique_ptr<Database> db_;
};

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Runs `sql` on the file with a plain SQLite connection; returns the first
// column of every row, joined by '\n'.
inline std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (!out.empty()) out += '\n';
        const unsigned char* text = sqlite3_column_text(stmt, 0);
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
      }
      if (rc != SQLITE_DONE) out = std::string("SQL ERROR: ") + sqlite3_errmsg(db);
    } else {
      out = std::string("SQL ERROR: ") + sqlite3_errmsg(db);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

// What a schema-1 tunefarm wrote (no jobs table, no trace_hash), with one
// workload 'w1' and one GPU target (id 1) and no records yet.
inline constexpr const char* kSchemaVersion1Sql = R"sql(
PRAGMA application_id = 1413891138;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE workloads(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL, text TEXT NOT NULL,
  created_at_us INTEGER NOT NULL);
CREATE TABLE targets(id INTEGER PRIMARY KEY, target TEXT NOT NULL, isa TEXT NOT NULL, features TEXT NOT NULL,
  arch TEXT NOT NULL, cores INTEGER NOT NULL, toolchain TEXT NOT NULL,
  UNIQUE(target, isa, features, arch, cores, toolchain));
CREATE INDEX targets_by_arch ON targets(isa, arch);
CREATE TABLE records(id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, workload_id INTEGER NOT NULL,
  target_id INTEGER NOT NULL, trace TEXT NOT NULL, run_secs BLOB NOT NULL, mean_sec REAL,
  error_kind INTEGER NOT NULL, error_msg TEXT NOT NULL, worker TEXT NOT NULL, device TEXT NOT NULL,
  tunefarm_version TEXT NOT NULL, created_at_us INTEGER NOT NULL,
  CHECK ((error_kind = 0) = (mean_sec IS NOT NULL)));
CREATE INDEX records_rank ON records(workload_id, target_id, mean_sec) WHERE mean_sec IS NOT NULL;
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO workloads VALUES (1, 'w1', 'mm', 'text', 1);
INSERT INTO targets VALUES (1, 'cuda -arch=sm_90', 'cuda', '', 'sm_90', 132, 'cuda-12.4');
)sql";

inline void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

}  // namespace tunefarm::database::testing
