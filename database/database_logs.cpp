// Database: operations on the log as a whole — iteration, merge, JSON Lines
// export and import, pruning, statistics and preparing a system database.
#include <sys/stat.h>

#include <istream>
#include <ostream>

#include "database/database_internal.h"
#include "database/schema.h"
#include "database/sqlite_connection.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/jsonl.h"

namespace tunefarm::database {

Status Database::ForEachRecord(const RecordFilter& filter,
                               const std::function<Status(const TuningRecord&)>& visit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string sql = "SELECT " + RecordColumns(schema_version_) +
                    ", (SELECT hash FROM workloads WHERE workloads.id = records.workload_id) FROM records "
                    "WHERE (?1 = '' OR workload_id = (SELECT id FROM workloads WHERE hash = ?1)) "
                    "AND (?2 = '' OR target_id IN (SELECT id FROM targets WHERE target = ?2)) ORDER BY id";
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(sql));
  stmt.Bind(1, filter.workload_hash).Bind(2, filter.target);
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return Status::OK();
    int64_t target_id = 0;
    TuningRecord record = ReadRecordRow(stmt, &target_id);
    record.workload_hash = stmt.ColumnText(14);
    TF_ASSIGN_OR_RETURN(record, LoadTargetLocked(target_id, std::move(record)));
    TF_RETURN_IF_ERROR(visit(record));
  }
}

Result<IngestStats> Database::Merge(const std::string& other_path) {
  if (options_.read_only) return ReadOnlyError();
  OpenOptions other_options;
  other_options.read_only = true;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Database> other, Database::Open(other_path, other_options));
  TF_ASSIGN_OR_RETURN(std::vector<Workload> workloads, other->ListWorkloads());

  std::lock_guard<std::mutex> lock(mu_);
  IngestStats stats;
  WriteTransaction txn(conn_.get());
  TF_RETURN_IF_ERROR(txn.Begin());
  for (const Workload& workload : workloads) {
    bool added = false;
    TF_RETURN_IF_ERROR(InsertWorkloadLocked(workload, &added));
    stats.workloads_added += added;
  }
  TF_RETURN_IF_ERROR(other->ForEachRecord({}, [&](const TuningRecord& record) -> Status {
    TF_ASSIGN_OR_RETURN(int64_t id, InsertRecordLocked(record, /*ignore_duplicate_uid=*/true));
    ++(id != 0 ? stats.records_added : stats.records_skipped);
    return Status::OK();
  }));
  TF_RETURN_IF_ERROR(txn.Commit());
  return stats;
}

Status Database::ExportJsonl(std::ostream& out, const RecordFilter& filter) {
  out << DumpJsonLine(JsonlHeader()) << '\n';
  TF_ASSIGN_OR_RETURN(std::vector<Workload> workloads, ListWorkloads());
  for (const Workload& workload : workloads) {
    if (!filter.workload_hash.empty() && workload.hash != filter.workload_hash) continue;
    out << DumpJsonLine(WorkloadToJson(workload)) << '\n';
  }
  TF_RETURN_IF_ERROR(ForEachRecord(filter, [&](const TuningRecord& record) {
    out << DumpJsonLine(RecordToJson(record)) << '\n';
    return Status::OK();
  }));
  out.flush();
  if (!out) return Status::IOError(path_ + ": writing the JSON Lines export failed");
  return Status::OK();
}

Result<IngestStats> Database::ImportJsonl(std::istream& in, std::string_view source_name) {
  if (options_.read_only) return ReadOnlyError();
  std::lock_guard<std::mutex> lock(mu_);
  const std::string source(source_name);
  auto at_line = [&](int64_t line, const Status& status) {
    return Status(status.code(), source + ":" + std::to_string(line) + ": " + status.message() +
                                     " (nothing from this file was imported)");
  };
  IngestStats stats;
  WriteTransaction txn(conn_.get());
  TF_RETURN_IF_ERROR(txn.Begin());
  std::string line;
  int64_t line_number = 0;
  bool saw_header = false;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) return at_line(line_number, Status::InvalidArgument("not valid JSON"));
    if (!saw_header) {
      Status header = CheckJsonlHeader(object);
      if (!header.ok()) return at_line(line_number, header);
      saw_header = true;
      continue;
    }
    std::string type;
    if (object.is_object() && object.contains("type")) {
      // A non-string type is reported as its JSON text (json::value would throw).
      type = object["type"].is_string() ? object["type"].get<std::string>() : object["type"].dump();
    }
    if (type == "header") {
      // Concatenated exports (`cat a.jsonl b.jsonl | tunefarm db import -`):
      // each part starts with its own header, checked like the first.
      Status header = CheckJsonlHeader(object);
      if (!header.ok()) {
        return at_line(line_number, Status(header.code(), "the header of a concatenated part: " + header.message()));
      }
    } else if (type == "workload") {
      Result<Workload> workload = WorkloadFromJson(object);
      if (!workload.ok()) return at_line(line_number, workload.status());
      bool added = false;
      Status status = InsertWorkloadLocked(*workload, &added);
      if (!status.ok()) return at_line(line_number, status);
      stats.workloads_added += added;
    } else if (type == "record") {
      Result<TuningRecord> record = RecordFromJson(object);
      if (!record.ok()) return at_line(line_number, record.status());
      Result<int64_t> id = InsertRecordLocked(*record, /*ignore_duplicate_uid=*/true);
      if (!id.ok()) return at_line(line_number, id.status());
      ++(*id != 0 ? stats.records_added : stats.records_skipped);
    } else {
      return at_line(line_number, Status::InvalidArgument("unknown line type '" + type +
                                                          "' (expected 'workload', 'record' or 'header')"));
    }
  }
  if (in.bad()) return Status::IOError(source + ": read error");
  if (!saw_header) return Status::InvalidArgument(source + ": empty file, not a tunefarm JSON Lines log");
  TF_RETURN_IF_ERROR(txn.Commit());
  return stats;
}

