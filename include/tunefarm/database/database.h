// Database: the tuning log, one SQLite file in WAL mode (schema in docs/database.md).
// It is the TuningLog (tuning_log.h) that every other one is made of.
//
// Every measurement tunefarm makes is committed here as a TuningRecord, and the
// compiler reads its best schedules from here. Records are append-only (a
// trigger refuses UPDATE); only Prune deletes, and only when asked.
//
// Lifetime: Open() returns an owned Database; the file stays open until it is
// destroyed. A Database is thread-safe: its methods serialize on one internal
// mutex. For parallel writers, open one Database per thread or process on the
// same file: SQLite's WAL plus busy_timeout serializes their transactions.
//
// Opening never modifies a file that is not a valid tunefarm database: the file
// is first inspected through a read-only connection (magic bytes, application_id,
// schema version, quick_check), and only then reopened read-write.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/database/job.h"
#include "tunefarm/database/record.h"
#include "tunefarm/database/tuning_log.h"

namespace tunefarm::database {

class SqliteConnection;  // database/sqlite_connection.h

// "TFDB" as a big-endian int: PRAGMA application_id of every tunefarm database.
inline constexpr int32_t kApplicationId = 0x54464442;
// The schema this build writes. Files with a newer version are refused.
inline constexpr int kSchemaVersion = 6;

struct OpenOptions {
  bool read_only = false;          // never write; the file must exist
  bool create_if_missing = true;   // ignored when read_only
  // false: PRAGMA synchronous=NORMAL, which in WAL mode keeps every committed
  // transaction across a process crash (SIGKILL) but may lose the last ones on
  // power loss. true: synchronous=FULL, which also survives power loss.
  bool power_safe = false;
  int busy_timeout_ms = 30000;     // how long a writer waits for the lock
  int cache_mib = 64;   // SQLite page cache per connection
  int mmap_mib = 1024;  // memory-mapped reads of the main file (0: off)
  // Run PRAGMA quick_check on open (O(file size)); off only for benchmarks of huge files.
  bool quick_check = true;
};

struct IngestStats {  // what Merge and ImportJsonl added
  int64_t workloads_added = 0;
  int64_t records_added = 0;
  int64_t records_skipped = 0;  // uid already present: merging twice is a no-op
};

struct DatabaseStats {
  std::string path;
  int schema_version = 0;
  int64_t workloads = 0;
  int64_t targets = 0;
  int64_t records = 0;
  int64_t failed_records = 0;
  int64_t synthetic_records = 0;  // a test device's invented times: never ranked or served
  int64_t emulated_records = 0;   // measured under emulation: served only where nothing real is
  int64_t jobs = 0;
  int64_t file_bytes = 0;  // main file plus WAL
};

class Database final : public TuningLog {
 public:
  // Opens (or creates) the tuning log at `path`. Errors name the path and the
  // problem: kNotFound (missing, read_only), kIOError (not writable),
  // kInvalidArgument (foreign file), kFailedPrecondition (newer schema),
  // kCorruption (truncated or damaged file).
  static Result<std::unique_ptr<Database>> Open(const std::string& path,
                                                const OpenOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }
  bool read_only() const { return options_.read_only; }

  // --- TuningLog (tuning_log.h: ranking, the fallback chain, `usable`) -----
  Status CommitWorkload(const Workload& workload) override;
  Result<std::optional<Workload>> GetWorkload(std::string_view hash) override;
  Result<std::vector<Workload>> ListWorkloads() override;
  Result<std::vector<int64_t>> CommitRecords(const std::vector<TuningRecord>& records) override;
  Result<std::vector<TuningRecord>> GetTopK(std::string_view workload_hash, const Target& target, int k) override;
  Result<std::vector<TuningRecord>> GetTopKByTargetString(std::string_view workload_hash,
                                                          std::string_view target_string, int k) override;
  // The answer's layer is always kUser. `usable` runs without the database's lock held.
  Result<BestRecord> GetBest(std::string_view workload_hash, const Target& target,
                             const RecordUsable& usable = {}) override;
  Status ForEachRecord(const RecordFilter& filter,
                       const std::function<Status(const TuningRecord&)>& visit) override;
  Status ExportJsonl(std::ostream& out, const RecordFilter& filter = {}) override;

