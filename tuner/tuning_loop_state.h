// What the tuning loop keeps per task between rounds (TuningLoop::TaskState).
// Internal to the tuner: shared by tuning_loop.cpp, tuning_resume.cpp,
// tuning_measure.cpp and final_round.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/database/record.h"
#include "tunefarm/tuner/search_strategy.h"
#include "tunefarm/tuner/task_scheduler.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "trace_times.h"

namespace tunefarm::tuner {

// A resumed record timed with code of another toolchain or on other hardware.
struct StaleSuccess {
  double seconds = 0;
  Trace trace;
  uint64_t hash = 0;  // the candidate's structural hash
};

// A best measured once and its entry in TaskState::times (whose entries are
// never erased).
struct PendingConfirmation {
  Candidate candidate;
  TraceTimes* times = nullptr;
};

struct TuningLoop::TaskState {
  TuneTask task;
  int index = 0;  // in the job's tasks (and status_)
  ir::PrimFunc default_func;
  std::unique_ptr<SearchStrategy> search;  // MakeSearchStrategy
  std::set<uint64_t> measured;          // every program of the log's records: never proposed again
  std::set<uint64_t> measured_current;  // those with a record of this run's fingerprint
  // (seconds, trace), kept sorted: one entry per trace of this run's
  // fingerprint (its mean), plus the stale records that seed the search.
  std::vector<std::pair<double, Trace>> successes;
  // By trace text (the log's key for a trace): this run's fingerprint only,
  // failed records too.
  TraceTimesMap times;
  // The best, measured once, that the next batch measures again.
  std::optional<PendingConfirmation> unconfirmed_best;
  std::vector<StaleSuccess> stale;      // until RefreshStaleRecords: then seeds in successes
  TaskHistory history;

  // `successes` fastest first.
  void SortSuccesses() {
    std::sort(successes.begin(), successes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // The best to measure again, marked as tried (a trace is measured again as
  // a confirmation once at most); nullopt when there is none.
  std::optional<Candidate> TakeUnconfirmedBest() {
    if (!unconfirmed_best) return std::nullopt;
    unconfirmed_best->times->confirm_tried = true;
    Candidate c = std::move(unconfirmed_best->candidate);
    unconfirmed_best.reset();
    return c;
  }
};

// A measurement's time as the log keeps it (database::RecordTime).
inline double RecordSeconds(const std::vector<double>& run_secs) {
  return database::RecordTime(run_secs).value_or(std::numeric_limits<double>::infinity());
}

}  // namespace tunefarm::tuner
