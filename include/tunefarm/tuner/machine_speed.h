// How fast the measuring machine ran during a tuning run, batch by batch.
//
// Every measurement carries the time of the worker's speed probe, a fixed
// loop timed right after the kernel on its threads
// (MeasureResult::speed_probe_seconds). A result's speed is the fastest probe
// the same worker gave in this run divided by its own: 1 is the machine at
// its best, 0.8 a fifth slower. A batch's speed is the median of its
// results'. On a shared host the speed drifts for minutes at a time; kernels
// timed in a slow batch look slower than they are, so a ranking across slow
// and fast batches favours the kernels measured in the fast ones. The tuning
// loop reports the slow batches (Progress::machine_speed, Summarize) so that
// a user knows when that happened; it does not correct the times.
//
// Workers are told apart by MeasureResult::worker: on a fleet, each machine's
// probes are compared with its own. Not thread-safe; one TuningLoop owns it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/measure/measure.h"

namespace tunefarm::tuner {

// Where a measured batch's trials lie in its task: trials [first_trial,
// end_trial) of task `task` (the tuning loop's task index; -1: not said).
struct BatchPlace {
  int task = -1;
  int first_trial = 0;
  int end_trial = 0;
};

class MachineSpeed {
 public:
  // A batch below this speed counts as slow: beyond the probe's own spread
  // on a quiet machine (a few percent), and a slowdown that reorders kernels
  // whose times differ by less.
  static constexpr double kSlowSpeed = 0.9;

  // Notes one batch's results. Returns its speed against the fastest probes
  // seen so far (this batch's included), or nullopt when none of its results
  // carries a probe (failures, a synthetic device, an older worker).
  std::optional<double> AddBatch(const std::vector<MeasureResult>& results, BatchPlace place = {});

  struct Summary {
    int batches = 0;       // batches with at least one probe
    int slow_batches = 0;  // of those, slower than kSlowSpeed
    int slow_results = 0;  // probed results of the slow batches
    double slowest = 1;    // the lowest batch speed; 1 when no batch was probed
  };
  // Every batch so far, each against the fastest probes of the whole run:
  // a batch that looked steady before a faster stretch came can turn out slow.
  Summary Summarize() const;

  // The trials of `task` measured in slow batches (as Summarize judges
  // them), as [first, end) ranges in order, adjacent ones merged: where the
  // tuning curve shades its x axis.
  std::vector<std::pair<int, int>> SlowTrials(int task) const;

 private:
  struct Probe {
    std::string worker;
    double seconds = 0;
  };
  // The median over `probes` of fastest / seconds.
  double BatchSpeed(const std::vector<Probe>& probes) const;

  struct Batch {
    std::vector<Probe> probes;  // at least one
    BatchPlace place;
  };

  std::map<std::string, double> fastest_;  // worker -> its fastest probe, seconds
  std::vector<Batch> batches_;             // the probed batches, in order
};

}  // namespace tunefarm::tuner
