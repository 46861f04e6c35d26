// The linearisation walk (linearize.h) that the simplifier, the schedule's
// access regions and the cost model's index forms share: the terms and scales
// it hands out at odd expression shapes, where it stops, and what it does
// when a scale would overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::ir {
namespace {

// "scale*term" for each term, in the order the walk hands them out.
std::vector<std::string> Terms(const Expr& e, int64_t scale = 1) {
  std::vector<std::string> out;
  bool ok = Linearize(e, scale, [&](const Expr& term, int64_t s) {
    out.push_back(std::to_string(s) + "*" + ToString(term));
    return true;
  });
  EXPECT_TRUE(ok);
  return out;
}

using Strings = std::vector<std::string>;

TEST(LinearizeTest, SumsDifferencesAndConstantProductsScaleTheirTerms) {
  Var i("i"), j("j"), k("k");
  EXPECT_EQ(Terms(i), (Strings{"1*i"}));
  EXPECT_EQ(Terms(Expr(7)), (Strings{"1*7"}));
  EXPECT_EQ(Terms(i * 4 + j - 3), (Strings{"4*i", "1*j", "-1*3"}));
  // Nested differences flip the sign at every level.
  EXPECT_EQ(Terms(i - (j - (k - 2))), (Strings{"1*i", "-1*j", "1*k", "-1*2"}));
  // The constant on either side, and products of products.
  EXPECT_EQ(Terms(Expr(3) * (i + Expr(2) * j)), (Strings{"3*i", "6*j"}));
  EXPECT_EQ(Terms((i * 5 - j) * -2), (Strings{"-10*i", "2*j"}));
  EXPECT_EQ(Terms(Expr(3) * 4), (Strings{"4*3"}));  // the right constant is the factor
  // A caller's scale multiplies every term; a repeated term comes twice.
  EXPECT_EQ(Terms(i + i * 2, -3), (Strings{"-3*i", "-6*i"}));
}

TEST(LinearizeTest, EverythingElseIsATermWhole) {
  Var i("i"), j("j");
  Expr quotient = (i * 16 + j) / 16;
  EXPECT_EQ(Terms(quotient * 8 + j % 4), (Strings{"8*" + ToString(quotient), "1*" + ToString(j % 4)}));
  EXPECT_EQ(Terms(i * j + 1), (Strings{"1*" + ToString(i * j), "1*1"}));
  Expr cast = Cast::Make(DataType::Int(32), i + 1);
  EXPECT_EQ(Terms(cast * 2), (Strings{"2*" + ToString(cast)}));  // casts are the caller's to open
  Expr pick = Select::Make(LT::Make(i, j), i, j);
  EXPECT_EQ(Terms(pick - min(i, j)), (Strings{"1*" + ToString(pick), "-1*" + ToString(min(i, j))}));
}

TEST(LinearizeTest, ALeafThatRefusesStopsTheWalk) {
  Var i("i"), j("j"), k("k");
  std::vector<std::string> seen;
  bool ok = Linearize(i + j * 2 + k, 1, [&](const Expr& term, int64_t) {
    seen.push_back(ToString(term));
    return !term.same_as(j);
  });
  EXPECT_FALSE(ok);
  EXPECT_EQ(seen, (Strings{"i", "j"}));  // k is never visited
}

TEST(LinearizeTest, AScalePastInt64MakesTheProductATerm) {
  Var i("i"), j("j");
  constexpr int64_t kBig = int64_t{1} << 62;
  // 4 * 2^62 overflows: the product is handed out whole at the outer scale.
  Expr product = i * kBig;
  EXPECT_EQ(Terms(product, 4), (Strings{"4*" + ToString(product)}));
  // The left constant is tried when the right one overflows.
  Expr both = Expr(2) * (j * kBig);
  EXPECT_EQ(Terms(both, 1), (Strings{"2*" + ToString(j * kBig)}));
  // Negating INT64_MIN overflows: the difference is a term.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Expr diff = i - j;
  EXPECT_EQ(Terms(diff, kMin), (Strings{std::to_string(kMin) + "*" + ToString(diff)}));
  EXPECT_EQ(Terms(i + j, kMin), (Strings{std::to_string(kMin) + "*i", std::to_string(kMin) + "*j"}));
}

}  // namespace
}  // namespace tunefarm::ir
