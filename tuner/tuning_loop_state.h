// What the tuning loop keeps per task between rounds (TuningLoop::TaskState).
// Internal to the tuner: shared by tuning_loop.cpp and final_round.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"
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
};

}  // namespace tunefarm::tuner