  // --- this file only ----------------------------------------------------
  Result<std::vector<Target>> ListTargets();
  // Appends one record (its workload must be committed); returns its row id.
  Result<int64_t> CommitRecord(const TuningRecord& record);
  // The fastest successful (and usable) record at exactly `level` (kNone:
  // always empty), ranked as GetTopK: one rung of GetBest's chain. Only
  // records measured on real hardware, or with `emulated` only emulated
  // ones (GetBest asks for those after every rung found nothing real).
  Result<std::optional<TuningRecord>> GetBestAtLevel(std::string_view workload_hash,
                                                     const Target& target,
                                                     FallbackLevel level,
                                                     const RecordUsable& usable = {},
                                                     bool emulated = false);

  // --- logs as a whole ---------------------------------------------------
  // Copies every workload and record of the database at `other_path` (opened
  // read-only, validated like Open) into this one; records already present
  // (same uid) are skipped. One transaction.
  Result<IngestStats> Merge(const std::string& other_path);
  // Reads what ExportJsonl writes; all or nothing. `source_name` names the
  // input in errors ("file.jsonl:12: ...").
  Result<IngestStats> ImportJsonl(std::istream& in, std::string_view source_name);
  // Keeps every successful record of the k fastest traces (ranked as
  // GetTopK) per (workload, target) and deletes the rest, failed records
  // included. Returns how many were deleted.
  Result<int64_t> Prune(int k);
  Result<DatabaseStats> Stats();
  // Checkpoints the WAL and switches to a rollback journal so the file can be
  // shipped and opened read-only from a read-only directory (system database).
  // Reopening it read-write switches it back to WAL.
  Status PrepareForDistribution();

  // --- jobs --------------------------------------------------------------
  Status CreateJob(const JobState& job);  // kAlreadyExists if the id is taken
  Status UpdateJob(const JobState& job);  // kNotFound if the id is unknown
  Result<std::optional<JobState>> GetJob(std::string_view id);
  Result<std::vector<JobState>> ListJobs(std::optional<JobStatus> status = std::nullopt);

 private:
  Database(std::string path, OpenOptions options, int schema_version, std::unique_ptr<SqliteConnection> conn);

  // Helpers below require mu_ held.
  Result<int64_t> WorkloadIdLocked(std::string_view hash);           // 0: absent
  Result<int64_t> TargetIdLocked(const Target& target, bool create);  // 0: absent
  // Targets of the same ISA and real arch (RealArch): an emulated device's
  // ("generic-emulated") and the real one's ("generic") alike.
  Result<std::vector<int64_t>> TargetIdsForArchLocked(const Target& target);
  Result<std::vector<int64_t>> TargetIdsForStringLocked(std::string_view target_string);
  Result<int64_t> InsertRecordLocked(const TuningRecord& record, bool ignore_duplicate_uid);
  Status InsertWorkloadLocked(const Workload& workload, bool* added);
  // The k fastest traces over `target_ids` among the records whose emulated
  // mark is `emulated` (real and emulated records never rank together).
  Result<std::vector<TuningRecord>> TopKForTargetsLocked(std::string_view workload_hash,
                                                         int64_t workload_id,
                                                         const std::vector<int64_t>& target_ids,
                                                         int k, bool emulated);
  // TopKForTargetsLocked over the real records, else (none) the emulated ones.
  Result<std::vector<TuningRecord>> TopKRealFirstLocked(std::string_view workload_hash, int64_t workload_id,
                                                        const std::vector<int64_t>& target_ids, int k);
  // (mean of mean_sec, count) over the successful records of `trace` found
  // by its trace_hash; count 0 when none is (a record without its hash), -1
  // when one of its records is a wrong result.
  // Only records whose emulated mark is `emulated` count.
  Result<std::pair<double, int>> TraceMeanLocked(int64_t workload_id, int64_t target_id, const std::string& trace,
                                                 bool emulated);
  Result<TuningRecord> LoadTargetLocked(int64_t target_id, TuningRecord record);
  Status ReadOnlyError() const;

  const std::string path_;
  const OpenOptions options_;
  // kSchemaVersion, except for an older file opened read-only (never migrated).
  const int schema_version_;
  std::mutex mu_;
  std::unique_ptr<SqliteConnection> conn_;  // GUARDED_BY(mu_)
  // Workloads and targets are never deleted or changed, so positive lookups
  // can be cached for the lifetime of this object.
  std::unordered_map<std::string, int64_t> workload_ids_;  // GUARDED_BY(mu_)
  std::unordered_map<std::string, int64_t> target_ids_;    // GUARDED_BY(mu_); key: TargetCacheKey
  std::unordered_map<int64_t, Target> targets_by_id_;      // GUARDED_BY(mu_)
};

}  // namespace tunefarm::database
