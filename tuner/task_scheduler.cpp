#include "tunefarm/tuner/task_scheduler.h"

#include <cmath>
#include <limits>

namespace tunefarm::tuner {

size_t TaskScheduler::Next(const std::vector<TaskHistory>& tasks, const std::vector<bool>& done) {
  std::vector<size_t> open;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!done[i]) open.push_back(i);
  }
  if (open.empty()) return 0;
  // Warm-up: one batch each, in order.
  for (size_t i : open) {
    if (tasks[i].best_after_batch.empty()) return i;
  }
  if (std::uniform_real_distribution<double>(0, 1)(rng_) < epsilon_) return open[rng_() % open.size()];
  size_t best = open[0];
  double best_gain = -1;
  for (size_t i : open) {
    const TaskHistory& t = tasks[i];
    double now = t.best_after_batch.back();
    double gain;
    if (!std::isfinite(now)) {
      gain = std::numeric_limits<double>::max();  // nothing works yet: top priority
    } else {
      // Backward: latency drop over the last three batches, per trial.
      size_t back = std::min<size_t>(3, t.best_after_batch.size() - 1);
      double before = t.best_after_batch[t.best_after_batch.size() - 1 - back];
      double recent = std::isfinite(before) && back > 0 ? (before - now) / (double(back) * std::max(1, t.trials) /
                                                                           double(t.best_after_batch.size()))
                                                        : 0;
      // Forward, optimistic: as if the next trials improved as much as the average so far.
      double optimistic = now / double(std::max(1, t.trials));
      gain = t.weight * std::max(recent, 0.25 * optimistic);
    }
    if (gain > best_gain) {
      best_gain = gain;
      best = i;
    }
  }
  return best;
}

}  // namespace tunefarm::tuner
