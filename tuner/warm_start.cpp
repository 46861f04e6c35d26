// Transfer records for the cost model (warm_start.h).
#include "tunefarm/tuner/warm_start.h"

#include <algorithm>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/tuning_log.h"
#include "tunefarm/tuner/search.h"

namespace tunefarm::tuner {

Result<TransferSet> CollectTransferRecords(database::TuningLog* log, const SketchPolicy* policy,
                                           const TransferOptions& options) {
  TransferSet out;
  if (options.max_records <= 0) return out;
  TF_ASSIGN_OR_RETURN(std::vector<database::Workload> workloads, log->ListWorkloads());
  std::erase_if(workloads, [&](const database::Workload& w) { return options.skip.count(w.hash) > 0; });
  if (workloads.empty()) return out;
  // Share the budget evenly, so one much-tuned workload does not crowd out the rest.
  int per_workload = std::min(options.max_per_workload,
                              std::max(16, options.max_records / int(workloads.size())));
  for (const database::Workload& w : workloads) {
    if (int(out.records.size()) >= options.max_records) break;
    auto parsed = ParseWorkload(w.text);
    if (!parsed.ok()) continue;  // a workload text of another version
    auto default_func = LowerToPrimFunc(*parsed);
    if (!default_func.ok()) continue;
    EvolutionarySearch replayer(*default_func, policy, SearchOptions(), /*seed=*/1);
    int taken = 0;
    Status st = log->ForEachRecord({w.hash, options.target}, [&](const database::TuningRecord& r) -> Status {
      if (taken >= per_workload || int(out.records.size()) >= options.max_records) return Status::Cancelled("enough");
      if (!options.device.empty() && !r.device.empty() && r.device != options.device) return Status::OK();
      if (r.synthetic != options.synthetic) return Status::OK();
      auto trace = Trace::Parse(r.trace);
      if (!trace.ok()) {
        ++out.skipped;
        return Status::OK();
      }
      auto c = replayer.Replay(*trace);
      if (!c.ok()) {
        ++out.skipped;
        return Status::OK();
      }
      double secs = r.TimeSec().value_or(0);
      out.records.push_back(costmodel::MeasuredCandidate::FromLowered(w.hash, c->lowered, secs, !r.ok()));
      ++taken;
      return Status::OK();
    });
    if (!st.ok() && st.code() != StatusCode::kCancelled) return st;
    if (taken > 0) ++out.workloads;
  }
  return out;
}

}  // namespace tunefarm::tuner
