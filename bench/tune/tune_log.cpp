#include "tune_log.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm::bench {

std::string DefaultRecordTargetString() {
  // tuner::RecordTarget stores Target::ToString(); only the string is needed
  // here, so this library stays off the tuner (and its in-flux sketch rules).
  auto target = Target::Parse("llvm");
  return (target.ok() ? *target : Target::Host()).ToString();
}

Result<std::string> RecordTargetString(const std::string& text) {
  TF_ASSIGN_OR_RETURN(Target target, Target::Parse(text));
  return target.ToString();
}

Result<LoggedWorkloads> WorkloadsOfLogs(const std::vector<std::string>& paths) {
  database::OpenOptions read_only;
  read_only.read_only = true;
  std::map<std::string, std::pair<std::string, Workload>> by_hash;
  LoggedWorkloads out;
  for (const std::string& path : paths) {
    TF_ASSIGN_OR_RETURN(auto db, database::Database::Open(path, read_only));
    TF_ASSIGN_OR_RETURN(std::vector<database::Workload> listed, db->ListWorkloads());
    for (const database::Workload& lw : listed) {
      if (by_hash.count(lw.hash)) continue;
      auto w = ParseWorkload(lw.text);
      if (!w.ok()) {
        ++out.unparsed;
        continue;
      }
      by_hash.emplace(lw.hash, std::make_pair(lw.name, std::move(*w)));
    }
  }
  for (auto& [hash, entry] : by_hash) out.workloads.push_back(std::move(entry));
  std::sort(out.workloads.begin(), out.workloads.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

Result<std::vector<LoggedTrial>> LoadTrials(database::Database& db, const std::string& workload_hash,
                                            const std::string& target_string) {
  std::vector<LoggedTrial> trials;
  Status st = db.ForEachRecord({workload_hash, target_string}, [&](const database::TuningRecord& r) -> Status {
    LoggedTrial t;
    t.id = r.id;
    t.index = int(trials.size()) + 1;
    t.ok = r.error_kind == database::ErrorKind::kNone && !r.run_secs.empty();
    if (t.ok) t.seconds = *r.TimeSec();  // as the log ranks it (database::RecordTime)
    t.trace = r.trace;
    trials.push_back(std::move(t));
    return Status::OK();
  });
  TF_RETURN_IF_ERROR(st);
  return trials;
}

void TraceRanking::Add(const LoggedTrial& trial) {
  if (!trial.ok) return;
  Times& t = times_[trial.trace];
  t.sum += trial.seconds;
  ++t.count;
  if (t.count == 1 || trial.seconds < t.fastest.seconds) t.fastest = trial;
  auto as_best = [](const Times& times) {
    LoggedTrial best = times.fastest;
    best.seconds = times.Mean();
    best.measurements = times.count;
    return best;
  };
  if (best_ && best_->trace == trial.trace && t.Mean() > best_->seconds) {
    // The best measured again came out slower: another trace may lead now.
    // Ties go to the older fastest record, as in the database.
    auto lead = std::min_element(times_.begin(), times_.end(), [](const auto& a, const auto& b) {
      if (a.second.Mean() != b.second.Mean()) return a.second.Mean() < b.second.Mean();
      return a.second.fastest.id < b.second.fastest.id;
    });
    best_ = as_best(lead->second);
  } else if (!best_ || best_->trace == trial.trace || t.Mean() < best_->seconds) {
    best_ = as_best(t);
  }
}

std::optional<LoggedTrial> BestWithin(const std::vector<LoggedTrial>& trials, int budget) {
  TraceRanking ranking;
  for (const LoggedTrial& t : trials) {
    if (budget > 0 && t.index > budget) break;
    ranking.Add(t);
  }
  return ranking.best();
}

Result<ir::PrimFunc> ReplayTrace(const Workload& w, const std::string& trace_text) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  TF_ASSIGN_OR_RETURN(Trace trace, Trace::Parse(trace_text));
  Schedule sch(f);
  Status applied = trace.ApplyTo(sch);
  if (!applied.ok()) return Status::Corruption("trace does not replay on " + w.name + ": " + applied.message());
  return sch.func();
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool IsDefaultSchedule(const std::string& trace_text) {
  auto trace = Trace::Parse(trace_text);
  return trace.ok() && trace->size() == 0;
}

std::optional<int> TrialsToReach(const std::vector<LoggedTrial>& trials, double reference_seconds, double fraction) {
  // The best can fall back when it is measured again: a level counts as
  // reached from the trial after which the best stayed at it to the end.
  TraceRanking ranking;
  std::optional<int> reached;
  for (const LoggedTrial& t : trials) {
    ranking.Add(t);
    // Throughput ratio reference/best >= fraction.
    bool at_level = ranking.best() && reference_seconds / ranking.best()->seconds >= fraction;
    if (!at_level) {
      reached.reset();
    } else if (!reached) {
      reached = t.index;
    }
  }
  return reached;
}

}  // namespace tunefarm::bench
