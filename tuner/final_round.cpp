// The final round of a tuning job (TuneOptions::final_candidates): once the
// search has spent its share of the budget, each task's fastest traces are
// measured again until each has final_measurements records.
//
// Why: a run ranks hundreds of kernels by one or two noisy measurements each.
// Among kernels within a few percent of each other the one that leads is
// mostly the one the machine's noise favoured, and the log's figure for it is
// the top of that noise. A few more measurements of the leaders, in fresh
// builds, make both the kernel handed out and its figure the ones it earns.
#include <algorithm>
#include <utility>
#include <vector>

#include "tunefarm/tuner/tuning_loop.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

namespace {

// A finalist measured slower than it first looked lets the next-fastest trace
// into the top; a few rounds settle it (each trace is measured once per run,
// so this also bounds the work).
constexpr int kFinalRounds = 3;

bool FinalRoundOn(const TuneOptions& o) { return o.final_candidates > 0 && o.final_measurements > 1; }

using TimesEntry = std::pair<const std::string, TraceTimes>;

// The task's `n` fastest traces as the log ranks them (the lowest mean, ties
// to the older fastest record): never one with a wrong result, nor the
// untuned default, whose one run can take seconds.
std::vector<const TimesEntry*> Fastest(const TraceTimesMap& times, int n) {
  std::vector<const TimesEntry*> ranked;
  for (const TimesEntry& entry : times) {
    const TraceTimes& t = entry.second;
    if (!t.wrong && t.count > 0 && t.trace.size() > 0) ranked.push_back(&entry);
  }
  auto faster = [](const TimesEntry* a, const TimesEntry* b) {
    if (a->second.Mean() != b->second.Mean()) return a->second.Mean() < b->second.Mean();
    return a->second.fastest_id < b->second.fastest_id;
  };
  const size_t keep = std::min(ranked.size(), size_t(std::max(0, n)));
  std::partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end(), faster);
  ranked.resize(keep);
  return ranked;
}

int RecordsOf(const std::map<std::string, int>& records, const std::string& text) {
  auto it = records.find(text);
  return it == records.end() ? 0 : it->second;
}

}  // namespace

int TuningLoop::FinalTrialsOwed(const TaskState& state) const {
  if (!FinalRoundOn(options_)) return 0;
  int owed = 0;
  for (const TimesEntry* entry : Fastest(state.times, options_.final_candidates)) {
    if (state.final_tried.count(entry->first)) continue;
    owed += std::max(0, options_.final_measurements - RecordsOf(state.records, entry->first));
  }
  return owed;
}

int TuningLoop::FinalReserve() const {
  int owed = 0;
  for (const auto& state : states_) owed += FinalTrialsOwed(*state);
  // The search keeps most of a small budget: the final round only sharpens
  // the choice among what it found.
  return std::min(owed, options_.trials / 8);
}

Status TuningLoop::RunFinalRound(const std::atomic<bool>& stop, const std::function<void(size_t task)>& report) {
  if (!FinalRoundOn(options_)) return Status::OK();
  for (int round = 0; round < kFinalRounds && !stop; ++round) {
    bool measured = false;
    for (size_t i = 0; i < states_.size() && !stop; ++i) {
      int done = 0;
      for (const TaskStatus& s : status_) done += s.trials;
      const int left = options_.trials - done;
      if (left <= 0) return Status::OK();  // a log at its budget: the final round is part of it
      TaskState& state = *states_[i];
      std::vector<std::pair<Candidate, int>> finalists;  // (program, measurements owed)
      for (const TimesEntry* entry : Fastest(state.times, options_.final_candidates)) {
        const int owed = options_.final_measurements - RecordsOf(state.records, entry->first);
        if (owed <= 0 || !state.final_tried.insert(entry->first).second) continue;
        // A record whose text is not the replayed trace's canonical form
        // (imported, written by hand) is left alone: its new records would be
        // another trace to the log.
        auto replayed = state.search->Replay(entry->second.trace);
        if (!replayed.ok() || replayed->trace.ToText() != entry->first) continue;
        finalists.push_back({std::move(replayed).value(), owed});
      }
      // Interleaved (A B C A B C): a slow stretch of the machine falls on
      // several kernels, not on one kernel's every measurement. Under a short
      // budget each finalist gets its first extra measurement first.
      std::vector<Candidate> batch;
      size_t measured_finalists = 0;
      for (int rep = 0; int(batch.size()) < left; ++rep) {
        size_t before = batch.size();
        for (const auto& [candidate, owed] : finalists) {
          if (rep < owed && int(batch.size()) < left) batch.push_back(candidate);
        }
        if (rep == 0) measured_finalists = batch.size();
        if (batch.size() == before) break;
      }
      if (batch.empty()) continue;
      const size_t n = batch.size();
      status_[i].finalists += int(measured_finalists);
      status_[i].final_trials += int(n);
      // Every one measures a trace again: recorded, not taught to the model.
      TF_RETURN_IF_ERROR(MeasureAndRecord(state, status_[i], std::move(batch), options_.measure, n));
      measured = true;
      if (report) report(i);
    }
    if (!measured) break;
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
