// TuningLog: what the readers and writers of a tuning log need, whatever
// holds the log -- the plug point between the log and those who use it (as
// MetaSchedule's Database is TVM's).
//
// Two implementations:
//   Database         one SQLite file (database.h)
//   LayeredDatabase  a user log over a read-only system log (layered_database.h)
// Code that asks for best or top records, lists workloads, walks records,
// exports or appends takes a TuningLog and works with either. What only a file
// can do -- open and validate it, merge another file in, import, prune,
// statistics, distribution, the daemon's job table -- stays on Database.
//
// Ranking (the same in every implementation): a trace ranks by the mean time
// of all its successful records on one target (TuningRecord::trace_mean_sec),
// not by its luckiest one; ties go to the older record. Failed records never
// rank, nor does a trace with a wrong result on record; synthetic records (a
// test device's invented times) never rank at all, so no lookup answers with
// one. Emulated records (measured under qemu, record.h) never rank against
// real ones: every lookup answers with records measured on real hardware
// when any match, and with emulated ones only when none does (GetBest: no
// rung of the chain finds a real one); the records answered then carry
// emulated = true, which callers report.
//
// Thread safety: implementations are thread-safe. Lifetime: a TuningLog is
// owned by whoever opened it; callers handed a TuningLog* borrow it.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/database/record.h"

namespace tunefarm::database {

// Which rung of the fallback chain answered GetBest.
enum class FallbackLevel {
  kSameDevice,  // same target string and identical hardware fingerprint
  kSameArch,    // same ISA and same CPU model / SM architecture
  kNone,        // nothing usable: the caller falls back to the default schedule
};
std::string_view FallbackLevelName(FallbackLevel level);  // "same_device", ...

// Which log of a LayeredDatabase answered; a single Database is the user layer.
enum class Layer { kUser, kSystem };
std::string_view LayerName(Layer layer);  // "user", "system"

struct BestRecord {
  FallbackLevel level = FallbackLevel::kNone;
  std::optional<TuningRecord> record;  // set iff level != kNone
  Layer layer = Layer::kUser;          // meaningful when record is set
};

// Whether a lookup may answer with a record (GetBest); see there.
using RecordUsable = std::function<bool(const TuningRecord&)>;
// Records a GetBest with a RecordUsable looks at per fallback level (and layer).
inline constexpr int kUsableCandidates = 16;

// Which records ForEachRecord and ExportJsonl visit. Empty means all.
struct RecordFilter {
  std::string workload_hash;
  std::string target;  // target string
};

class TuningLog {
 public:
  virtual ~TuningLog() = default;

  // --- workloads ---------------------------------------------------------
  // Idempotent: a hash already present keeps its first text.
  virtual Status CommitWorkload(const Workload& workload) = 0;
  virtual Result<std::optional<Workload>> GetWorkload(std::string_view hash) = 0;
  // One entry per hash.
  virtual Result<std::vector<Workload>> ListWorkloads() = 0;

  // --- records -----------------------------------------------------------
  // Appends all records (their workloads must be committed) in one
  // transaction: all or none. Row ids in order.
  virtual Result<std::vector<int64_t>> CommitRecords(const std::vector<TuningRecord>& records) = 0;

  // The k fastest traces of `workload_hash` on exactly `target` (target
  // string and fingerprint), fastest first, each as its fastest successful
  // record; one entry per trace. Real records only, or emulated ones when
  // no real one is there (never a mix).
  virtual Result<std::vector<TuningRecord>> GetTopK(std::string_view workload_hash, const Target& target, int k) = 0;
  // The same across every fingerprint that ran `target_string`.
  virtual Result<std::vector<TuningRecord>> GetTopKByTargetString(std::string_view workload_hash,
                                                                  std::string_view target_string, int k) = 0;
  // The fastest trace's fastest record, walking the fallback chain: same
  // device, then same ISA and architecture (an emulated device's arch,
  // "generic-emulated", counts as the real one's, "generic"), then none;
  // the whole chain over real records first, then over emulated ones. The answer says which
  // level (and which layer) matched. With `usable`, the fastest record it
  // accepts among each level's kUsableCandidates fastest (a record whose
  // trace no longer fits the workload's loop nest is passed over): the answer
  // is always the last record `usable` accepted. `usable` is called without
  // any lock of the log held. (The default argument is repeated, identical,
  // in every implementation.)
  virtual Result<BestRecord> GetBest(std::string_view workload_hash, const Target& target,
                                     const RecordUsable& usable = {}) = 0;

  // Visits records in row-id order; stops at the first non-OK status returned.
  virtual Status ForEachRecord(const RecordFilter& filter,
                               const std::function<Status(const TuningRecord&)>& visit) = 0;
  // JSON Lines (docs/database.md): a header line, workloads, then records.
  virtual Status ExportJsonl(std::ostream& out, const RecordFilter& filter = {}) = 0;
};

}  // namespace tunefarm::database
