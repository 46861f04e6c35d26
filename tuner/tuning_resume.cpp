// Resuming a task from the tuning log (TuningLoop::Resume) and measuring
// again its fastest records of another fingerprint (RefreshStaleRecords).
// What a record says enters here once: its trace text is parsed and replayed,
// its time noted as the loop ranks traces (trace_times.h), and the program
// taught to the cost model.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "trace_times.h"
#include "tuning_loop_state.h"

namespace tunefarm::tuner {

namespace {

// What differs between a stale record's fingerprint and this run's, for the
// job's summary: "code of toolchain 'llvm-16'" or "other hardware (...)".
std::string StaleOrigin(const database::HardwareFingerprint& record, const database::HardwareFingerprint& run) {
  if (record.toolchain != run.toolchain) return "code of toolchain '" + record.toolchain + "'";
  return "other hardware (" + record.arch + ", " + std::to_string(record.cores) + " cores)";
}


}  // namespace

Status TuningLoop::Resume(TaskState& state, TaskStatus& status) {
  database::Target target = RecordTargetForRun();
  std::vector<costmodel::MeasuredCandidate> training;
  // One training row per program, as the live loop teaches it: its first
  // record of this run's fingerprint, else its first stale one. A program's
  // later records are confirmations.
  std::map<uint64_t, std::pair<size_t, bool>> row_of;  // program hash -> (row, from a current record)
  auto teach = [&](uint64_t hash, bool current, costmodel::MeasuredCandidate row) {
    auto [it, added] = row_of.try_emplace(hash, training.size(), current);
    if (added) {
      training.push_back(std::move(row));
    } else if (current && !it->second.second) {
      training[it->second.first] = std::move(row);
      it->second.second = true;
    }
  };
  int searched_records = 0;  // records of a tuned trace, not the default
  Status st = db_->ForEachRecord({state.task.hash, target.target}, [&](const database::TuningRecord& r) -> Status {
    // Records of other devices (another device key of a fleet, a test device)
    // belong to their own tuning runs: their times say nothing about this one.
    if (!r.device.empty() && r.device != options_.device) return Status::OK();
    // Invented times belong to runs on a test device, measured ones to real runs.
    if (r.synthetic != options_.synthetic) return Status::OK();
    ++status.trials;
    // Timed with code of another toolchain (an older tunefarm or LLVM) or on
    // other hardware: the program is known, its time is not this run's.
    const bool current = r.target.fingerprint == target.fingerprint;
    if (!current) {
      ++status.stale_records;
      if (status.stale_from.empty()) status.stale_from = StaleOrigin(r.target.fingerprint, target.fingerprint);
    }
    // Parsed once here, where the text enters: the loop compares traces.
    auto trace = Trace::Parse(r.trace);
    if (!trace.ok()) return Status::OK();  // a record of another version: counted, not reused
    if (trace->size() > 0) ++searched_records;
    auto c = state.search->Replay(*trace);
    if (!c.ok()) return Status::OK();
    state.measured.insert(c->hash);
    if (current) {
      state.measured_current.insert(c->hash);
      auto known = state.times.find(r.trace);
      TraceTimes& entry = known != state.times.end() ? known->second
                                                     : TraceEntry(state.times, r.trace, *trace, trace->ToText() == r.trace);
      ++entry.records;
    }
    if (!r.ok()) {
      ++status.errors;
      if (current && r.error_kind == database::ErrorKind::kWrongResult) NoteWrongResult(state.times, status, r.trace);
      if (model_) teach(c->hash, current, costmodel::MeasuredCandidate::FromLowered(state.task.hash, c->lowered, 0, true));
      return Status::OK();
    }
    double secs = RecordSeconds(r.run_secs);
    // Stale times still teach the model how programs rank; they neither set
    // the best nor the baseline (RefreshStaleRecords measures the fastest again).
    if (model_) teach(c->hash, current, costmodel::MeasuredCandidate::FromLowered(state.task.hash, c->lowered, secs));
    if (!current) {
      state.stale.push_back({secs, *trace, c->hash});
      return Status::OK();
    }
    if (trace->size() == 0 && (status.default_seconds == 0 || secs < status.default_seconds)) status.default_seconds = secs;
    const double best_before = status.best_seconds;
    NoteTime(state.times, status, r.trace, *trace, secs, r.id);
    // Records come back in commit order: rebuild the curve as it happened.
    if (status.best_seconds != best_before) status.curve.push_back({status.trials, status.flops / status.best_seconds / 1e9});
    return Status::OK();
  });
  TF_RETURN_IF_ERROR(st);
  // A trace with a second record was confirmed, or its confirmation failed:
  // either way it is never measured a third time.
  for (auto& [text, t] : state.times) {
    if (t.records < 2) continue;
    status.confirmations += t.records - 1;
    t.confirm_tried = true;
  }
  for (const auto& [text, t] : state.times) {
    if (t.count > 0) state.successes.push_back({t.Mean(), t.trace});
  }
  state.SortSuccesses();
  // A task the stopped run searched stands where it stopped; one with only
  // its default measured still gets its first batch before the others' next.
  if (searched_records > 0) state.history.AddSearchBatch(status.trials, status.best_seconds);
  // A best the stopped run left unconfirmed rides with this run's first batch.
  NoteUnconfirmedBest(state, status, {});
  if (model_ && !training.empty()) TF_RETURN_IF_ERROR(model_->Update(training));
  return Status::OK();
}

Status TuningLoop::RefreshStaleRecords(TaskState& state, TaskStatus& status) {
  std::sort(state.stale.begin(), state.stale.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  std::vector<Candidate> batch;
  std::set<uint64_t> chosen;
  for (const StaleSuccess& s : state.stale) {
    if (int(batch.size()) >= kRefreshLimit) break;
    // Sorted: nothing after this one beats what this run already timed.
    if (status.best_seconds > 0 && s.seconds >= status.best_seconds) break;
    if (state.measured_current.count(s.hash) || chosen.count(s.hash)) continue;
    auto c = state.search->Replay(s.trace);
    if (!c.ok()) continue;
    chosen.insert(s.hash);
    batch.push_back(std::move(c).value());
  }
  if (!batch.empty()) {
    status.refreshed = int(batch.size());
    TF_RETURN_IF_ERROR(MeasureAndRecord(state, status, std::move(batch), options_.measure));
  }
  // The rest seed the search with their old times, as before.
  for (StaleSuccess& s : state.stale) {
    if (!chosen.count(s.hash)) state.successes.push_back({s.seconds, std::move(s.trace)});
  }
  state.stale.clear();
  state.SortSuccesses();
  return Status::OK();
}

}  // namespace tunefarm::tuner
