// Integer intervals and their arithmetic: the one home of the bounds that the
// simplifier (simplify.h, BoundOf and the RangeMap of loop variables), the
// workload checker (compiler/workload/workload_bounds.h) and the cost model's
// index features (costmodel/features_index.h) derive from index expressions.
//
// An Interval is inclusive: [min, max]. min > max holds no value (the
// workload checker's unreachable select branch); the arithmetic below is
// exact only for intervals that hold a value, which is all the simplifier and
// the features ever build (their loops have extents of at least one).
// An unknown bound is std::nullopt: an operation whose result leaves int64_t,
// or a division whose divisor may be zero, has none.
//
// Two overflow policies, each kept for the callers that had it:
//  * checked (Add, Sub, Mul): no bound when an end leaves int64_t. The
//    workload checker and the features.
//  * saturating (SaturatingAdd, SaturatingSub, SaturatingMul): each end
//    clamped to [-kSaturationLimit, kSaturationLimit], computed exactly in
//    128 bits first. The simplifier's bounds. A value past the limit is
//    then bounded by the limit, not by itself.
// Division and modulo are the IR's floor forms (floor_div.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "tunefarm/compiler/ir/floor_div.h"

namespace tunefarm::ir {

inline constexpr int64_t kSaturationLimit = int64_t{1} << 60;

struct Interval {
  int64_t min;
  int64_t max;  // inclusive; min > max holds no value

  static constexpr Interval Point(int64_t v) { return Interval{v, v}; }
  // Holds exactly one value.
  constexpr bool is_const() const { return min == max; }
  constexpr bool empty() const { return min > max; }
  // Number of values held, max - min + 1 (the caller keeps it within int64_t).
  constexpr int64_t extent() const { return max - min + 1; }
  friend constexpr bool operator==(const Interval&, const Interval&) = default;

  // The operations are static members, Interval::Add(a, b): the IR's node
  // types own the plain names (ir::Add, ir::Min, ...).

  // ---- checked: std::nullopt when an end leaves int64_t.
  static std::optional<Interval> Add(Interval a, Interval b) {
    Interval r;
    if (__builtin_add_overflow(a.min, b.min, &r.min) || __builtin_add_overflow(a.max, b.max, &r.max)) {
      return std::nullopt;
    }
    return r;
  }
  static std::optional<Interval> Sub(Interval a, Interval b) {
    Interval r;
    if (__builtin_sub_overflow(a.min, b.max, &r.min) || __builtin_sub_overflow(a.max, b.min, &r.max)) {
      return std::nullopt;
    }
    return r;
  }
  // The hull of the four corner products (a sign change in either factor swaps ends).
  static std::optional<Interval> Mul(Interval a, Interval b) {
    int64_t c[4];
    if (__builtin_mul_overflow(a.min, b.min, &c[0]) || __builtin_mul_overflow(a.min, b.max, &c[1]) ||
        __builtin_mul_overflow(a.max, b.min, &c[2]) || __builtin_mul_overflow(a.max, b.max, &c[3])) {
      return std::nullopt;
    }
    return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  static std::optional<Interval> Mul(Interval a, int64_t c) { return Mul(a, Point(c)); }

  // ---- saturating: ends clamped to [-kSaturationLimit, kSaturationLimit].
  static Interval SaturatingAdd(Interval a, Interval b) {
    return Interval{Clamp(__int128{a.min} + b.min), Clamp(__int128{a.max} + b.max)};
  }
  static Interval SaturatingSub(Interval a, Interval b) {
    return Interval{Clamp(__int128{a.min} - b.max), Clamp(__int128{a.max} - b.min)};
  }
  static Interval SaturatingMul(Interval a, Interval b) {
    __int128 c[4] = {__int128{a.min} * b.min, __int128{a.min} * b.max, __int128{a.max} * b.min,
                     __int128{a.max} * b.max};
    return Interval{Clamp(*std::min_element(c, c + 4)), Clamp(*std::max_element(c, c + 4))};
  }

  // ---- floor division and modulo.
  // By a constant c > 0 (the caller checks): floor division is monotone in
  // the dividend, so the ends map to the ends.
  static Interval FloorDiv(Interval a, int64_t c) { return Interval{ir::FloorDiv(a.min, c), ir::FloorDiv(a.max, c)}; }
  // By an interval divisor of either sign: std::nullopt when it may be zero,
  // or -1 (INT64_MIN / -1 overflows). The quotient is monotone in each
  // operand on either side of zero, so the hull of the four corners bounds it.
  static std::optional<Interval> FloorDiv(Interval a, Interval b) {
    if (b.min <= 0 && b.max >= 0) return std::nullopt;
    if (b.min == -1 || b.max == -1) return std::nullopt;
    int64_t c[4] = {ir::FloorDiv(a.min, b.min), ir::FloorDiv(a.min, b.max), ir::FloorDiv(a.max, b.min),
                    ir::FloorDiv(a.max, b.max)};
    return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  // By a constant c > 0 (the caller checks), tight: when a lies within one
  // multiple of c the remainders are a shifted by that multiple, else they
  // may be anything in [0, c - 1].
  static Interval FloorMod(Interval a, int64_t c) {
    const int64_t q = ir::FloorDiv(a.min, c);
    if (q != ir::FloorDiv(a.max, c)) return Interval{0, c - 1};
    return Interval{a.min - q * c, a.max - q * c};
  }
  // By an interval divisor, positive only (std::nullopt otherwise): a itself
  // when it lies in [0, b.min), else [0, b.max - 1]. Looser than
  // FloorMod(a, c) for a constant divisor: [5, 7] mod 4 is [0, 3] here, [1, 3] there.
  static std::optional<Interval> FloorMod(Interval a, Interval b) {
    if (b.min <= 0) return std::nullopt;
    if (a.min >= 0 && a.max < b.min) return a;
    return Interval{0, b.max - 1};
  }

  // ---- order and sets.
  static Interval Min(Interval a, Interval b) { return Interval{std::min(a.min, b.min), std::min(a.max, b.max)}; }
  static Interval Max(Interval a, Interval b) { return Interval{std::max(a.min, b.min), std::max(a.max, b.max)}; }
  // The smallest interval holding both (a select's two values).
  static Interval Union(Interval a, Interval b) { return Interval{std::min(a.min, b.min), std::max(a.max, b.max)}; }
  // The values both hold; empty() when none.
  static Interval Intersect(Interval a, Interval b) {
    return Interval{std::max(a.min, b.min), std::min(a.max, b.max)};
  }

 private:
  static int64_t Clamp(__int128 v) {
    return static_cast<int64_t>(std::max<__int128>(-kSaturationLimit, std::min<__int128>(kSaturationLimit, v)));
  }
};

}  // namespace tunefarm::ir
