// Database: workloads, targets and committing records.
// Opening lives in database_open.cpp, ranking (top-k, best) in ranking.cpp,
// whole-log operations (merge, JSON Lines, prune, stats) in database_logs.cpp,
// job state in jobs.cpp.
#include "tunefarm/database/database.h"

#include <algorithm>
#include <chrono>

#include "database/database_internal.h"
#include "database/sqlite_connection.h"

namespace tunefarm::database {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t TraceHash(std::string_view trace) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (unsigned char c : trace) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return static_cast<int64_t>(hash);
}

std::string TargetCacheKey(const Target& target) {
  std::string key = target.target;
  for (const std::string* part : {&target.fingerprint.isa, &target.fingerprint.arch, &target.fingerprint.toolchain}) {
    key += '\x1f';
    key += *part;
  }
  key += '\x1f' + std::to_string(target.fingerprint.cores) + '\x1f' + JoinFeatures(target.fingerprint.features);
  return key;
}

std::string JoinFeatures(const std::vector<std::string>& features) {
  std::string joined;
  for (const std::string& feature : features) {
    if (!joined.empty()) joined += ',';
    joined += feature;
  }
  return joined;
}

std::vector<std::string> SplitFeatures(const std::string& joined) {
  std::vector<std::string> features;
  size_t start = 0;
  while (start < joined.size()) {
    size_t comma = joined.find(',', start);
    if (comma == std::string::npos) comma = joined.size();
    features.push_back(joined.substr(start, comma - start));
    start = comma + 1;
  }
  return features;
}

std::string EmulatedColumn(int schema_version) {
  return schema_version >= 6 ? "emulated"
                             : "(SELECT length(arch) > 9 AND substr(arch, -9) = '-emulated' FROM targets "
                               "WHERE targets.id = records.target_id)";
}

std::string RecordColumns(int schema_version) {
  return std::string(kRecordColumns) +
         (schema_version >= 5 ? ", synthetic"
                              : ", (SELECT toolchain = 'none (test device)' FROM targets WHERE id = records.target_id)") +
         ", " + EmulatedColumn(schema_version);
}

// Reads the columns listed in RecordColumns (starting at column 0); the
// target is left for LoadTargetLocked, the workload hash for the caller.
TuningRecord ReadRecordRow(const Statement& stmt, int64_t* target_id) {
  TuningRecord record;
  record.id = stmt.ColumnInt(0);
  record.uid = stmt.ColumnText(1);
  *target_id = stmt.ColumnInt(2);
  record.trace = stmt.ColumnText(3);
  record.run_secs = stmt.ColumnDoubles(4);
  record.error_kind = static_cast<ErrorKind>(stmt.ColumnInt(5));
  record.error_msg = stmt.ColumnText(6);
  record.worker = stmt.ColumnText(7);
  record.device = stmt.ColumnText(8);
  record.tunefarm_version = stmt.ColumnText(9);
  record.created_at_us = stmt.ColumnInt(10);
  record.synthetic = stmt.ColumnInt(12) != 0;
  record.emulated = stmt.ColumnInt(13) != 0;
  return record;
}

std::string_view FallbackLevelName(FallbackLevel level) {
  switch (level) {
    case FallbackLevel::kSameDevice: return "same_device";
    case FallbackLevel::kSameArch: return "same_arch";
    case FallbackLevel::kNone: return "none";
  }
  return "none";
}

std::string_view LayerName(Layer layer) { return layer == Layer::kUser ? "user" : "system"; }

// --- workloads and targets ---------------------------------------------------

Result<int64_t> Database::WorkloadIdLocked(std::string_view hash) {
  std::string key(hash);
  if (auto it = workload_ids_.find(key); it != workload_ids_.end()) return it->second;
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare("SELECT id FROM workloads WHERE hash = ?"));
  stmt.Bind(1, hash);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return int64_t{0};
  int64_t id = stmt.ColumnInt(0);
  // Only cache when not inside a write transaction that might still roll back.
  if (sqlite3_get_autocommit(conn_->raw())) workload_ids_.emplace(std::move(key), id);
  return id;
}

Status Database::InsertWorkloadLocked(const Workload& workload, bool* added) {
  if (workload.hash.empty()) return Status::InvalidArgument("workload '" + workload.name + "' has an empty hash");
  for (const std::string* text : {&workload.hash, &workload.name, &workload.text}) {
    if (!IsValidUtf8(*text)) return Status::InvalidArgument("workload " + workload.hash + ": text is not valid UTF-8");
  }
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      "INSERT OR IGNORE INTO workloads(hash, name, text, created_at_us) VALUES (?, ?, ?, ?)"));
  stmt.Bind(1, workload.hash).Bind(2, workload.name).Bind(3, workload.text).Bind(4, NowMicros());
  TF_RETURN_IF_ERROR(stmt.Run());
  *added = sqlite3_changes(conn_->raw()) > 0;
  return Status::OK();
}

