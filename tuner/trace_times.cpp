// Per-trace times in the tuning loop (trace_times.h).
#include "trace_times.h"

namespace tunefarm::tuner {

namespace {

void SetBest(TaskStatus& status, const std::string& text, const TraceTimes& t) {
  status.best_seconds = t.Mean();
  status.best_record_id = t.fastest_id;
  status.best_trace = text;
}

}  // namespace

TraceTimes& TraceEntry(TraceTimesMap& times, const std::string& text, const Trace& trace, bool canonical) {
  auto [it, added] = times.try_emplace(text);
  if (added) {
    it->second.trace = trace;
    it->second.canonical = canonical;
  }
  return it->second;
}

// Ties go to the older fastest record, as in the database.
void RescanBest(const std::map<std::string, TraceTimes>& times, TaskStatus& status) {
  const std::pair<const std::string, TraceTimes>* best = nullptr;
  for (const auto& entry : times) {
    const TraceTimes& t = entry.second;
    if (t.wrong || t.count == 0) continue;
    if (!best || t.Mean() < best->second.Mean() ||
        (t.Mean() == best->second.Mean() && t.fastest_id < best->second.fastest_id)) {
      best = &entry;
    }
  }
  if (best) {
    SetBest(status, best->first, best->second);
  } else {
    status.best_seconds = 0;
    status.best_record_id = 0;
    status.best_trace.clear();
  }
}

const TraceTimes& NoteTime(std::map<std::string, TraceTimes>& times, TaskStatus& status, const std::string& text,
                           const Trace& trace, double secs, int64_t record_id) {
  TraceTimes& t = times[text];
  if (t.count == 0) t.trace = trace;
  t.sum += secs;
  ++t.count;
  if (secs < t.fastest) {
    t.fastest = secs;
    t.fastest_id = record_id;
  }
  if (t.wrong) return t;
  if (status.best_seconds > 0 && status.best_trace == text && t.Mean() > status.best_seconds) {
    RescanBest(times, status);  // the best measured again came out slower: another trace may lead now
  } else if (status.best_seconds == 0 || status.best_trace == text || t.Mean() < status.best_seconds) {
    SetBest(status, text, t);
  }
  return t;
}

void NoteWrongResult(std::map<std::string, TraceTimes>& times, TaskStatus& status, const std::string& text) {
  times[text].wrong = true;
  if (status.best_trace == text) RescanBest(times, status);
}

}  // namespace tunefarm::tuner
