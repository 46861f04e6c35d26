// Per-trace times in the tuning loop, kept as the tuning log ranks them
// (Database::GetTopK): a trace by the mean of its measurements, ties to the
// older fastest record, never one with a wrong result. Internal to the tuner.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::tuner {

// Every measurement of one trace with this run's fingerprint: a trace ranks
// by their mean, as in the database (Database::GetTopK).
struct TraceTimes {
  Trace trace;
  double sum = 0;
  int count = 0;
  double fastest = std::numeric_limits<double>::infinity();
  int64_t fastest_id = 0;  // the record GetBest answers with for this trace
  bool wrong = false;      // a measurement disagreed with the reference: never the best
  double Mean() const { return sum / count; }
};

// Trace text -> its times.
using TraceTimesMap = std::map<std::string, TraceTimes>;

// Sets status.best_* to the trace with the lowest mean (cleared when none).
void RescanBest(const TraceTimesMap& times, TaskStatus& status);

// Adds one successful measurement of `text` and keeps the task's best (the
// trace with the lowest mean) current. Returns the trace's times.
const TraceTimes& NoteTime(TraceTimesMap& times, TaskStatus& status, const std::string& text, const Trace& trace,
                           double secs, int64_t record_id);

// A measurement of `text` disagreed with the reference: as in the database,
// the trace is never the best again, whatever its other times.
void NoteWrongResult(TraceTimesMap& times, TaskStatus& status, const std::string& text);

}  // namespace tunefarm::tuner
