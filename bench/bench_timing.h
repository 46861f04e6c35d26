// The timing recipe every side-by-side benchmark uses, so that tunefarm
// kernels and their peers are timed the same way: two warm-up calls, then
// `repeat` groups, each of enough calls to last about 50 ms; the median of
// the groups' seconds per call.
//
// TimeInterleaved times several implementations in rounds of one group each
// (A B C, A B C, ...), so that a drift of the machine's speed during the run
// (a co-tenant on the physical core, the clock) touches all of them alike
// rather than whichever was timed in the slow stretch.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace tunefarm::bench {

namespace timing_internal {

// Two warm-up calls, then the calls per group that last about 50 ms.
inline int CallsPerGroup(const std::function<void()>& fn) {
  using Clock = std::chrono::steady_clock;
  fn();
  fn();
  auto t0 = Clock::now();
  fn();
  double once = std::chrono::duration<double>(Clock::now() - t0).count();
  return std::max(1, int(0.05 / std::max(once, 1e-7)));
}

inline double TimeGroup(const std::function<void()>& fn, int number) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  for (int i = 0; i < number; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - start).count() / number;
}

inline double Median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace timing_internal

inline double TimeMedian(const std::function<void()>& fn, int repeat) {
  int number = timing_internal::CallsPerGroup(fn);
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, repeat); ++r) samples.push_back(timing_internal::TimeGroup(fn, number));
  return timing_internal::Median(std::move(samples));
}

// Seconds per call of several implementations timed in interleaved rounds.
struct InterleavedTimes {
  std::vector<std::vector<double>> seconds;  // [implementation][round], seconds per call

  // The median of implementation i's groups.
  double Median(size_t i) const { return timing_internal::Median(seconds[i]); }
  // The median over rounds of seconds[a] / seconds[b]: how many times faster b
  // is than a. A round's groups run back to back, so a change of the
  // machine's state between rounds cancels out of each round's ratio.
  double MedianRatio(size_t a, size_t b) const {
    std::vector<double> ratios;
    for (size_t r = 0; r < seconds[a].size(); ++r) ratios.push_back(seconds[a][r] / seconds[b][r]);
    return timing_internal::Median(std::move(ratios));
  }
};

// Times `fns` in `repeat` rounds of one group each. Before each group the
// thread sleeps for `pause_s`: an OpenMP runtime's idle workers spin for
// milliseconds after a parallel region and would take the cores from the next
// implementation's threads (measured on DEP at 2 threads: with spinning forced
// on, tunefarm's kernel ran at a third of its speed), and tunefarm's own pool
// spins too.
inline InterleavedTimes TimeInterleaved(const std::vector<std::function<void()>>& fns, int repeat,
                                        double pause_s = 0.02) {
  std::vector<int> number;
  for (const auto& fn : fns) number.push_back(timing_internal::CallsPerGroup(fn));
  InterleavedTimes times;
  times.seconds.resize(fns.size());
  for (int r = 0; r < std::max(1, repeat); ++r) {
    for (size_t i = 0; i < fns.size(); ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
      times.seconds[i].push_back(timing_internal::TimeGroup(fns[i], number[i]));
    }
  }
  return times;
}

}  // namespace tunefarm::bench
