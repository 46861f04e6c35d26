// The side-by-side timing recipe of bench/bench_timing.h: implementations
// are timed in interleaved rounds, and the ratio pairs each round's groups.
// Nothing here asserts a duration: the test checks the order of the calls and
// the arithmetic on given times.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench_timing.h"

namespace tunefarm::bench {
namespace {

TEST(BenchTimingTest, ImplementationsAreTimedInInterleavedRounds) {
  std::string calls;
  auto slow = [&calls](char name) {
    return [&calls, name] {
      calls += name;
      // Long enough that a 50 ms group is a handful of calls.
      std::this_thread::sleep_for(std::chrono::milliseconds(12));
    };
  };
  InterleavedTimes times = TimeInterleaved({slow('a'), slow('b')}, 3, 0.001);
  ASSERT_EQ(times.seconds.size(), 2u);
  EXPECT_EQ(times.seconds[0].size(), 3u);
  EXPECT_EQ(times.seconds[1].size(), 3u);
  // Three calibration calls each, then rounds of one group of a, one of b.
  ASSERT_GE(calls.size(), 6u);
  EXPECT_EQ(calls.substr(0, 6), "aaabbb");
  std::string rounds = calls.substr(6);
  std::string compressed;
  for (char c : rounds) {
    if (compressed.empty() || compressed.back() != c) compressed += c;
  }
  EXPECT_EQ(compressed, "ababab") << calls;
  for (const auto& per_impl : times.seconds) {
    for (double s : per_impl) EXPECT_GT(s, 0.0);
  }
}

TEST(BenchTimingTest, RatioIsTheMedianOfEachRoundsRatio) {
  // b is faster than a in two rounds of three (2x and 3x); the machine's
  // speed changed between rounds, so the ratio of the medians (2 / 4) would
  // say b is the slower one.
  InterleavedTimes times;
  times.seconds = {{1.0, 2.0, 30.0}, {0.5, 4.0, 10.0}};
  EXPECT_DOUBLE_EQ(times.Median(0), 2.0);
  EXPECT_DOUBLE_EQ(times.Median(1), 4.0);
  EXPECT_DOUBLE_EQ(times.MedianRatio(0, 1), 2.0);
  EXPECT_DOUBLE_EQ(times.MedianRatio(1, 0), 0.5);
}

TEST(BenchTimingTest, TimeMedianRunsRepeatGroupsAfterCalibration) {
  int calls = 0;
  double s = TimeMedian(
      [&calls] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(12));
      },
      3);
  EXPECT_GT(s, 0.0);
  // Three calibration calls, then three groups of the same number of calls.
  EXPECT_GE(calls, 3 + 3);
  EXPECT_EQ((calls - 3) % 3, 0);
}

}  // namespace
}  // namespace tunefarm::bench
