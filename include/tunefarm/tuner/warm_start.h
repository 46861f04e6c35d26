// Transfer for the cost model: the tuning log's records of *other* workloads
// on the same target and device, turned into training rows, so a new
// workload's first batches are ranked by a model that has already seen
// schedules of this machine (Ansor's transfer, TenSet's pre-training).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/costmodel/cost_model.h"

namespace tunefarm::database {
class TuningLog;  // tuning_log.h
}

namespace tunefarm::tuner {

class SketchPolicy;

struct TransferOptions {
  std::string target;          // target string the records must have
  std::string device;          // records of this device only ("" : any)
  // Synthetic records (a test device's invented times) when true, measured
  // ones when false: invented times never teach a real run's model.
  bool synthetic = false;
  std::set<std::string> skip;  // workload hashes not to read (the job's own)
  int max_records = 1000;      // over all workloads
  int max_per_workload = 250;
};

struct TransferSet {
  std::vector<costmodel::MeasuredCandidate> records;
  int workloads = 0;  // workloads that contributed
  int skipped = 0;    // records whose trace no longer replays (another version)
};

// Reads, replays and lowers the records of `log` (any TuningLog; borrowed).
// Records whose trace does not apply are skipped, not errors: the log
// outlives rule changes.
Result<TransferSet> CollectTransferRecords(database::TuningLog* log, const SketchPolicy* policy,
                                           const TransferOptions& options);

}  // namespace tunefarm::tuner