Status Database::CommitWorkload(const Workload& workload) {
  if (options_.read_only) return ReadOnlyError();
  std::lock_guard<std::mutex> lock(mu_);
  bool added = false;
  return InsertWorkloadLocked(workload, &added);  // autocommit: one statement
}

Result<std::optional<Workload>> Database::GetWorkload(std::string_view hash) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare("SELECT hash, name, text FROM workloads WHERE hash = ?"));
  stmt.Bind(1, hash);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<Workload>();
  return std::optional<Workload>(Workload{stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnText(2)});
}

Result<std::vector<Workload>> Database::ListWorkloads() {
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare("SELECT hash, name, text FROM workloads ORDER BY id"));
  std::vector<Workload> workloads;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    workloads.push_back(Workload{stmt.ColumnText(0), stmt.ColumnText(1), stmt.ColumnText(2)});
  }
  return workloads;
}

Result<int64_t> Database::TargetIdLocked(const Target& target, bool create) {
  std::string key = TargetCacheKey(target);
  if (auto it = target_ids_.find(key); it != target_ids_.end()) return it->second;
  const HardwareFingerprint& fp = target.fingerprint;
  std::string features = JoinFeatures(fp.features);
  if (create) {
    TF_ASSIGN_OR_RETURN(Statement insert, conn_->Prepare(
        "INSERT OR IGNORE INTO targets(target, isa, features, arch, cores, toolchain) VALUES (?, ?, ?, ?, ?, ?)"));
    insert.Bind(1, target.target).Bind(2, fp.isa).Bind(3, features).Bind(4, fp.arch).Bind(5, fp.cores)
        .Bind(6, fp.toolchain);
    TF_RETURN_IF_ERROR(insert.Run());
  }
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      "SELECT id FROM targets WHERE target = ? AND isa = ? AND features = ? AND arch = ? AND cores = ? "
      "AND toolchain = ?"));
  stmt.Bind(1, target.target).Bind(2, fp.isa).Bind(3, features).Bind(4, fp.arch).Bind(5, fp.cores)
      .Bind(6, fp.toolchain);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return int64_t{0};
  int64_t id = stmt.ColumnInt(0);
  // Only cache when not inside a write transaction that might still roll back.
  if (sqlite3_get_autocommit(conn_->raw())) target_ids_.emplace(std::move(key), id);
  return id;
}

Result<std::vector<int64_t>> Database::TargetIdsForArchLocked(const Target& target) {
  // The real arch and its emulated twin: which of their records may answer
  // is the ranking's business (real ones first, ranking.cpp).
  const std::string real_arch(RealArch(target.fingerprint.arch));
  TF_ASSIGN_OR_RETURN(Statement stmt,
                      conn_->Prepare("SELECT id FROM targets WHERE isa = ? AND (arch = ? OR arch = ?) ORDER BY id"));
  stmt.Bind(1, target.fingerprint.isa).Bind(2, real_arch).Bind(3, real_arch + std::string(kEmulatedArchSuffix));
  std::vector<int64_t> ids;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ids.push_back(stmt.ColumnInt(0));
  }
  return ids;
}

Result<std::vector<int64_t>> Database::TargetIdsForStringLocked(std::string_view target_string) {
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare("SELECT id FROM targets WHERE target = ? ORDER BY id"));
  stmt.Bind(1, target_string);
  std::vector<int64_t> ids;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ids.push_back(stmt.ColumnInt(0));
  }
  return ids;
}

Result<TuningRecord> Database::LoadTargetLocked(int64_t target_id, TuningRecord record) {
  auto it = targets_by_id_.find(target_id);
  if (it == targets_by_id_.end()) {
    TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
        "SELECT target, isa, features, arch, cores, toolchain FROM targets WHERE id = ?"));
    stmt.Bind(1, target_id);
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return Status::Corruption(path_ + ": record refers to missing target " + std::to_string(target_id));
    Target target{stmt.ColumnText(0),
                  HardwareFingerprint{stmt.ColumnText(1), SplitFeatures(stmt.ColumnText(2)), stmt.ColumnText(3),
                                      stmt.ColumnInt(4), stmt.ColumnText(5)}};
    it = targets_by_id_.emplace(target_id, std::move(target)).first;
  }
  record.target = it->second;
  return record;
}

