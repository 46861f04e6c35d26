#include "database/schema.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "database/database_internal.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

// Migration i (1-based) brings a database from version i-1 to version i.
// Never edit a shipped migration: append a new one and bump kSchemaVersion.
// v1's CHECK writes the stored number of "no error" (common/error_kinds.h)
// as a literal, so that number is pinned here.
static_assert(static_cast<int>(ErrorKind::kNone) == 0, "records' CHECK in migration v1 stores no error as 0");
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // v1: workloads, targets with fingerprints, append-only records.
    R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at_us INTEGER NOT NULL);
CREATE TABLE targets(
  id INTEGER PRIMARY KEY,
  target TEXT NOT NULL,
  isa TEXT NOT NULL,
  features TEXT NOT NULL,
  arch TEXT NOT NULL,
  cores INTEGER NOT NULL,
  toolchain TEXT NOT NULL,
  UNIQUE(target, isa, features, arch, cores, toolchain));
CREATE INDEX targets_by_arch ON targets(isa, arch);
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  trace TEXT NOT NULL,
  run_secs BLOB NOT NULL,
  mean_sec REAL,
  error_kind INTEGER NOT NULL,
  error_msg TEXT NOT NULL,
  worker TEXT NOT NULL,
  device TEXT NOT NULL,
  tunefarm_version TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  CHECK ((error_kind = 0) = (mean_sec IS NOT NULL)));
CREATE INDEX records_rank ON records(workload_id, target_id, mean_sec)
  WHERE mean_sec IS NOT NULL;
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
)sql",
    // v2: job state, so that a restarted tuner resumes its jobs.
    R"sql(
CREATE TABLE jobs(
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  target TEXT NOT NULL,
  spec TEXT NOT NULL,
  progress TEXT NOT NULL,
  trials_done INTEGER NOT NULL,
  trial_budget INTEGER NOT NULL,
  error TEXT NOT NULL,
  created_at_us INTEGER NOT NULL,
  updated_at_us INTEGER NOT NULL);
CREATE INDEX jobs_by_status ON jobs(status);
)sql",
    // v3: a trace measured more than once ranks by all its measurements
    // (Database::GetTopK): trace_hash (TraceHash of the trace text, computed by
    // the tunefarm_trace_hash function MigrateSchema registers) finds a trace's
    // records through one index. Filling the column needs the append-only
    // trigger lifted for this one statement.
    R"sql(
ALTER TABLE records ADD COLUMN trace_hash INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER records_append_only;
UPDATE records SET trace_hash = tunefarm_trace_hash(trace);
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
CREATE INDEX records_by_trace ON records(workload_id, target_id, trace_hash);
)sql",
    // v4: a record's time is the fastest of its timed groups (RecordTime),
    // no longer their mean: mean_sec (the v1 name) is recomputed from
    // run_secs by the tunefarm_record_time function MigrateSchema registers,
    // with the append-only trigger lifted for this one statement.
    R"sql(
DROP TRIGGER records_append_only;
UPDATE records SET mean_sec = coalesce(tunefarm_record_time(run_secs), mean_sec) WHERE mean_sec IS NOT NULL;
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
)sql",
    // v5: records whose time was invented (a test device) are marked and
    // never rank: the rank index leaves them out, as it leaves out failed
    // measurements. The records already there are those whose target carries
    // the test device's toolchain (kTestDeviceToolchain), marked with the
    // append-only trigger lifted for this one statement.
    R"sql(
ALTER TABLE records ADD COLUMN synthetic INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER records_append_only;
UPDATE records SET synthetic = 1
  WHERE target_id IN (SELECT id FROM targets WHERE toolchain = 'none (test device)');
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
DROP INDEX records_rank;
CREATE INDEX records_rank ON records(workload_id, target_id, mean_sec)
  WHERE mean_sec IS NOT NULL AND synthetic = 0;
)sql",
    // v6: records measured under emulation (qemu-user) are marked: they never
    // rank against real ones, so the rank index is keyed by the mark before
    // the time. The records already there are those whose target's
    // fingerprint says emulated (arch ending in "-emulated", what a board
    // worker under qemu reports), marked with the append-only trigger lifted
    // for this one statement.
    R"sql(
ALTER TABLE records ADD COLUMN emulated INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER records_append_only;
UPDATE records SET emulated = 1
  WHERE target_id IN (SELECT id FROM targets WHERE length(arch) > 9 AND substr(arch, -9) = '-emulated');
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  BEGIN SELECT RAISE(ABORT, 'tuning records are append-only'); END;
DROP INDEX records_rank;
CREATE INDEX records_rank ON records(workload_id, target_id, emulated, mean_sec)
  WHERE mean_sec IS NOT NULL AND synthetic = 0;
)sql",
};
// The v6 migration's test for an emulated arch, written out in SQL.
static_assert(kEmulatedArchSuffix == "-emulated" && kEmulatedArchSuffix.size() == 9,
              "migration v6 and RecordColumns name the suffix literally");

