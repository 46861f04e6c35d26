// Reading a tuning log back for the tuning benchmarks: a workload's records in
// commit order (the order the search measured them), the best kernel within a
// trial budget, and replaying a record's trace onto the default schedule.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/database/database.h"

namespace tunefarm::bench {

// One measurement of the log, numbered from 1 in commit order.
struct LoggedTrial {
  int64_t id = 0;     // row id in the log
  int index = 0;      // 1-based trial number of this workload
  bool ok = false;    // measured and correct
  double seconds = 0; // the record's time, database::RecordTime (ok only)
  int measurements = 1;  // on a TraceRanking best: the trials `seconds` is the mean of
  std::string trace;  // a trace without instructions: the default schedule
};

// The target string `tunefarm tune` records under by default (--target llvm).
std::string DefaultRecordTargetString();
// The target string `tunefarm tune --target TEXT` records under (`tunefarm tune
// --threads 1` is --target 'llvm -num-threads=1'); an error for bad TEXT.
Result<std::string> RecordTargetString(const std::string& text);

// Every record of `workload_hash` for `target_string`, in commit order. A log
// tuned and later resumed holds the first run's trials first, so the first N
// entries are exactly what an N-trial run measured.
Result<std::vector<LoggedTrial>> LoadTrials(database::Database& db, const std::string& workload_hash,
                                            const std::string& target_string);

// The workloads some logs hold, by name, parsed from the text each log keeps
// of them: each hash once (the first log's text), sorted by name. A text
// this build no longer parses is counted in `unparsed`, not returned.
struct LoggedWorkloads {
  std::vector<std::pair<std::string, Workload>> workloads;
  int unparsed = 0;
};
Result<LoggedWorkloads> WorkloadsOfLogs(const std::vector<std::string>& paths);

// The best trace of a log as tunefarm ranks it (Database::GetTopK, the tuning
// loop): by the mean of all its measurements, since the tuner measures each
// new best again. Add trials in commit order; best() is then what the log
// hands out after them: the trace's fastest trial, with `seconds` its mean.
class TraceRanking {
 public:
  void Add(const LoggedTrial& trial);  // failed trials are ignored
  const std::optional<LoggedTrial>& best() const { return best_; }

 private:
  struct Times {
    double sum = 0;
    int count = 0;
    LoggedTrial fastest;
    double Mean() const { return sum / count; }
  };
  std::map<std::string, Times> times_;  // by trace text
  std::optional<LoggedTrial> best_;
};

// The best trace (TraceRanking) among the first `budget` trials (0: all of them).
std::optional<LoggedTrial> BestWithin(const std::vector<LoggedTrial>& trials, int budget);

// The default PrimFunc of `w` with `trace_text` applied (kCorruption if it does
// not replay, e.g. a record from another tunefarm version).
Result<ir::PrimFunc> ReplayTrace(const Workload& w, const std::string& trace_text);

// "a,b,,c" -> {"a", "b", "c"}: the --only lists of the benchmarks.
std::vector<std::string> SplitList(const std::string& s);

// True when `trace_text` parses to a trace without instructions: the record of
// the default schedule (the baseline every tuning run measures first).
bool IsDefaultSchedule(const std::string& trace_text);

// First trial number from which the best-so-far (TraceRanking) stays within `fraction` of `reference_seconds`
// (throughput >= fraction x reference throughput); nullopt if never reached.
std::optional<int> TrialsToReach(const std::vector<LoggedTrial>& trials, double reference_seconds,
                                 double fraction);

}  // namespace tunefarm::bench