Result<int64_t> Database::Prune(int k) {
  if (options_.read_only) return ReadOnlyError();
  if (k < 1) return Status::InvalidArgument("prune needs k >= 1, got " + std::to_string(k));
  std::lock_guard<std::mutex> lock(mu_);
  WriteTransaction txn(conn_.get());
  TF_RETURN_IF_ERROR(txn.Begin());
  // Rank the traces within each (workload, target) as GetTopK does: by the
  // mean of their successful records' times, ties to the older fastest
  // record, a trace with a wrong result on record not at all. Every
  // successful record of a kept trace stays (dropping its slower ones would
  // rank it by its luckiest time again); failed records all go. Synthetic
  // records (a test device's) rank among themselves only, as the run that
  // made them does: the k fastest of them stay for it, apart from the real ones.
  // Emulated records rank among themselves too (they answer a lookup only
  // where nothing real does), so the k fastest of them stay as well.
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      "DELETE FROM records WHERE id NOT IN ("
      "  SELECT records.id FROM records JOIN ("
      "    SELECT workload_id, target_id, synthetic, emulated, trace, ROW_NUMBER() OVER ("
      "        PARTITION BY workload_id, target_id, synthetic, emulated ORDER BY score, fastest_id) AS rank"
      // With min() the only min/max aggregate, the bare column id is the
      // fastest record's (SQLite's documented bare-column rule).
      "    FROM (SELECT workload_id, target_id, synthetic, emulated, trace, avg(mean_sec) AS score,"
      "                 min(mean_sec), id AS fastest_id"
      "          FROM records GROUP BY workload_id, target_id, synthetic, emulated, trace"
      "          HAVING count(mean_sec) > 0 AND sum(error_kind = ?2) = 0)) AS kept"
      "  ON records.workload_id = kept.workload_id AND records.target_id = kept.target_id"
      "    AND records.synthetic = kept.synthetic AND records.emulated = kept.emulated"
      "    AND records.trace = kept.trace"
      "  WHERE records.mean_sec IS NOT NULL AND kept.rank <= ?1)"));
  stmt.Bind(1, static_cast<int64_t>(k));
  // A trace that once computed a wrong result is never kept as a best.
  stmt.Bind(2, static_cast<int64_t>(ErrorKind::kWrongResult));
  TF_RETURN_IF_ERROR(stmt.Run());
  int64_t deleted = sqlite3_changes64(conn_->raw());
  TF_RETURN_IF_ERROR(txn.Commit());
  return deleted;
}

Result<DatabaseStats> Database::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  DatabaseStats stats;
  stats.path = path_;
  // One read transaction, so the counts agree with each other.
  TF_RETURN_IF_ERROR(conn_->Exec("BEGIN"));
  auto count = [&](const char* sql, int64_t* out) -> Status {
    TF_ASSIGN_OR_RETURN(*out, conn_->QueryInt(sql));
    return Status::OK();
  };
  Status status = [&]() -> Status {
    TF_ASSIGN_OR_RETURN(stats.schema_version, ReadSchemaVersion(conn_.get()));
    TF_RETURN_IF_ERROR(count("SELECT count(*) FROM workloads", &stats.workloads));
    TF_RETURN_IF_ERROR(count("SELECT count(*) FROM targets", &stats.targets));
    TF_RETURN_IF_ERROR(count("SELECT count(*) FROM records", &stats.records));
    TF_RETURN_IF_ERROR(count("SELECT count(*) FROM records WHERE mean_sec IS NULL", &stats.failed_records));
    TF_RETURN_IF_ERROR(count(stats.schema_version >= 5
                                 ? "SELECT count(*) FROM records WHERE synthetic != 0"
                                 : "SELECT count(*) FROM records WHERE target_id IN "
                                   "(SELECT id FROM targets WHERE toolchain = 'none (test device)')",
                             &stats.synthetic_records));
    TF_RETURN_IF_ERROR(count(stats.schema_version >= 6
                                 ? "SELECT count(*) FROM records WHERE emulated != 0"
                                 : "SELECT count(*) FROM records WHERE target_id IN (SELECT id FROM targets "
                                   "WHERE length(arch) > 9 AND substr(arch, -9) = '-emulated')",
                             &stats.emulated_records));
    if (stats.schema_version >= 2) TF_RETURN_IF_ERROR(count("SELECT count(*) FROM jobs", &stats.jobs));
    return Status::OK();
  }();
  (void)conn_->Exec("COMMIT");
  TF_RETURN_IF_ERROR(status);
  for (const std::string& file : {path_, path_ + "-wal"}) {
    struct stat st{};
    if (::stat(file.c_str(), &st) == 0) stats.file_bytes += st.st_size;
  }
  return stats;
}

Status Database::PrepareForDistribution() {
  if (options_.read_only) return ReadOnlyError();
  std::lock_guard<std::mutex> lock(mu_);
  TF_RETURN_IF_ERROR(conn_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  TF_ASSIGN_OR_RETURN(std::string mode, conn_->QueryText("PRAGMA journal_mode=DELETE"));
  if (mode != "delete") {
    return Status::FailedPrecondition(path_ + ": cannot leave WAL mode (journal_mode " + mode +
                                      "); close other connections to it first");
  }
  return Status::OK();
}

}  // namespace tunefarm::database