// tunefarm_trace_hash(text): TraceHash for the v3 migration.
void TraceHashFunction(sqlite3_context* context, int /*argc*/, sqlite3_value** argv) {
  const unsigned char* text = sqlite3_value_text(argv[0]);
  int bytes = sqlite3_value_bytes(argv[0]);
  std::string_view trace(text == nullptr ? "" : reinterpret_cast<const char*>(text), size_t(bytes));
  sqlite3_result_int64(context, TraceHash(trace));
}

// tunefarm_record_time(run_secs): RecordTime for the v4 migration. run_secs
// is the blob of doubles CommitRecord writes; a successful record's is never
// empty (ValidateRecord), but a file written by hand may hold anything: NULL
// then, and the migration keeps the time the record was stored with.
void RecordTimeFunction(sqlite3_context* context, int /*argc*/, sqlite3_value** argv) {
  const void* blob = sqlite3_value_blob(argv[0]);
  const int bytes = sqlite3_value_bytes(argv[0]);
  std::vector<double> run_secs(size_t(bytes) / sizeof(double));
  if (blob != nullptr && !run_secs.empty()) std::memcpy(run_secs.data(), blob, run_secs.size() * sizeof(double));
  if (auto time = RecordTime(run_secs)) {
    sqlite3_result_double(context, *time);
  } else {
    sqlite3_result_null(context);
  }
}

uint32_t ReadBigEndian(const unsigned char* bytes, int count) {
  uint32_t value = 0;
  for (int i = 0; i < count; ++i) value = (value << 8) | bytes[i];
  return value;
}

std::string Hex(int64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%08llx", static_cast<unsigned long long>(value) & 0xffffffffULL);
  return buffer;
}

// Checks the 100-byte SQLite header by hand, before SQLite sees the file, so
// that a text file or a cut-off download gets a precise message.
Status CheckHeader(const std::string& path, int64_t file_bytes) {
  if (file_bytes == 0) {
    return Status::InvalidArgument(path + ": empty file, not a tunefarm database (remove it to start a new one)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot be read");
  std::array<unsigned char, 100> header{};
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  static const char kMagic[] = "SQLite format 3";  // followed by a NUL: 16 bytes
  bool magic_ok = in.gcount() >= 16 && std::equal(kMagic, kMagic + 16, header.begin());
  if (!magic_ok) {
    return Status::InvalidArgument(path + ": not a tunefarm database (not an SQLite file at all)");
  }
  if (file_bytes < 100) {
    return Status::Corruption(path + ": truncated: " + std::to_string(file_bytes) +
                              " bytes, shorter than the SQLite header");
  }
  int64_t page_size = ReadBigEndian(&header[16], 2);
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) {
    return Status::Corruption(path + ": corrupt SQLite header (page size " + std::to_string(page_size) + ")");
  }
  // A WAL with content may legitimately hold pages beyond the main file
  // (e.g. a checkpoint interrupted by a crash): leave that to SQLite.
  struct stat wal_stat{};
  bool wal_has_content = ::stat((path + "-wal").c_str(), &wal_stat) == 0 && wal_stat.st_size > 0;
  if (wal_has_content) return Status::OK();
  if (file_bytes % page_size != 0) {
    return Status::Corruption(path + ": truncated: " + std::to_string(file_bytes) +
                              " bytes is not a whole number of " + std::to_string(page_size) + "-byte pages");
  }
  uint32_t page_count = ReadBigEndian(&header[28], 4);
  bool count_valid = page_count != 0 && ReadBigEndian(&header[24], 4) == ReadBigEndian(&header[92], 4);
  if (count_valid && static_cast<int64_t>(page_count) * page_size > file_bytes) {
    return Status::Corruption(path + ": truncated: the header says " + std::to_string(page_count) +
                              " pages but the file holds " + std::to_string(file_bytes / page_size));
  }
  return Status::OK();
}

}  // namespace

Result<int> ReadSchemaVersion(SqliteConnection* conn) {
  TF_ASSIGN_OR_RETURN(int64_t has_meta,
                      conn->QueryInt("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'"));
  if (has_meta == 0) return 0;
  TF_ASSIGN_OR_RETURN(Statement stmt, conn->Prepare("SELECT value FROM meta WHERE key='schema_version'"));
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return 0;
  std::string text = stmt.ColumnText(0);
  try {
    return std::stoi(text);
  } catch (...) {
    return Status::Corruption(conn->path() + ": meta.schema_version is not a number: '" + text + "'");
  }
}

namespace {

// Percent-escapes what a file: URI treats specially.
std::string FileUri(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buffer[4];
      std::snprintf(buffer, sizeof(buffer), "%%%02x", static_cast<unsigned char>(c));
      uri += buffer;
    } else {
      uri += c;
    }
  }
  return uri + query;
}

struct FileState {
  bool wal_exists = false;
  int64_t size = -1;
  int64_t mtime_ns = -1;
  bool operator==(const FileState&) const = default;
};

FileState StatFile(const std::string& path) {
  FileState state;
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    state.size = st.st_size;
    state.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  state.wal_exists = ::stat((path + "-wal").c_str(), &st) == 0;
  return state;
}

