// Interval arithmetic (interval.h), which the simplifier, the workload checker
// and the cost model's index features share: every operation checked against
// the values it bounds, by enumeration over small intervals of every sign, and
// the corners each caller relies on (overflow, saturation, divisors that may
// be zero or -1, the two modulo rules).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tunefarm/compiler/ir/interval.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::ir {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Every interval with ends in [-5, 5].
std::vector<Interval> SmallIntervals() {
  std::vector<Interval> out;
  for (int64_t lo = -5; lo <= 5; ++lo) {
    for (int64_t hi = lo; hi <= 5; ++hi) out.push_back(Interval{lo, hi});
  }
  return out;
}

// The hull of f(x, y) over x in a, y in b (skipping pairs `skip` rejects).
template <typename F, typename Skip>
std::optional<Interval> Hull(Interval a, Interval b, F f, Skip skip) {
  std::optional<Interval> h;
  for (int64_t x = a.min; x <= a.max; ++x) {
    for (int64_t y = b.min; y <= b.max; ++y) {
      if (skip(y)) continue;
      const int64_t v = f(x, y);
      h = h ? Interval::Union(*h, Interval::Point(v)) : Interval::Point(v);
    }
  }
  return h;
}

auto NoSkip = [](int64_t) { return false; };

TEST(IntervalTest, AddSubMulMinMaxAreTheHullOfTheirValues) {
  for (Interval a : SmallIntervals()) {
    for (Interval b : SmallIntervals()) {
      EXPECT_EQ(Interval::Add(a, b), Hull(a, b, [](int64_t x, int64_t y) { return x + y; }, NoSkip));
      EXPECT_EQ(Interval::Sub(a, b), Hull(a, b, [](int64_t x, int64_t y) { return x - y; }, NoSkip));
      EXPECT_EQ(Interval::Mul(a, b), Hull(a, b, [](int64_t x, int64_t y) { return x * y; }, NoSkip));
      EXPECT_EQ(Interval::Min(a, b), Hull(a, b, [](int64_t x, int64_t y) { return std::min(x, y); }, NoSkip));
      EXPECT_EQ(Interval::Max(a, b), Hull(a, b, [](int64_t x, int64_t y) { return std::max(x, y); }, NoSkip));
      // Far from the limit the saturating forms agree with the checked ones.
      EXPECT_EQ(Interval::SaturatingAdd(a, b), Interval::Add(a, b));
      EXPECT_EQ(Interval::SaturatingSub(a, b), Interval::Sub(a, b));
      EXPECT_EQ(Interval::SaturatingMul(a, b), Interval::Mul(a, b));
    }
  }
  EXPECT_EQ(Interval::Mul(Interval{-3, 2}, -4), (Interval{-8, 12}));
}

TEST(IntervalTest, CheckedArithmeticHasNoBoundPastInt64) {
  EXPECT_FALSE(Interval::Add(Interval{0, kMax}, Interval{0, 1}).has_value());
  EXPECT_FALSE(Interval::Add(Interval{kMin, 0}, Interval{-1, 0}).has_value());
  EXPECT_FALSE(Interval::Sub(Interval{kMin, 0}, Interval{0, 1}).has_value());
  EXPECT_FALSE(Interval::Sub(Interval{0, 0}, Interval{kMin, kMin}).has_value());  // -INT64_MIN
  EXPECT_FALSE(Interval::Mul(Interval{-1, 1}, Interval::Point(kMin)).has_value());
  EXPECT_FALSE(Interval::Mul(Interval{0, int64_t{1} << 32}, int64_t{1} << 31).has_value());
  EXPECT_EQ(Interval::Add(Interval{0, kMax - 1}, Interval{0, 1}), (Interval{0, kMax}));
  EXPECT_EQ(Interval::Mul(Interval{0, int64_t{1} << 31}, int64_t{1} << 31), (Interval{0, int64_t{1} << 62}));
}

TEST(IntervalTest, SaturatingArithmeticClampsEachEndAtTwoToThe60) {
  const int64_t big = kSaturationLimit;
  EXPECT_EQ(Interval::SaturatingAdd(Interval{0, kMax}, Interval{-5, 5}), (Interval{-5, big}));
  EXPECT_EQ(Interval::SaturatingSub(Interval{kMin, 3}, Interval{1, 2}), (Interval{-big, 2}));
  EXPECT_EQ(Interval::SaturatingMul(Interval{-3, 3}, Interval::Point(kMax)), (Interval{-big, big}));
  // A value past the limit but within int64_t is clamped too (the simplifier's rule).
  EXPECT_EQ(Interval::SaturatingAdd(Interval::Point(big), Interval{1, 1}), Interval::Point(big));
}

TEST(IntervalTest, FloorDivByAPositiveConstantIsTight) {
  for (Interval a : SmallIntervals()) {
    for (int64_t c = 1; c <= 4; ++c) {
      EXPECT_EQ(Interval::FloorDiv(a, c),
                Hull(a, Interval::Point(c), [](int64_t x, int64_t y) { return FloorDiv(x, y); }, NoSkip));
    }
  }
  EXPECT_EQ(Interval::FloorDiv(Interval{-7, 7}, 2), (Interval{-4, 3}));
}

