// LayeredDatabase (layered_database.h): every query asks the user layer
// first; the system layer only adds what the user layer lacks.
#include "tunefarm/database/layered_database.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <unordered_set>

namespace tunefarm::database {

namespace {

// Both layers' top k as one list: one entry per trace, the user layer's
// (which holds this installation's own measurements of it).
std::vector<TuningRecord> MergeTopK(std::vector<TuningRecord> top, std::vector<TuningRecord> more, int k) {
  // Each layer answers with real records, or emulated ones where it has no
  // real one: a layer's emulated answer never ranks against the other's real one.
  auto any_real = [](const std::vector<TuningRecord>& records) {
    return std::any_of(records.begin(), records.end(), [](const TuningRecord& r) { return !r.emulated; });
  };
  if (any_real(top) || any_real(more)) {
    for (std::vector<TuningRecord>* list : {&top, &more}) {
      std::erase_if(*list, [](const TuningRecord& r) { return r.emulated; });
    }
  }
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
  return top;
}

}  // namespace

std::string DefaultSystemDatabasePath() {
  if (const char* env = std::getenv("TUNEFARM_SYSTEM_DB"); env != nullptr && *env != '\0') return env;
#ifdef TUNEFARM_SYSTEM_DB_PATH
  return TUNEFARM_SYSTEM_DB_PATH;
#else
  return "/usr/local/share/tunefarm/system.db";
#endif
}

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

Status LayeredDatabase::CommitWorkload(const Workload& workload) { return user_->CommitWorkload(workload); }

Result<std::optional<Workload>> LayeredDatabase::GetWorkload(std::string_view hash) {
  TF_ASSIGN_OR_RETURN(std::optional<Workload> workload, user_->GetWorkload(hash));
  if (workload || system_ == nullptr) return workload;
  return system_->GetWorkload(hash);
}

Result<std::vector<Workload>> LayeredDatabase::ListWorkloads() {
  TF_ASSIGN_OR_RETURN(std::vector<Workload> workloads, user_->ListWorkloads());
  if (system_ == nullptr) return workloads;
  TF_ASSIGN_OR_RETURN(std::vector<Workload> more, system_->ListWorkloads());
  std::unordered_set<std::string> seen;
  for (const Workload& w : workloads) seen.insert(w.hash);
  for (Workload& w : more) {
    if (seen.insert(w.hash).second) workloads.push_back(std::move(w));
  }
  return workloads;
}

Result<std::vector<int64_t>> LayeredDatabase::CommitRecords(const std::vector<TuningRecord>& records) {
  return user_->CommitRecords(records);
}

Result<std::vector<TuningRecord>> LayeredDatabase::GetTopK(std::string_view workload_hash, const Target& target,
                                                           int k) {
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> top, user_->GetTopK(workload_hash, target, k));
  if (system_ == nullptr) return top;
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> more, system_->GetTopK(workload_hash, target, k));
  return MergeTopK(std::move(top), std::move(more), k);
}

Result<std::vector<TuningRecord>> LayeredDatabase::GetTopKByTargetString(std::string_view workload_hash,
                                                                         std::string_view target_string, int k) {
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> top, user_->GetTopKByTargetString(workload_hash, target_string, k));
  if (system_ == nullptr) return top;
  TF_ASSIGN_OR_RETURN(std::vector<TuningRecord> more,
                      system_->GetTopKByTargetString(workload_hash, target_string, k));
  return MergeTopK(std::move(top), std::move(more), k);
}

Result<BestRecord> LayeredDatabase::GetBest(std::string_view workload_hash, const Target& target,
                                            const RecordUsable& usable) {
  // Real records in either layer before emulated ones in any (tuning_log.h).
  for (bool emulated : {false, true}) {
    for (FallbackLevel level : {FallbackLevel::kSameDevice, FallbackLevel::kSameArch}) {
      for (Layer layer : {Layer::kUser, Layer::kSystem}) {
        Database* db = layer == Layer::kUser ? user_.get() : system_.get();
        if (db == nullptr) continue;
        TF_ASSIGN_OR_RETURN(std::optional<TuningRecord> record,
                            db->GetBestAtLevel(workload_hash, target, level, usable, emulated));
        if (record) return BestRecord{level, std::move(record), layer};
      }
    }
  }
  return BestRecord{};
}

Status LayeredDatabase::ForEachRecord(const RecordFilter& filter,
                                      const std::function<Status(const TuningRecord&)>& visit) {
  if (system_ == nullptr) return user_->ForEachRecord(filter, visit);
  // A record is one measurement wherever it is kept: a uid in both layers
  // (a system log merged into the user's, say) is visited once.
  std::unordered_set<std::string> seen;
  TF_RETURN_IF_ERROR(user_->ForEachRecord(filter, [&](const TuningRecord& record) {
    seen.insert(record.uid);
    return visit(record);
  }));
  return system_->ForEachRecord(filter, [&](const TuningRecord& record) {
    return seen.count(record.uid) > 0 ? Status::OK() : visit(record);
  });
}

Status LayeredDatabase::ExportJsonl(std::ostream& out, const RecordFilter& filter) {
  return user_->ExportJsonl(out, filter);
}

}  // namespace tunefarm::database
