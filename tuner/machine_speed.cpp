// The machine's speed during a tuning run (see machine_speed.h).
#include "tunefarm/tuner/machine_speed.h"

#include <algorithm>

namespace tunefarm::tuner {

std::optional<double> MachineSpeed::AddBatch(const std::vector<MeasureResult>& results) {
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
  batches_.push_back(std::move(probes));
  return BatchSpeed(batches_.back());
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
  for (const std::vector<Probe>& probes : batches_) {
    double speed = BatchSpeed(probes);
    ++s.batches;
    s.slowest = std::min(s.slowest, speed);
    if (speed < kSlowSpeed) {
      ++s.slow_batches;
      s.slow_results += int(probes.size());
    }
  }
  return s;
}

}  // namespace tunefarm::tuner