Result<std::vector<Target>> Database::ListTargets() {
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare("SELECT id FROM targets ORDER BY id"));
  std::vector<int64_t> ids;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ids.push_back(stmt.ColumnInt(0));
  }
  std::vector<Target> targets;
  for (int64_t id : ids) {
    TF_ASSIGN_OR_RETURN(TuningRecord carrier, LoadTargetLocked(id, TuningRecord{}));
    targets.push_back(std::move(carrier.target));
  }
  return targets;
}

// --- records ------------------------------------------------------------------

Result<int64_t> Database::InsertRecordLocked(const TuningRecord& input, bool ignore_duplicate_uid) {
  TuningRecord record = input;
  CanonicalizeFingerprint(&record.target.fingerprint);
  TF_RETURN_IF_ERROR(ValidateRecord(record));
  TF_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadIdLocked(record.workload_hash));
  if (workload_id == 0) {
    return Status::NotFound(path_ + ": workload " + record.workload_hash +
                            " is not in the database (commit the workload before its records)");
  }
  TF_ASSIGN_OR_RETURN(int64_t target_id, TargetIdLocked(record.target, /*create=*/true));
  if (record.uid.empty()) record.uid = NewRecordUid();
  if (record.tunefarm_version.empty()) record.tunefarm_version = std::string(TunefarmVersion());
  if (record.created_at_us == 0) record.created_at_us = NowMicros();
  const char* sql = ignore_duplicate_uid
                        ? "INSERT OR IGNORE INTO records(uid, workload_id, target_id, trace, run_secs, mean_sec, "
                          "error_kind, error_msg, worker, device, tunefarm_version, created_at_us, trace_hash, "
                          "synthetic, emulated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                        : "INSERT INTO records(uid, workload_id, target_id, trace, run_secs, mean_sec, "
                          "error_kind, error_msg, worker, device, tunefarm_version, created_at_us, trace_hash, "
                          "synthetic, emulated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(sql));
  stmt.Bind(1, record.uid).Bind(2, workload_id).Bind(3, target_id).Bind(4, record.trace);
  stmt.BindBlob(5, record.run_secs.data(), record.run_secs.size() * sizeof(double));
  if (auto time = record.TimeSec()) {
    stmt.Bind(6, *time);
  } else {
    stmt.BindNull(6);
  }
  stmt.Bind(7, static_cast<int64_t>(record.error_kind)).Bind(8, record.error_msg).Bind(9, record.worker)
      .Bind(10, record.device).Bind(11, record.tunefarm_version).Bind(12, record.created_at_us)
      .Bind(13, TraceHash(record.trace));
  // A test device of an older version does not mark its records; its
  // fingerprint says what it is (record.h).
  const bool synthetic = record.synthetic || record.target.fingerprint.toolchain == kTestDeviceToolchain;
  stmt.Bind(14, int64_t{synthetic});
  // A worker that does not mark its results (an older one) still reports an
  // emulated fingerprint, which says what it is (record.h).
  const bool emulated = record.emulated || IsEmulatedFingerprint(record.target.fingerprint);
  stmt.Bind(15, int64_t{emulated});
  Status status = stmt.Run();
  if (!status.ok()) {
    if (status.code() == StatusCode::kInvalidArgument) {
      return Status::AlreadyExists(path_ + ": a record with uid " + record.uid + " already exists");
    }
    return status;
  }
  if (sqlite3_changes(conn_->raw()) == 0) return int64_t{0};  // duplicate uid, ignored
  return sqlite3_last_insert_rowid(conn_->raw());
}

Result<int64_t> Database::CommitRecord(const TuningRecord& record) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> ids, CommitRecords({record}));
  return ids.front();
}

Result<std::vector<int64_t>> Database::CommitRecords(const std::vector<TuningRecord>& records) {
  if (options_.read_only) return ReadOnlyError();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> ids;
  ids.reserve(records.size());
  WriteTransaction txn(conn_.get());
  TF_RETURN_IF_ERROR(txn.Begin());
  for (size_t i = 0; i < records.size(); ++i) {
    Result<int64_t> id = InsertRecordLocked(records[i], /*ignore_duplicate_uid=*/false);
    if (!id.ok()) {
      if (records.size() == 1) return id.status();
      return Status(id.status().code(), "record " + std::to_string(i) + " of " + std::to_string(records.size()) +
                                            ": " + id.status().message() + " (nothing from this batch was committed)");
    }
    ids.push_back(*id);
  }
  TF_RETURN_IF_ERROR(txn.Commit());
  return ids;
}

}  // namespace tunefarm::database
