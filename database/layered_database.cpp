#include "tunefarm/database/layered_database.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

namespace tunefarm::database {

std::string DefaultSystemDatabasePath() {
  if (const char* env = std::getenv("TUNEFARM_SYSTEM_DB"); env != nullptr && *env != '\0') return env;
#ifdef TUNEFARM_SYSTEM_DB_PATH
  return TUNEFARM_SYSTEM_DB_PATH;
#else
  return "/usr/local/share/tunefarm/system.db";
#endif
}

std::string_view LayerName(Layer layer) { return layer == Layer::kUser ? "user" : "system"; }

Result<std::unique_ptr<LayeredDatabase>> LayeredDatabase::Open(const std::string& user_path,
                                                               const std::string& system_path,
                                                               const OpenOptions& user_options,
                                                               bool system_required) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Database> user, Database::Open(user_path, user_options));
  std::unique_ptr<Database> system;
  if (!system_path.empty()) {
    struct stat st{};
    bool exists = ::stat(system_path.c_str(), &st) == 0;
    if (exists || system_required) {
      OpenOptions system_options;
      system_options.read_only = true;
      TF_ASSIGN_OR_RETURN(system, Database::Open(system_path, system_options));
    }
  }
  return std::unique_ptr<LayeredDatabase>(new LayeredDatabase(std::move(user), std::move(system)));
}

Result<LayeredBest> LayeredDatabase::GetBest(std::string_view workload_hash, const Target& target,
                                             const RecordUsable& usable) {
  for (FallbackLevel level : {FallbackLevel::kSameDevice, FallbackLevel::kSameArch}) {
    for (Layer layer : {Layer::kUser, Layer::kSystem}) {
      Database* db = layer == Layer::kUser ? user_.get() : system_.get();
      if (db == nullptr) continue;
      TF_ASSIGN_OR_RETURN(std::optional<TuningRecord> record, db->GetBestAtLevel(workload_hash, target, level, usable));
      if (record) return LayeredBest{BestRecord{level, std::move(record)}, layer};
    }
  }
  return LayeredBest{};
}

Result<std::vector<TuningRecord>> LayeredDatabase::GetTopK(std::string_view workload_hash, const Target& target,
                                                           int k) {
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> top, user_->GetTopK(workload_hash, target, k));
  if (system_ != nullptr) {
    TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> more, system_->GetTopK(workload_hash, target, k));
    // One entry per trace (the log ranks traces): the user layer's, which
    // holds this installation's own measurements of it.
    std::unordered_set<std::string> seen;
    for (const TuningRecord& record : top) seen.insert(record.trace);
    for (TuningRecord& record : more) {
      if (seen.insert(record.trace).second) top.push_back(std::move(record));
    }
    // Stable: at equal mean time the user's record stays first.
    std::stable_sort(top.begin(), top.end(), [](const TuningRecord& a, const TuningRecord& b) {
      return *a.RankSec() < *b.RankSec();
    });
    if (top.size() > static_cast<size_t>(k)) top.resize(k);
  }
  return top;
}

Result<std::optional<Workload>> LayeredDatabase::GetWorkload(std::string_view hash) {
  TF_ASSIGN_OR_RETURN(std::optional<Workload> workload, user_->GetWorkload(hash));
  if (workload || system_ == nullptr) return workload;
  return system_->GetWorkload(hash);
}

}  // namespace tunefarm::database