// The SQLite-level checks, through a read-only connection. With `immutable`
// SQLite creates no -wal or -shm file next to a WAL-mode database, so a file
// that is refused is left exactly as it was; that is only sound while no
// other process is writing it, which the caller verifies.
Result<int> CheckContents(const std::string& path, bool immutable, bool quick_check) {
  std::unique_ptr<SqliteConnection> conn;
  if (immutable) {
    TF_ASSIGN_OR_RETURN(conn, SqliteConnection::Open(FileUri(path, "?immutable=1"),
                                                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, 5000));
  } else {
    TF_ASSIGN_OR_RETURN(conn, SqliteConnection::Open(path, SQLITE_OPEN_READONLY, 5000));
  }
  auto named = [&](Status status) {  // name the path, not the URI
    if (!immutable || status.ok()) return status;
    std::string message = status.message();
    std::string uri = conn->path();
    if (message.rfind(uri, 0) == 0) message = path + message.substr(uri.size());
    return Status(status.code(), message);
  };
  auto app_id = conn->QueryInt("PRAGMA application_id");
  if (!app_id.ok()) return named(app_id.status());
  if (*app_id != kApplicationId) {
    return Status::InvalidArgument(path + ": an SQLite database but not a tunefarm tuning log (application_id " +
                                   Hex(*app_id) + ", expected " + Hex(kApplicationId) + ")");
  }
  auto version = ReadSchemaVersion(conn.get());
  if (!version.ok()) return named(version.status());
  if (*version > kSchemaVersion) {
    return Status::FailedPrecondition(path + ": schema version " + std::to_string(*version) +
                                      " was written by a newer tunefarm; this build reads up to version " +
                                      std::to_string(kSchemaVersion) + " (upgrade tunefarm to open it)");
  }
  if (*version == 0) {
    return Status::Corruption(path + ": marked as a tunefarm database but has no schema version (meta table missing)");
  }
  if (quick_check) {
    auto verdict = conn->QueryText("PRAGMA quick_check(1)");
    if (!verdict.ok()) return named(verdict.status());
    if (*verdict != "ok") return Status::Corruption(path + ": failed its integrity check: " + *verdict);
  }
  return *version;
}

}  // namespace

Result<FileInspection> InspectDatabaseFile(const std::string& path, bool quick_check) {
  FileInspection inspection;
  struct stat file_stat{};
  if (::stat(path.c_str(), &file_stat) != 0) {
    if (errno == ENOENT) return inspection;
    return Status::IOError(path + ": cannot be inspected: " + std::strerror(errno));
  }
  if (S_ISDIR(file_stat.st_mode)) return Status::InvalidArgument(path + ": is a directory, not a database file");
  inspection.exists = true;
  // A checkpoint by another connection rewrites the header (page 1) before it
  // grows the file, so a page count past the end is corruption only if the
  // file holds still: a truncated file does, one being checkpointed does not.
  // The verdict must hold over three quiet 5 ms looks (or 200 in all).
  for (int look = 0, quiet = 0;; ++look) {
    FileState before = StatFile(path);
    Status header = CheckHeader(path, before.size);
    if (header.ok()) break;
    if (header.code() != StatusCode::kCorruption || quiet >= 3 || look >= 200) return header;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    quiet = StatFile(path) == before ? quiet + 1 : 0;
  }

  // Without a -wal file no process has the database open for writing, so an
  // immutable read sees a consistent file. If the file changed under us (a
  // writer came and went), the verdict is not trusted: look again, through a
  // normal read-only connection once a -wal file exists.
  for (int attempt = 0;; ++attempt) {
    FileState before = StatFile(path);
    bool immutable = !before.wal_exists && attempt < 3;
    Result<int> version = CheckContents(path, immutable, quick_check);
    if (!immutable || StatFile(path) == before) {
      if (!version.ok()) return version.status();
      inspection.schema_version = *version;
      return inspection;
    }
  }
}

Status MigrateSchema(SqliteConnection* conn, int to_version) {
  WriteTransaction txn(conn);
  TF_RETURN_IF_ERROR(txn.Begin());
  TF_ASSIGN_OR_RETURN(int version, ReadSchemaVersion(conn));
  if (version >= to_version) return Status::OK();  // another process got here first
  if (version == 0) {
    TF_RETURN_IF_ERROR(conn->Exec("PRAGMA application_id=" + std::to_string(kApplicationId)));
  }
  int rc = sqlite3_create_function_v2(conn->raw(), "tunefarm_trace_hash", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                      nullptr, TraceHashFunction, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Status::Internal(conn->path() + ": cannot register tunefarm_trace_hash");
  rc = sqlite3_create_function_v2(conn->raw(), "tunefarm_record_time", 1, SQLITE_DETERMINISTIC, nullptr,
                                  RecordTimeFunction, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Status::Internal(conn->path() + ": cannot register tunefarm_record_time");
  for (int v = version + 1; v <= to_version; ++v) {
    TF_RETURN_IF_ERROR(conn->Exec(kMigrations[v - 1]));
  }
  TF_RETURN_IF_ERROR(conn->Exec("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '" +
                                std::to_string(to_version) + "')"));
  return txn.Commit();
}

}  // namespace tunefarm::database
