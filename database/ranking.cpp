// Database: ranking records — top-k and the fallback chain of GetBest.
//
// A trace ranks by the mean over all its successful records on one target,
// not by its luckiest one: among hundreds of kernels within a few percent of
// each other, the fastest single measurement is mostly the one the machine's
// noise favoured, and the tuner measures each new best again so that its
// second time counts too (tuning_loop.h). Records stay append-only; the
// ranking groups them at read time through the records_by_trace index.
//
// Synthetic records (a test device's invented times, record.h) never rank:
// they are left out of every query here, so nothing ranks them against
// measured ones and no lookup answers with one. Since schema v5 the
// records_rank index holds none of them; in an older file opened read-only
// they are the records of a target with the test device's toolchain.
//
// Emulated records (measured under qemu, record.h) rank only among
// themselves, and only where nothing real does: every query ranks the real
// records first and turns to the emulated ones when none answered (GetBest:
// after the whole fallback chain found nothing real). A time taken under
// emulation says nothing about a board, so however fast it is it must never
// beat, or stand in for, a measured one; but a kernel tuned there is still a
// better start than the default schedule where no board was measured, and
// the answer carries emulated = true so that its caller says so. Since
// schema v6 the records_rank index is keyed by the mark before the time.
#include <algorithm>
#include <set>

#include "database/database_internal.h"
#include "database/sqlite_connection.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {

namespace {

struct Ranked {
  double score = 0;
  TuningRecord record;
};

bool RanksBefore(const Ranked& a, const Ranked& b) {
  return a.score != b.score ? a.score < b.score : a.record.id < b.record.id;
}

}  // namespace

Result<std::pair<double, int>> Database::TraceMeanLocked(int64_t workload_id, int64_t target_id,
                                                         const std::string& trace, bool emulated) {
  // (An older file has no synthetic column; its synthetic records are those
  // of a whole target, which the caller skips.)
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      std::string("SELECT mean_sec, trace, error_kind FROM records WHERE workload_id = ? AND target_id = ? "
                  "AND trace_hash = ? AND ") +
      EmulatedColumn(schema_version_) + " = ?" + (schema_version_ >= 5 ? " AND synthetic = 0" : "")));
  stmt.Bind(1, workload_id).Bind(2, target_id).Bind(3, TraceHash(trace)).Bind(4, int64_t{emulated});
  double sum = 0;
  int count = 0;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (stmt.ColumnText(1) != trace) continue;  // another trace with the same hash
    // A kernel that once computed a wrong result is never handed out, however
    // fast its other runs were (the check is against the reference).
    if (stmt.ColumnInt(2) == static_cast<int64_t>(ErrorKind::kWrongResult)) return std::make_pair(0.0, -1);
    if (stmt.ColumnIsNull(0)) continue;  // failed otherwise (a timeout): no time
    sum += stmt.ColumnDouble(0);
    ++count;
  }
  // No record under the trace's hash: written by an older tunefarm that had
  // the file open while another process migrated it (its INSERT names no
  // trace_hash, so the column's default, 0). Such a record ranks alone.
  if (count == 0) return std::make_pair(0.0, 0);
  return std::make_pair(sum / count, count);
}

Result<std::vector<TuningRecord>> Database::TopKForTargetsLocked(std::string_view workload_hash,
                                                                 int64_t workload_id,
                                                                 const std::vector<int64_t>& target_ids, int k,
                                                                 bool emulated) {
  // Per target, records come in mean_sec order through the records_rank
  // index. A trace's mean is never below its fastest record's time, so once
  // k traces are ranked, a record slower than the k-th of them ends the scan:
  // nothing after it can enter. With one record per trace (a log written
  // before traces were measured again) that is exactly the first k records.
  std::vector<Ranked> ranked;
  // The conditions on synthetic and emulated match the records_rank index's
  // (schema v6).
  std::string sql = "SELECT " + RecordColumns(schema_version_) +
                    " FROM records WHERE workload_id = ? AND target_id = ? AND " + EmulatedColumn(schema_version_) +
                    " = ? AND mean_sec IS NOT NULL " + (schema_version_ >= 5 ? "AND synthetic = 0 " : "") +
                    "ORDER BY mean_sec, id";
  for (int64_t target_id : target_ids) {
    std::vector<Ranked> found;  // this target's traces, in rank order
    std::set<std::string> seen_traces;
    TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(sql));
    stmt.Bind(1, workload_id).Bind(2, target_id).Bind(3, int64_t{emulated});
    while (true) {
      TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      double mean = stmt.ColumnDouble(11);
      if (found.size() >= static_cast<size_t>(k) && mean > found[k - 1].score) break;
      int64_t row_target = 0;
      TuningRecord record = ReadRecordRow(stmt, &row_target);
      if (record.synthetic) break;  // an older file: the whole target is a test device's
      if (!seen_traces.insert(record.trace).second) continue;  // a slower record of a ranked trace
      record.workload_hash = std::string(workload_hash);
      record.trace_mean_sec = mean;
      record.trace_records = 1;
      // Older files opened read-only (never migrated) have no trace_hash: a
      // trace ranks by its fastest record there, as it did then.
      if (schema_version_ >= 3) {
        TF_ASSIGN_OR_RETURN(auto trace_mean, TraceMeanLocked(workload_id, target_id, record.trace, emulated));
        if (trace_mean.second < 0) continue;  // a wrong result on record: never ranks
        if (trace_mean.second > 0) {
          record.trace_mean_sec = trace_mean.first;
          record.trace_records = trace_mean.second;
        }
      }
      TF_ASSIGN_OR_RETURN(record, LoadTargetLocked(row_target, std::move(record)));
      Ranked entry{record.trace_mean_sec, std::move(record)};
      found.insert(std::upper_bound(found.begin(), found.end(), entry, RanksBefore), std::move(entry));
      if (found.size() > static_cast<size_t>(k)) found.pop_back();
    }
    for (Ranked& entry : found) ranked.push_back(std::move(entry));
  }
  std::stable_sort(ranked.begin(), ranked.end(), RanksBefore);
  if (ranked.size() > static_cast<size_t>(k)) ranked.resize(k);
  std::vector<TuningRecord> top;
  top.reserve(ranked.size());
  for (Ranked& entry : ranked) top.push_back(std::move(entry.record));
  return top;
}

