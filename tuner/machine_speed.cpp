// The machine's speed during a tuning run (see machine_speed.h).
#include "tunefarm/tuner/machine_speed.h"

#include <algorithm>

namespace tunefarm::tuner {

std::optional<double> MachineSpeed::AddBatch(const std::vector<MeasureResult>& results, BatchPlace place) {
  std::vector<Probe> probes;
  for (const MeasureResult& r : results) {
    // A failed candidate carries no probe; a probe of zero would be a clock
    // that did not move, not an infinitely fast machine.
    if (r.error != MeasureErrorKind::kNone || !(r.speed_probe_seconds > 0)) continue;
    probes.push_back({r.worker, r.speed_probe_seconds});
    auto [it, added] = fastest_.try_emplace(r.worker, r.speed_probe_seconds);
    if (!added) it->second = std::min(it->second, r.speed_probe_seconds);
  }
  if (probes.empty()) return std::nullopt;
  batches_.push_back({std::move(probes), place});
  return BatchSpeed(batches_.back().probes);
}

double MachineSpeed::BatchSpeed(const std::vector<Probe>& probes) const {
  std::vector<double> speeds;
  for (const Probe& p : probes) speeds.push_back(fastest_.at(p.worker) / p.seconds);
  // The median: one candidate whose probe met a passing hiccup does not make
  // its batch slow, a stretch that lasts the batch does.
  std::nth_element(speeds.begin(), speeds.begin() + speeds.size() / 2, speeds.end());
  return speeds[speeds.size() / 2];
}

MachineSpeed::Summary MachineSpeed::Summarize() const {
  Summary s;
  for (const Batch& batch : batches_) {
    double speed = BatchSpeed(batch.probes);
    ++s.batches;
    s.slowest = std::min(s.slowest, speed);
    if (speed < kSlowSpeed) {
      ++s.slow_batches;
      s.slow_results += int(batch.probes.size());
    }
  }
  return s;
}

std::vector<std::pair<int, int>> MachineSpeed::SlowTrials(int task) const {
  std::vector<std::pair<int, int>> ranges;
  for (const Batch& batch : batches_) {
    const BatchPlace& p = batch.place;
    if (p.task != task || p.end_trial <= p.first_trial || BatchSpeed(batch.probes) >= kSlowSpeed) continue;
    if (!ranges.empty() && ranges.back().second == p.first_trial) {
      ranges.back().second = p.end_trial;
    } else {
      ranges.push_back({p.first_trial, p.end_trial});
    }
  }
  return ranges;
}

}  // namespace tunefarm::tuner
