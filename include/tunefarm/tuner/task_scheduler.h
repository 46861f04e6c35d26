// Task scheduler: which task of a job gets the next batch of trials.
//
// Gradient-based, as Ansor's: first every task gets one batch of the search,
// the one whose weighted latency (weight x best) is largest first, so that
// a budget too small for all of them goes where the job spends its time.
// After that the next batch goes to the task whose weighted latency is
// expected to fall the most per trial -- the larger of its recent
// improvement rate and an optimistic estimate from its current latency --
// with a small share of batches to a random task so that none is starved by
// a stale estimate.
//
// Only batches of the search count: the untuned default's baseline, the
// re-measuring of transferred records and the final round are measurements
// but not steps of the search, and the default-to-first-tuned jump would
// otherwise read as a recent improvement rate that dwarfs every other task's.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tunefarm::tuner {

struct TaskHistory {
  double weight = 1;                     // how many times the job runs this task
  int trials = 0;                        // measured so far, baseline included
  double best_seconds = 0;               // the task's best now, searched or not (<= 0: none yet)
  std::vector<double> best_after_batch;  // best seconds after each search batch (+inf before any success)

  // After a search batch: the task's trials and best seconds (<= 0: none yet).
  void AddSearchBatch(int trials_now, double best_now);
};

class TaskScheduler {
 public:
  explicit TaskScheduler(uint64_t seed, double epsilon = 0.05) : rng_(seed), epsilon_(epsilon) {}
  // Index of the task that should get the next batch; `done[i]` excludes a task.
  size_t Next(const std::vector<TaskHistory>& tasks, const std::vector<bool>& done);

 private:
  // The expected fall of task t's weighted latency per trial.
  static double Gain(const TaskHistory& t);

  std::mt19937_64 rng_;
  double epsilon_;
};

}  // namespace tunefarm::tuner
