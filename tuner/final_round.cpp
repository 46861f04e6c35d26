// The closing round of a tuning job: once the search has spent its share of
// the budget, each task's fastest traces are measured again -- until each has
// final_measurements records (the final round, TuneOptions::final_candidates),
// or, with the final round off, the fastest still measured once gets its
// second measurement (confirm_best: a new best of the search's last batch
// would otherwise end the job measured once).
//
// Why: a run ranks hundreds of kernels by one or two noisy measurements each.
// Among kernels within a few percent of each other the one that leads is
// mostly the one the machine's noise favoured, and the log's figure for it is
// the top of that noise. A few more measurements of the leaders, in fresh
// builds, make both the kernel handed out and its figure the ones it earns.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/tuner/tuning_loop.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

namespace {

bool FinalRoundOn(const TuneOptions& o) { return o.final_candidates > 0 && o.final_measurements > 1; }

// What the closing round measures again, per task and round: the final
// round's finalists, or, with it off and confirm_best on, the fastest trace
// still measured once -- the last batch's new best first, so that no run ends
// on a best measured once.
struct ClosingPlan {
  int candidates = 0;    // traces per task and round
  int measurements = 0;  // records each ends with
};

std::optional<ClosingPlan> PlanOf(const TuneOptions& o) {
  if (FinalRoundOn(o)) return ClosingPlan{o.final_candidates, o.final_measurements};
  if (o.confirm_best) return ClosingPlan{1, 2};
  return std::nullopt;
}

using TimesEntry = std::pair<const std::string, TraceTimes>;

// The task's `n` fastest traces, as the log ranks them (the lowest mean, ties
// to the older fastest record), that still owe the final round measurements:
// never one with a wrong result, nor the untuned default, whose one run can
// take seconds, nor one this run's final round measured already.
std::vector<TimesEntry*> FastestOwing(TraceTimesMap& times, const ClosingPlan& o) {
  std::vector<TimesEntry*> ranked;
  for (TimesEntry& entry : times) {
    const TraceTimes& t = entry.second;
    if (t.wrong || t.count == 0 || t.trace.size() == 0 || t.final_tried) continue;
    if (t.records >= o.measurements) continue;
    ranked.push_back(&entry);
  }
  auto faster = [](const TimesEntry* a, const TimesEntry* b) {
    if (a->second.Mean() != b->second.Mean()) return a->second.Mean() < b->second.Mean();
    return a->second.fastest_id < b->second.fastest_id;
  };
  const size_t keep = std::min(ranked.size(), size_t(std::max(0, o.candidates)));
  std::partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end(), faster);
  ranked.resize(keep);
  return ranked;
}

}  // namespace

int TuningLoop::FinalReserve() const {
  if (!FinalRoundOn(options_)) {
    // Two trials per task: the new best of the search's last batch, and the
    // trace measured once that leads should that one fall back (they often
    // do: a first time is the luckiest). At most a quarter of the budget, at
    // least one trial when there are two.
    if (!options_.confirm_best || options_.trials < 2) return 0;
    return std::min(2 * int(states_.size()), std::max(1, options_.trials / 4));
  }
  // Twice what the leaders owe: a leader measured again often falls back
  // behind a trace measured once, which then needs its own measurements.
  const int per_task = 2 * options_.final_candidates * (options_.final_measurements - 1);
  // The search keeps most of a small budget: the final round only sharpens
  // the choice among what it found.
  return std::min(per_task * int(states_.size()), options_.trials / 8);
}

Status TuningLoop::RunFinalRound(const std::atomic<bool>& stop, const Report& report) {
  const std::optional<ClosingPlan> plan = PlanOf(options_);
  if (!plan) return Status::OK();
  const bool final_round = FinalRoundOn(options_);
  // Rounds until the budget is spent: each measures every task's fastest
  // traces that still owe measurements, so that a trace overtaking the
  // leaders on one lucky measurement is measured next.
  for (bool measured = true; measured && !stop;) {
    measured = false;
    for (size_t i = 0; i < states_.size() && !stop; ++i) {
      const int left = options_.trials - TrialsDone();
      if (left <= 0) return Status::OK();  // a log at its budget: the final round is part of it
      TaskState& state = *states_[i];
      std::vector<std::pair<Candidate, int>> finalists;  // (program, measurements owed)
      for (TimesEntry* entry : FastestOwing(state.times, *plan)) {
        TraceTimes& t = entry->second;
        t.final_tried = true;
        // A record whose text is not its trace's own (imported, written by
        // hand) is left alone: its new records would be another trace to the log.
        auto replayed = state.search->Replay(t.trace);
        if (!replayed.ok() || !t.canonical || replayed->trace != t.trace) continue;
        finalists.push_back({std::move(replayed).value(), plan->measurements - t.records});
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
      if (final_round) {
        status_[i].finalists += int(measured_finalists);
        status_[i].final_trials += int(n);
      }
      // Every one measures a trace again: recorded, not taught to the model.
      TF_RETURN_IF_ERROR(MeasureAndRecord(state, status_[i], std::move(batch), options_.measure, n));
      measured = true;
      if (report) report(i, final_round);
    }
  }
  return Status::OK();
}

Status TuningLoop::ConfirmLastBests(const std::atomic<bool>& stop, const Report& report) {
  // The closing round's reserve covers two confirmations per task; a best that
  // falls back when measured again can hand the lead to another trace
  // measured once, and no job ends on such a best: it is measured again past
  // the budget. Each trace at most once, so this ends.
  for (size_t i = 0; i < states_.size(); ++i) {
    TaskState& state = *states_[i];
    while (state.unconfirmed_best && !stop) {
      std::vector<Candidate> batch{*state.TakeUnconfirmedBest()};
      TF_RETURN_IF_ERROR(MeasureAndRecord(state, status_[i], std::move(batch), options_.measure, 1));
      if (report) report(i, false);
    }
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
