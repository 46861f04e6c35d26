// LayeredDatabase: a user tuning log over a read-only system tuning log, as
// one TuningLog (tuning_log.h).
//
// An installation may ship a system database of pre-tuned schedules (opened
// read-only, never written). The user's own database takes precedence: every
// query asks the user database first. For GetBest, precedence is per fallback
// level: a same-device record from either layer beats a same-arch one, and at
// equal levels the user layer wins even if the system record is faster (the
// user's own measurement on their machine is the one to trust). The top-k
// lists are the union of both layers, one entry per trace (the user layer's).
// Writes go to the user database only, and so does ExportJsonl: an export is
// what this installation measured, the system log ships with it.
//
// Lifetime: owns both Database objects; thread-safe as they are.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/tuning_log.h"

namespace tunefarm::database {

// Where an installation keeps its system database: $TUNEFARM_SYSTEM_DB if set,
// else <install prefix>/share/tunefarm/system.db.
std::string DefaultSystemDatabasePath();

class LayeredDatabase final : public TuningLog {
 public:
  // Opens `user_path` with `user_options` (read-write by default) and, when
  // `system_path` is non-empty, `system_path` read-only. A system path that
  // does not exist is an error only if `system_required`.
  static Result<std::unique_ptr<LayeredDatabase>> Open(const std::string& user_path,
                                                       const std::string& system_path,
                                                       const OpenOptions& user_options = {},
                                                       bool system_required = false);

  Database& user() { return *user_; }
  Database* system() { return system_.get(); }  // null when there is no system layer

  // --- TuningLog ---------------------------------------------------------
  // The user layer's.
  Status CommitWorkload(const Workload& workload) override;
  // Either layer's, the user's first.
  Result<std::optional<Workload>> GetWorkload(std::string_view hash) override;
  // The user layer's, then the system layer's the user layer lacks.
  Result<std::vector<Workload>> ListWorkloads() override;
  // Into the user layer.
  Result<std::vector<int64_t>> CommitRecords(const std::vector<TuningRecord>& records) override;
  // Union of both layers' top k, fastest first, one entry per trace.
  Result<std::vector<TuningRecord>> GetTopK(std::string_view workload_hash, const Target& target, int k) override;
  Result<std::vector<TuningRecord>> GetTopKByTargetString(std::string_view workload_hash,
                                                          std::string_view target_string, int k) override;
  // Database::GetBestAtLevel over the user layer, then the system layer, per level.
  Result<BestRecord> GetBest(std::string_view workload_hash, const Target& target,
                             const RecordUsable& usable = {}) override;
  // The user layer's records in row-id order, then the system layer's whose
  // uid the user layer does not hold.
  Status ForEachRecord(const RecordFilter& filter,
                       const std::function<Status(const TuningRecord&)>& visit) override;
  // The user layer's export.
  Status ExportJsonl(std::ostream& out, const RecordFilter& filter = {}) override;

 private:
  LayeredDatabase(std::unique_ptr<Database> user, std::unique_ptr<Database> system)
      : user_(std::move(user)), system_(std::move(system)) {}

  std::unique_ptr<Database> user_;
  std::unique_ptr<Database> system_;
};

}  // namespace tunefarm::database
