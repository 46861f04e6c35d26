#include "tunefarm/database/db_commands.h"

#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "tunefarm/database/database.h"
#include "tunefarm/database/jsonl.h"
#include "tunefarm/database/layered_database.h"

namespace tunefarm::database {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitInternal = 2;

int Fail(const Status& status, std::ostream& err) {
  err << "tunefarm db: " << status.message() << "\n";
  return status.code() == StatusCode::kInternal ? kExitInternal : kExitUserError;
}

int UsageError(const std::string& message, std::ostream& err) {
  err << "tunefarm db: " << message << "\n";
  return kExitUserError;
}

Result<std::unique_ptr<Database>> OpenForReading(const DbCommandOptions& options) {
  OpenOptions open;
  open.read_only = true;
  return Database::Open(options.db_path, open);
}

Target QueryTarget(const DbCommandOptions& options) {
  Target target{options.target, options.fingerprint};
  CanonicalizeFingerprint(&target.fingerprint);
  return target;
}

// --workload names a workload by its structural hash or, when the log holds
// exactly one workload of that name, by name. Anything else is the user's
// mistake: an export or a lookup of a workload the log does not hold would
// otherwise answer with nothing and look like success.
Result<std::string> ResolveWorkload(TuningLog& db, const std::string& name_or_hash, const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::vector<Workload> workloads, db.ListWorkloads());
  constexpr size_t kListed = 10;  // workloads named in the not-found message
  std::vector<std::string> named;
  std::string known;
  for (size_t i = 0; i < workloads.size(); ++i) {
    const Workload& w = workloads[i];
    if (w.hash == name_or_hash) return w.hash;
    if (w.name == name_or_hash) named.push_back(w.hash);
    if (i < kListed) known += (known.empty() ? "" : ", ") + w.name + " (" + w.hash + ")";
  }
  if (workloads.size() > kListed) known += " and " + std::to_string(workloads.size() - kListed) + " more";
  if (named.size() == 1) return named[0];
  if (named.size() > 1) {
    std::string hashes;
    for (const std::string& h : named) hashes += (hashes.empty() ? "" : ", ") + h;
    return Status::InvalidArgument(path + " holds " + std::to_string(named.size()) + " workloads named '" +
                                   name_or_hash + "'; give one's structural hash: " + hashes);
  }
  return Status::NotFound("no workload '" + name_or_hash + "' (name or structural hash) in " + path +
                          (known.empty() ? std::string(", which holds no workload") : "; it holds " + known));
}

std::string FormatSeconds(double seconds) {
  std::ostringstream text;
  text << std::setprecision(4);
  if (seconds < 1e-3) {
    text << seconds * 1e6 << " us";
  } else if (seconds < 1) {
    text << seconds * 1e3 << " ms";
  } else {
    text << seconds << " s";
  }
  return text.str();
}

// A ranked answer's record as JSON Lines writes it, plus what it ranked by.
nlohmann::json RankedRecordToJson(const TuningRecord& record) {
  nlohmann::json json = RecordToJson(record);
  json["trace_mean_sec"] = record.trace_mean_sec;
  json["trace_records"] = record.trace_records;
  return json;
}

void PrintRecord(const TuningRecord& record, std::ostream& out) {
  out << "  uid      " << record.uid << "\n"
      << "  time     " << FormatSeconds(record.TimeSec().value_or(0)) << ", the fastest of "
      << record.run_secs.size() << " timed groups\n";
  if (record.trace_records > 1) {
    out << "  ranked   " << FormatSeconds(record.trace_mean_sec) << ", the mean of the " << record.trace_records
        << " measurements of this trace\n";
  }
  out << "  target   " << record.target.target << " (" << record.target.fingerprint.isa << " "
      << record.target.fingerprint.arch << ", " << record.target.fingerprint.cores << " cores, "
      << record.target.fingerprint.toolchain << ")\n"
      << "  worker   " << record.worker << " / " << record.device << "\n";
  if (record.emulated) {
    out << "  emulated yes: measured under emulation, its time says nothing about a real device\n";
  }
  out << "  trace    " << record.trace << "\n";
}

