// Database: opening a tuning log — inspect first, then reopen read-write only
// if the file is valid and writable; connection settings; migrations.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "database/database_internal.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

// Write permission as a user expects it. Root passes access(W_OK) on any
// file, so a file or directory with no write bit at all also counts as
// read-only: someone made it so on purpose.
bool Writable(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return false;
  return (st.st_mode & 0222) != 0 && ::access(path.c_str(), W_OK) == 0;
}

Status CheckWritable(const std::string& path, bool exists) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::string dir = parent.empty() ? "." : parent.string();
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::IOError(path + ": cannot create the database: directory '" + dir + "' does not exist");
  }
  if (exists && !Writable(path)) {
    return Status::IOError(path + ": the file is not writable; open it read-only (e.g. as a system database) "
                                  "or fix its permissions");
  }
  if (!Writable(dir)) {
    return Status::IOError(path + ": directory '" + dir + "' is not writable; the tuning log needs to create " +
                           (exists ? "its -wal and -shm files there" : "the database file there"));
  }
  return Status::OK();
}

}  // namespace

Database::Database(std::string path, OpenOptions options, int schema_version, std::unique_ptr<SqliteConnection> conn)
    : path_(std::move(path)), options_(options), schema_version_(schema_version), conn_(std::move(conn)) {}

Database::~Database() = default;

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, const OpenOptions& options) {
  if (path.empty()) return Status::InvalidArgument("database path is empty");
  // Inspect through a read-only connection first: a foreign, newer or corrupt
  // file is refused before anything could write to it.
  TF_ASSIGN_OR_RETURN(FileInspection inspection, InspectDatabaseFile(path, options.quick_check));
  if (!inspection.exists && (options.read_only || !options.create_if_missing)) {
    return Status::NotFound(path + ": no such tuning-log database");
  }
  if (!options.read_only) TF_RETURN_IF_ERROR(CheckWritable(path, inspection.exists));

  int flags = options.read_only ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | (inspection.exists ? 0 : SQLITE_OPEN_CREATE);
  TF_ASSIGN_OR_RETURN(auto conn, SqliteConnection::Open(path, flags, options.busy_timeout_ms));
  // The default page cache (2 MiB) thrashes once the uid and rank indexes of a
  // large log outgrow it: ingest of random uids then reads and rewrites pages
  // through the OS on every batch. A bigger cache and memory-mapped reads keep
  // ingest and lookups off the syscall path.
  TF_RETURN_IF_ERROR(conn->Exec("PRAGMA cache_size=-" + std::to_string(int64_t{options.cache_mib} * 1024)));
  TF_RETURN_IF_ERROR(conn->Exec("PRAGMA mmap_size=" + std::to_string(int64_t{options.mmap_mib} << 20)));
  if (!options.read_only) {
    TF_ASSIGN_OR_RETURN(std::string mode, conn->QueryText("PRAGMA journal_mode=WAL"));
    if (mode != "wal") return Status::IOError(path + ": cannot switch to WAL mode (journal_mode is " + mode + ")");
    // Durability: in WAL mode a transaction is committed once its frames are
    // write()n to the -wal file. That data lives in the OS page cache, which a
    // killed process (SIGKILL, crash) does not take with it, so NORMAL keeps
    // every committed record across process death. Only a power loss or
    // kernel crash can drop the last transactions before the next fsync;
    // FULL (power_safe) fsyncs the WAL on every commit to cover that too.
    TF_RETURN_IF_ERROR(conn->Exec(options.power_safe ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
    // Checkpoint every ~32 MiB of WAL instead of SQLite's 4 MiB: each
    // checkpoint fsyncs the whole database file, which dominated batch ingest
    // into a large log. Durability is unchanged (see above).
    TF_RETURN_IF_ERROR(conn->Exec("PRAGMA wal_autocheckpoint=8192"));
    if (!inspection.exists || inspection.schema_version < kSchemaVersion) {
      TF_RETURN_IF_ERROR(MigrateSchema(conn.get(), kSchemaVersion));
    }
  }
  int schema_version = options.read_only ? inspection.schema_version : kSchemaVersion;
  return std::unique_ptr<Database>(new Database(path, options, schema_version, std::move(conn)));
}

Status Database::ReadOnlyError() const {
  return Status::FailedPrecondition(path_ + ": opened read-only; cannot write to it");
}

}  // namespace tunefarm::database