TEST(IntervalTest, FloorDivByAnIntervalBoundsEveryQuotientOfEitherSign) {
  for (Interval a : SmallIntervals()) {
    for (Interval b : SmallIntervals()) {
      std::optional<Interval> q = Interval::FloorDiv(a, b);
      if (b.min <= 0 && b.max >= 0) {
        EXPECT_FALSE(q.has_value()) << "divisor [" << b.min << ", " << b.max << "] may be zero";
        continue;
      }
      if (b.min == -1 || b.max == -1) {
        EXPECT_FALSE(q.has_value()) << "divisor [" << b.min << ", " << b.max << "] may be -1";
        continue;
      }
      ASSERT_TRUE(q.has_value());
      EXPECT_EQ(*q, Hull(a, b, [](int64_t x, int64_t y) { return FloorDiv(x, y); }, NoSkip));
    }
  }
  EXPECT_EQ(Interval::FloorDiv(Interval{-7, 7}, Interval{-4, -2}), (Interval{-4, 3}));
}

TEST(IntervalTest, FloorModByAPositiveConstantIsTightWithinOneMultiple) {
  for (Interval a : SmallIntervals()) {
    for (int64_t c = 1; c <= 4; ++c) {
      Interval m = Interval::FloorMod(a, c);
      std::optional<Interval> exact =
          Hull(a, Interval::Point(c), [](int64_t x, int64_t y) { return FloorMod(x, y); }, NoSkip);
      if (FloorDiv(a.min, c) == FloorDiv(a.max, c)) {
        EXPECT_EQ(m, exact);
      } else {
        EXPECT_EQ(m, (Interval{0, c - 1}));
      }
    }
  }
  EXPECT_EQ(Interval::FloorMod(Interval{-7, -5}, 4), (Interval{1, 3}));
  EXPECT_EQ(Interval::FloorMod(Interval{5, 7}, 4), (Interval{1, 3}));
  EXPECT_EQ(Interval::FloorMod(Interval{3, 5}, 4), (Interval{0, 3}));
}

TEST(IntervalTest, FloorModByAnIntervalTakesPositiveDivisorsOnlyAndIsLooser) {
  for (Interval a : SmallIntervals()) {
    for (Interval b : SmallIntervals()) {
      std::optional<Interval> m = Interval::FloorMod(a, b);
      if (b.min <= 0) {
        EXPECT_FALSE(m.has_value());
        continue;
      }
      ASSERT_TRUE(m.has_value());
      std::optional<Interval> exact = Hull(a, b, [](int64_t x, int64_t y) { return FloorMod(x, y); }, NoSkip);
      EXPECT_LE(m->min, exact->min);
      EXPECT_GE(m->max, exact->max);
    }
  }
  EXPECT_EQ(Interval::FloorMod(Interval{1, 2}, Interval{3, 5}), (Interval{1, 2}));
  EXPECT_EQ(Interval::FloorMod(Interval{5, 7}, Interval::Point(4)), (Interval{0, 3}));  // [1, 3] by a constant
}

TEST(IntervalTest, UnionIntersectAndTheConstantTest) {
  EXPECT_EQ(Interval::Union(Interval{-3, -1}, Interval{2, 4}), (Interval{-3, 4}));
  EXPECT_EQ(Interval::Intersect(Interval{-3, 2}, Interval{0, 9}), (Interval{0, 2}));
  EXPECT_TRUE(Interval::Intersect(Interval{-3, -1}, Interval{2, 4}).empty());
  EXPECT_TRUE(Interval::Point(-7).is_const());
  EXPECT_FALSE((Interval{-7, -6}).is_const());
  EXPECT_FALSE(Interval::Point(0).empty());
  EXPECT_EQ((Interval{-7, 6}).extent(), 14);
}

// The simplifier's bounds go through it: saturating sums, / and % by
// positive constants only, an unbounded dividend still has remainders.
TEST(IntervalTest, TheSimplifiersBoundsUseItsRules) {
  Var i("i"), j("j");
  RangeMap r{{i.get(), {-6, 5}}, {j.get(), {0, kMax}}};
  EXPECT_EQ(BoundOf(i / 4, r), (Interval{-2, 1}));
  EXPECT_EQ(BoundOf(i % 4, r), (Interval{0, 3}));
  EXPECT_FALSE(BoundOf(i / -4, r).has_value());
  EXPECT_FALSE(BoundOf(i / 0, r).has_value());
  EXPECT_EQ(BoundOf(Var("free") % 8, r), (Interval{0, 7}));
  EXPECT_EQ(BoundOf(j + i, r), (Interval{-6, kSaturationLimit}));
  EXPECT_EQ(BoundOf(i * -2, r), (Interval{-10, 12}));
}

}  // namespace
}  // namespace tunefarm::ir
