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

// What the loop knows of one trace with this run's fingerprint: every
// measurement (a trace ranks by their mean, as in the database,
// Database::GetTopK), its records, and whether it was measured again.
struct TraceTimes {
  // Parsed once where its text entered (a record of the log), or the trace
  // that was measured. Empty until the entry is made (TraceEntry).
  Trace trace;
  double sum = 0;
  int count = 0;
  double fastest = std::numeric_limits<double>::infinity();
  int64_t fastest_id = 0;  // the record GetBest answers with for this trace
  bool wrong = false;      // a measurement disagreed with the reference: never the best
  // Records of the trace, failed ones too: what the final round counts
  // against final_measurements.
  int records = 0;
  // The text it is keyed by is `trace`'s own (Trace::ToText): every trace this
  // run measured, and records written so. Only such a trace is measured
  // again: a record of another text (imported, written by hand) would get a
  // record of another trace to the log.
  bool canonical = false;
  bool confirm_tried = false;  // measured again as a confirmation: never twice
  bool final_tried = false;    // measured again by this run's final round: never twice in a run
  double Mean() const { return sum / count; }
};

// Trace text -> its times. Entries are never erased: pointers to them stay valid.
using TraceTimesMap = std::map<std::string, TraceTimes>;

// The entry of `text`, made with its parsed `trace` and whether the text is
// that trace's own on first sight.
TraceTimes& TraceEntry(TraceTimesMap& times, const std::string& text, const Trace& trace, bool canonical);

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
