#include "tunefarm/tuner/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunefarm::tuner {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

void TaskHistory::AddSearchBatch(int trials_now, double best_now) {
  trials = trials_now;
  best_seconds = best_now;
  best_after_batch.push_back(best_now > 0 ? best_now : kInf);
}

size_t TaskScheduler::Next(const std::vector<TaskHistory>& tasks, const std::vector<bool>& done) {
  std::vector<size_t> open;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!done[i]) open.push_back(i);
  }
  if (open.empty()) return 0;
  // Warm-up: every task's first batch, the largest weighted latency first (a
  // task with nothing timed yet counts as infinitely slow).
  size_t first = tasks.size();
  double first_latency = -1;
  for (size_t i : open) {
    const TaskHistory& t = tasks[i];
    if (!t.best_after_batch.empty()) continue;
    const double latency = t.weight * (t.best_seconds > 0 ? t.best_seconds : kInf);
    if (latency > first_latency) {
      first_latency = latency;
      first = i;
    }
  }
  if (first < tasks.size()) return first;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) < epsilon_) return open[rng_() % open.size()];
  size_t best = open[0];
  double best_gain = -1;
  for (size_t i : open) {
    const double gain = Gain(tasks[i]);
    if (gain > best_gain) {
      best_gain = gain;
      best = i;
    }
  }
  return best;
}

double TaskScheduler::Gain(const TaskHistory& t) {
  const std::vector<double>& after = t.best_after_batch;
  const double now = after.back();
  if (!std::isfinite(now)) return std::numeric_limits<double>::max();  // nothing works yet: top priority
  // Backward: the latency drop over the last (up to) three search batches,
  // per trial of those batches (trials / batches estimates a batch's size).
  const size_t back = std::min<size_t>(3, after.size() - 1);
  const double before = after[after.size() - 1 - back];
  const double trials_per_batch = double(std::max(1, t.trials)) / double(after.size());
  const double recent = back > 0 && std::isfinite(before) ? (before - now) / (double(back) * trials_per_batch) : 0;
  // Forward, optimistic: as if the next trials improved as much as the average so far.
  const double optimistic = now / double(std::max(1, t.trials));
  return t.weight * std::max(recent, 0.25 * optimistic);
}

}  // namespace tunefarm::tuner