// The line said before an answer of emulated records only: the lookups
// answer with those only when no record measured on a real device matches.
void PrintEmulatedOnly(const std::string& workload, std::ostream& out) {
  out << "note: no record of " << workload << " measured on a real device matches; "
      << "what follows was measured under emulation\n";
}

}  // namespace

int RunDbStats(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto db = OpenForReading(options);
  if (!db.ok()) return Fail(db.status(), err);
  auto stats = (*db)->Stats();
  if (!stats.ok()) return Fail(stats.status(), err);
  if (options.json) {
    out << nlohmann::json{{"path", stats->path},          {"schema_version", stats->schema_version},
                          {"workloads", stats->workloads}, {"targets", stats->targets},
                          {"records", stats->records},     {"failed_records", stats->failed_records},
                          {"synthetic_records", stats->synthetic_records},
                          {"emulated_records", stats->emulated_records},
                          {"jobs", stats->jobs},           {"file_bytes", stats->file_bytes}}
               .dump()
        << "\n";
    return kExitOk;
  }
  out << stats->path << " (schema " << stats->schema_version << ", " << stats->file_bytes << " bytes)\n"
      << "  workloads  " << stats->workloads << "\n"
      << "  targets    " << stats->targets << "\n"
      << "  records    " << stats->records << " (" << stats->failed_records << " failed"
      << (stats->synthetic_records > 0 ? ", " + std::to_string(stats->synthetic_records) +
                                             " synthetic: a test device's, never served"
                                       : std::string())
      << (stats->emulated_records > 0 ? ", " + std::to_string(stats->emulated_records) +
                                            " emulated: served only where nothing real is"
                                      : std::string())
      << ")\n"
      << "  jobs       " << stats->jobs << "\n";
  return kExitOk;
}

int RunDbBest(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.workload.empty() || options.target.empty()) {
    return UsageError("best needs --workload NAME|HASH and --target STRING", err);
  }
  OpenOptions user_options;
  user_options.read_only = true;
  auto layered = LayeredDatabase::Open(options.db_path, options.system_db_path, user_options);
  if (!layered.ok()) return Fail(layered.status(), err);
  // The user log first, then the system log: either may hold the workload.
  auto workload = ResolveWorkload((*layered)->user(), options.workload, options.db_path);
  if (!workload.ok() && workload.status().code() == StatusCode::kNotFound && (*layered)->system()) {
    auto in_system = ResolveWorkload(*(*layered)->system(), options.workload, options.system_db_path);
    if (in_system.ok() || in_system.status().code() != StatusCode::kNotFound) workload = std::move(in_system);
  }
  if (!workload.ok()) return Fail(workload.status(), err);
  auto best = (*layered)->GetBest(*workload, QueryTarget(options));
  if (!best.ok()) return Fail(best.status(), err);
  const BestRecord& answer = *best;
  if (options.json) {
    nlohmann::json json{{"level", FallbackLevelName(answer.level)}};
    if (answer.record) {
      json["layer"] = LayerName(answer.layer);
      json["record"] = RankedRecordToJson(*answer.record);
    }
    out << DumpJsonLine(json) << "\n";
    return kExitOk;
  }
  if (!answer.record) {
    out << "no successful record for workload " << options.workload << " on this device or architecture "
        << "(fallback level: none)\n";
    return kExitOk;
  }
  if (answer.record->emulated) PrintEmulatedOnly(options.workload, out);
  out << "best record (fallback level: " << FallbackLevelName(answer.level) << ", from the "
      << LayerName(answer.layer) << " database)\n";
  PrintRecord(*answer.record, out);
  return kExitOk;
}

