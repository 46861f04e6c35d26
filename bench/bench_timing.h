// The timing recipe every side-by-side benchmark uses, so that tunefarm
// kernels and their peers are timed the same way: two warm-up calls, then
// `repeat` groups, each of enough calls to last about 50 ms; the median of
// the groups' seconds per call.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace tunefarm::bench {

inline double TimeMedian(const std::function<void()>& fn, int repeat) {
  using Clock = std::chrono::steady_clock;
  fn();
  fn();
  auto t0 = Clock::now();
  fn();
  double once = std::chrono::duration<double>(Clock::now() - t0).count();
  int number = std::max(1, int(0.05 / std::max(once, 1e-7)));
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, repeat); ++r) {
    auto start = Clock::now();
    for (int i = 0; i < number; ++i) fn();
    samples.push_back(std::chrono::duration<double>(Clock::now() - start).count() / number);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace tunefarm::bench
