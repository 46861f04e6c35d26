// The index-expression simplifier.
#include <gtest/gtest.h>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm::ir {
namespace {

TEST(SimplifyTest, FoldsConstantsAndCancelsTerms) {
  Var i("i"), j("j");
  EXPECT_EQ(ToString(Simplify((i + 1) + 2)), "(i + 3)");
  EXPECT_EQ(ToString(Simplify(i * 4 + j - j + i * 2)), "(i * 6)");
  EXPECT_EQ(ToString(Simplify(i * 1 + 0)), "i");
  EXPECT_EQ(ToString(Simplify(i * 0 + 7)), "7");
  EXPECT_EQ(ToString(Simplify(Expr(3) * 4 - 5)), "7");
  EXPECT_EQ(ToString(Simplify(i - 1 - 1)), "(i - 2)");
}

TEST(SimplifyTest, FloorDivAndModUseRanges) {
  Var i("i"), j("j");
  RangeMap r{{i.get(), {0, 7}}, {j.get(), {0, 15}}};
  EXPECT_EQ(ToString(Simplify((i * 16 + j) / 16, r)), "i");
  EXPECT_EQ(ToString(Simplify((i * 16 + j) % 16, r)), "j");
  EXPECT_EQ(ToString(Simplify((i * 16 + j + 32) / 16, r)), "(i + 2)");
  // Not decidable without j's range.
  RangeMap only_i{{i.get(), {0, 7}}};
  std::string undecided = ToString(Simplify((i * 16 + j) / 16, only_i));
  EXPECT_NE(undecided.find("/ 16"), std::string::npos) << undecided;
  EXPECT_EQ(ToString(Simplify(Expr(-7) / 2)), "-4");
  EXPECT_EQ(ToString(Simplify(Expr(-7) % 2)), "1");
}

TEST(SimplifyTest, FloorDivAndModSplitOffTheMultipleOfTheDivisor) {
  // Whatever j's range: (c*q + r) / c = q + r / c and (c*q + r) % c = r % c.
  Var i("i"), j("j"), q("q");
  RangeMap r{{i.get(), {0, 3}}, {j.get(), {0, 1}}, {q.get(), {0, 1}}};
  EXPECT_EQ(ToString(Simplify((i * 2 + j + 1) % 2, r)), "((j + 1) % 2)");
  EXPECT_EQ(ToString(Simplify((i * 2 + j + 3) % 2)), "((j + 1) % 2)");
  EXPECT_EQ(ToString(Simplify((i * 6 + j + 5) / 3)), "(((i * 2) + ((j + 2) / 3)) + 1)");
  // A transposed convolution's input row for output row 2*i + q and tap
  // 2*j + (q + 1) % 2: the tile's loops i and j leave the division.
  Expr h = i * 2 + q;
  Expr row = Simplify((h - (j * 2 + (h + 1) % 2) + 1) / 2, r);
  EXPECT_EQ(ToString(row), "((i + (j * -1)) + (((q + (((q + 1) % 2) * -1)) + 1) / 2))");
  // Nothing to split off: left as it is.
  EXPECT_EQ(ToString(Simplify((j * 3 + 1) % 2)), "(((j * 3) + 1) % 2)");
  // Every rewrite agrees with floor semantics, negative values included.
  for (int64_t iv = -5; iv <= 5; ++iv) {
    for (int64_t jv = -7; jv <= 7; ++jv) {
      for (int64_t c : {2, 3, 16}) {
        Expr div = Simplify((i * (c * 3) + j * 5 - 4) / Expr(c));
        Expr mod = Simplify((i * (c * 3) + j * 5 - 4) % Expr(c));
        Expr div_at = Simplify(Substitute(div, {{i.get(), Expr(iv)}, {j.get(), Expr(jv)}}));
        Expr mod_at = Simplify(Substitute(mod, {{i.get(), Expr(iv)}, {j.get(), Expr(jv)}}));
        const int64_t x = iv * c * 3 + jv * 5 - 4;
        const int64_t floor_div = x >= 0 ? x / c : -((-x + c - 1) / c);
        EXPECT_EQ(ToString(div_at), std::to_string(floor_div)) << ToString(div) << " at i=" << iv << " j=" << jv;
        EXPECT_EQ(ToString(mod_at), std::to_string(x - floor_div * c)) << ToString(mod) << " at i=" << iv << " j=" << jv;
      }
    }
  }
}

TEST(SimplifyTest, ComparisonsAndMinMaxDecidedByRanges) {
  Var i("i");
  RangeMap r{{i.get(), {0, 9}}};
  EXPECT_EQ(ToString(Simplify(LT::Make(i, Expr(10)), r)), "true");
  EXPECT_EQ(ToString(Simplify(GE::Make(i, Expr(10)), r)), "false");
  EXPECT_EQ(ToString(Simplify(LT::Make(i, Expr(5)), r)), "(i < 5)");
  EXPECT_EQ(ToString(Simplify(min(i, Expr(20)), r)), "i");
  EXPECT_EQ(ToString(Simplify(max(i, Expr(-1)), r)), "i");
}

TEST(SimplifyTest, SelectAndLogicWithKnownConditions) {
  Var i("i");
  RangeMap r{{i.get(), {0, 9}}};
  Expr c = And::Make(GE::Make(i, Expr(0)), LT::Make(i, Expr(3)));
  EXPECT_EQ(ToString(Simplify(c, r)), "(i < 3)");
  Expr s = Select::Make(LT::Make(i, Expr(100)), i + 1, Expr(0));
  EXPECT_EQ(ToString(Simplify(s, r)), "(i + 1)");
}

TEST(SimplifyTest, StatementsDropUnitLoopsAndDecidedIfs) {
  Var i("i"), j("j");
  Buffer a = MakeBuffer("A", DataType::Int(64), {4});
  Stmt body = IfThenElse::Make(LT::Make(j, Expr(4)), Store::Make(a, j + i, {j}));
  Stmt s = For::Make(i, Expr(0), Expr(1), ForKind::kSerial,
                     For::Make(j, Expr(0), Expr(4), ForKind::kSerial, body));
  std::string text = ToString(Simplify(s));
  EXPECT_EQ(text.find("for i"), std::string::npos) << text;
  EXPECT_EQ(text.find("if"), std::string::npos) << text;
  EXPECT_NE(text.find("A[j] = j"), std::string::npos) << text;
}

TEST(SimplifyTest, BoundOfAffineExpressions) {
  Var h("h"), r("r");
  RangeMap m{{h.get(), {0, 55}}, {r.get(), {0, 2}}};
  auto b = BoundOf(h + r - 1, m);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->min, -1);
  EXPECT_EQ(b->max, 56);
  EXPECT_FALSE(BoundOf(h + Var("free"), m).has_value());
}

}  // namespace
}  // namespace tunefarm::ir
