// LayeredDatabase: a user tuning log over a read-only system tuning log.
//
// An installation may ship a system database of pre-tuned schedules (opened
// read-only, never written). The user's own database takes precedence: every
// query asks the user database first. For GetBest, precedence is per fallback
// level: a same-device record from either layer beats a same-arch one, and at
// equal levels the user layer wins even if the system record is faster (the
// user's own measurement on their machine is the one to trust). Writes go to
// the user database only.
//
// Lifetime: owns both Database objects; thread-safe as they are.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {

// Where an installation keeps its system database: $TUNEFARM_SYSTEM_DB if set,
// else <install prefix>/share/tunefarm/system.db.
std::string DefaultSystemDatabasePath();

enum class Layer { kUser, kSystem };
std::string_view LayerName(Layer layer);  // "user", "system"

struct LayeredBest {
  BestRecord best;
  Layer layer = Layer::kUser;  // meaningful when best.record is set
};

class LayeredDatabase {
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

  // Database::GetBest over the user layer, then the system layer, per level.
  Result<LayeredBest> GetBest(std::string_view workload_hash, const Target& target,
                              const RecordUsable& usable = {});
  // Union of both layers' top k (exact target), fastest first, one copy per uid.
  Result<std::vector<TuningRecord>> GetTopK(std::string_view workload_hash, const Target& target, int k);
  Result<std::optional<Workload>> GetWorkload(std::string_view hash);

 private:
  LayeredDatabase(std::unique_ptr<Database> user, std::unique_ptr<Database> system)
      : user_(std::move(user)), system_(std::move(system)) {}

  std::unique_ptr<Database> user_;
  std::unique_ptr<Database> system_;
};

}  // namespace tunefarm::database