Result<std::vector<TuningRecord>> Database::TopKRealFirstLocked(std::string_view workload_hash, int64_t workload_id,
                                                                const std::vector<int64_t>& target_ids, int k) {
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> real,
                      TopKForTargetsLocked(workload_hash, workload_id, target_ids, k, /*emulated=*/false));
  if (!real.empty()) return real;
  return TopKForTargetsLocked(workload_hash, workload_id, target_ids, k, /*emulated=*/true);
}

Result<std::vector<TuningRecord>> Database::GetTopK(std::string_view workload_hash, const Target& target, int k) {
  if (k <= 0) return Status::InvalidArgument("top-k needs k >= 1, got " + std::to_string(k));
  Target canonical = target;
  CanonicalizeFingerprint(&canonical.fingerprint);
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadIdLocked(workload_hash));
  TF_ASSIGN_OR_RETURN(int64_t target_id, TargetIdLocked(canonical, /*create=*/false));
  if (workload_id == 0 || target_id == 0) return std::vector<TuningRecord>();
  return TopKRealFirstLocked(workload_hash, workload_id, {target_id}, k);
}

Result<std::vector<TuningRecord>> Database::GetTopKByTargetString(std::string_view workload_hash,
                                                                  std::string_view target_string, int k) {
  if (k <= 0) return Status::InvalidArgument("top-k needs k >= 1, got " + std::to_string(k));
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadIdLocked(workload_hash));
  if (workload_id == 0) return std::vector<TuningRecord>();
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> target_ids, TargetIdsForStringLocked(target_string));
  return TopKRealFirstLocked(workload_hash, workload_id, target_ids, k);
}

Result<std::optional<TuningRecord>> Database::GetBestAtLevel(std::string_view workload_hash, const Target& target,
                                                             FallbackLevel level, const RecordUsable& usable,
                                                             bool emulated) {
  if (level == FallbackLevel::kNone) return std::optional<TuningRecord>();
  Target canonical = target;
  CanonicalizeFingerprint(&canonical.fingerprint);
  std::vector<TuningRecord> top;
  {
    std::lock_guard<std::mutex> lock(mu_);
    TF_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadIdLocked(workload_hash));
    if (workload_id == 0) return std::optional<TuningRecord>();
    std::vector<int64_t> target_ids;
    if (level == FallbackLevel::kSameDevice) {
      TF_ASSIGN_OR_RETURN(int64_t target_id, TargetIdLocked(canonical, /*create=*/false));
      if (target_id != 0) target_ids.push_back(target_id);
    } else {
      TF_ASSIGN_OR_RETURN(target_ids, TargetIdsForArchLocked(canonical));
    }
    TF_ASSIGN_OR_RETURN(top, TopKForTargetsLocked(workload_hash, workload_id, target_ids,
                                                  usable ? kUsableCandidates : 1, emulated));
  }
  // The check (a trace replay, say) runs unlocked: other callers need not wait.
  for (TuningRecord& record : top) {
    if (!usable || usable(record)) return std::optional<TuningRecord>(std::move(record));
  }
  return std::optional<TuningRecord>();
}

Result<BestRecord> Database::GetBest(std::string_view workload_hash, const Target& target,
                                     const RecordUsable& usable) {
  // The whole chain over real records before any emulated one (see the top).
  for (bool emulated : {false, true}) {
    for (FallbackLevel level : {FallbackLevel::kSameDevice, FallbackLevel::kSameArch}) {
      TF_ASSIGN_OR_RETURN(std::optional<TuningRecord> record,
                          GetBestAtLevel(workload_hash, target, level, usable, emulated));
      if (record) return BestRecord{level, std::move(record)};
    }
  }
  return BestRecord{};
}

}  // namespace tunefarm::database
