// The IR's integer Div and Mod (floor_div.h), which the simplifier, the
// bounds, the interpreter and the cost model's index features share: checked
// against floor(a / b) in exact arithmetic over every sign combination.
#include <gtest/gtest.h>

#include <cmath>

#include "tunefarm/compiler/ir/floor_div.h"

namespace tunefarm::ir {
namespace {

TEST(FloorDivTest, FloorsTowardNegativeInfinityAndModTakesTheDivisorsSign) {
  for (int64_t a = -40; a <= 40; ++a) {
    for (int64_t b = -9; b <= 9; ++b) {
      if (b == 0) continue;
      const int64_t q = static_cast<int64_t>(std::floor(static_cast<long double>(a) / b));
      EXPECT_EQ(FloorDiv(a, b), q) << a << " / " << b;
      const int64_t m = FloorMod(a, b);
      EXPECT_EQ(a, q * b + m) << a << " % " << b;
      if (m != 0) {
        EXPECT_EQ(m < 0, b < 0) << a << " % " << b << " = " << m;
      }
      EXPECT_LT(std::abs(m), std::abs(b));
    }
  }
  EXPECT_EQ(FloorDiv(-7, 2), -4);
  EXPECT_EQ(FloorMod(-7, 2), 1);
  EXPECT_EQ(FloorDiv(7, -2), -4);
  EXPECT_EQ(FloorMod(7, -2), -1);
}

}  // namespace
}  // namespace tunefarm::ir
