// Task scheduler: which task of a job gets the next batch of trials.
//
// Gradient-based, as Ansor: every task first gets one batch; after that the
// next batch goes to the task whose weighted latency is expected to fall the
// most per trial -- the larger of its recent improvement rate and an
// optimistic estimate from its current latency -- with a small share of
// batches to a random task so that none is starved by a stale estimate.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tunefarm::tuner {

struct TaskHistory {
  double weight = 1;                  // how many times the job runs this task
  int trials = 0;                     // measured so far
  std::vector<double> best_after_batch;  // best seconds after each batch (+inf before any success)
};

class TaskScheduler {
 public:
  explicit TaskScheduler(uint64_t seed, double epsilon = 0.05) : rng_(seed), epsilon_(epsilon) {}
  // Index of the task that should get the next batch; `done[i]` excludes a task.
  size_t Next(const std::vector<TaskHistory>& tasks, const std::vector<bool>& done);

 private:
  std::mt19937_64 rng_;
  double epsilon_;
};

}  // namespace tunefarm::tuner