int RunDbTop(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.workload.empty() || options.target.empty()) {
    return UsageError("top needs --workload NAME|HASH and --target STRING", err);
  }
  if (options.k < 1) return UsageError("-k must be at least 1", err);
  auto db = OpenForReading(options);
  if (!db.ok()) return Fail(db.status(), err);
  // With a fingerprint, the exact target; with only a target string, every
  // device that ran it.
  bool exact = !options.fingerprint.isa.empty();
  auto workload = ResolveWorkload(**db, options.workload, options.db_path);
  if (!workload.ok()) return Fail(workload.status(), err);
  auto top = exact ? (*db)->GetTopK(*workload, QueryTarget(options), options.k)
                   : (*db)->GetTopKByTargetString(*workload, options.target, options.k);
  if (!top.ok()) return Fail(top.status(), err);
  if (options.json) {
    for (const TuningRecord& record : *top) out << DumpJsonLine(RankedRecordToJson(record)) << "\n";
    return kExitOk;
  }
  // Real records and emulated ones never come together (tuning_log.h).
  if (!top->empty() && top->front().emulated) PrintEmulatedOnly(options.workload, out);
  out << top->size() << " record(s), fastest first\n";
  for (size_t i = 0; i < top->size(); ++i) {
    out << "#" << i + 1 << "\n";
    PrintRecord((*top)[i], out);
  }
  return kExitOk;
}

int RunDbExport(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto db = OpenForReading(options);
  if (!db.ok()) return Fail(db.status(), err);
  RecordFilter filter{"", options.target};
  if (!options.workload.empty()) {
    auto workload = ResolveWorkload(**db, options.workload, options.db_path);
    if (!workload.ok()) return Fail(workload.status(), err);
    filter.workload_hash = *workload;
  }
  if (options.file == "-") {
    Status status = (*db)->ExportJsonl(out, filter);
    return status.ok() ? kExitOk : Fail(status, err);
  }
  std::ofstream file(options.file, std::ios::trunc);
  if (!file) return UsageError(options.file + ": cannot be written", err);
  Status status = (*db)->ExportJsonl(file, filter);
  if (!status.ok()) return Fail(status, err);
  err << "exported " << options.db_path << " to " << options.file << "\n";
  return kExitOk;
}

int RunDbImport(const DbCommandOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  std::ifstream file;
  std::istream* input = &in;
  std::string source = "<stdin>";
  if (options.file != "-") {
    file.open(options.file);
    if (!file) return UsageError(options.file + ": cannot be read", err);
    input = &file;
    source = options.file;
  }
  auto db = Database::Open(options.db_path);
  if (!db.ok()) return Fail(db.status(), err);
  auto stats = (*db)->ImportJsonl(*input, source);
  if (!stats.ok()) return Fail(stats.status(), err);
  out << "imported " << stats->records_added << " record(s) and " << stats->workloads_added
      << " workload(s) into " << options.db_path << "; " << stats->records_skipped << " already present\n";
  return kExitOk;
}

int RunDbMerge(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.sources.empty()) return UsageError("merge needs at least one source database", err);
  auto db = Database::Open(options.db_path);
  if (!db.ok()) return Fail(db.status(), err);
  for (const std::string& source : options.sources) {
    auto stats = (*db)->Merge(source);
    if (!stats.ok()) return Fail(stats.status(), err);
    out << "merged " << source << ": " << stats->records_added << " record(s) and " << stats->workloads_added
        << " workload(s) added, " << stats->records_skipped << " already present\n";
  }
  return kExitOk;
}

int RunDbPrune(const DbCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.k < 1) return UsageError("-k must be at least 1", err);
  auto db = Database::Open(options.db_path);
  if (!db.ok()) return Fail(db.status(), err);
  auto deleted = (*db)->Prune(options.k);
  if (!deleted.ok()) return Fail(deleted.status(), err);
  out << "pruned " << *deleted << " record(s) from " << options.db_path << ", keeping the top " << options.k
      << " per workload and target\n";
  return kExitOk;
}

}  // namespace tunefarm::database
