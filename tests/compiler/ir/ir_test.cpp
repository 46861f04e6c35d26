// Loop IR: node construction, printing, visitor/mutator identity, substitution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::ir {
namespace {

TEST(IrTest, ImmediatesAdoptTheOtherOperandsType) {
  Var i("i", DataType::Int(32));
  Expr e = i + 1;
  EXPECT_EQ(e.dtype(), DataType::Int(32));
  Expr f = Load::Make(MakeBuffer("A", DataType::Float(16), {4}), {Expr(0)}) * 2.0;
  EXPECT_EQ(f.dtype(), DataType::Float(16));
}

TEST(IrTest, ComparisonsAreBool) {
  Var i("i");
  EXPECT_TRUE((LT::Make(i, Expr(3))).dtype().is_bool());
}

TEST(IrTest, PrinterShowsLoopsStoresAndBlocks) {
  Buffer a = MakeBuffer("A", DataType::Float(32), {8});
  Var i("i"), vi("vi");
  Stmt store = Store::Make(a, Load::Make(a, {vi}) + 1.0, {vi});
  Stmt block = Block::Make("A", {IterVar{vi, 8, IterKind::kSpatial, i}}, Stmt(), store);
  Stmt loop = For::Make(i, Expr(0), Expr(8), ForKind::kParallel, block);
  PrimFunc f{"inc", {a}, 0, loop};
  std::string text = ToString(f);
  EXPECT_NE(text.find("func inc(A: f32[8])"), std::string::npos) << text;
  EXPECT_NE(text.find("for i in [0, 8) parallel"), std::string::npos) << text;
  EXPECT_NE(text.find("block A(vi: 8 = i)"), std::string::npos) << text;
  EXPECT_NE(text.find("A[vi] = (A[vi] + 1f)"), std::string::npos) << text;
}

TEST(IrTest, MutatorReturnsSameNodeWhenNothingChanges) {
  Var i("i"), j("j");
  Expr e = (i * 4 + j) % 3;
  IRMutator identity;
  EXPECT_TRUE(identity.Mutate(e).same_as(e));
  Buffer a = MakeBuffer("A", DataType::Int(64), {4, 4});
  Stmt s = For::Make(i, Expr(0), Expr(4), ForKind::kSerial, Store::Make(a, e, {i, j}));
  EXPECT_TRUE(identity.Mutate(s).same_as(s));
}

TEST(IrTest, SubstituteReplacesOnlyTheGivenVariable) {
  Var i("i"), j("j"), other_i("i");
  Expr e = i + j + other_i;
  Expr r = Substitute(e, {{i.get(), Expr(5)}});
  EXPECT_EQ(ToString(r), "((5 + j) + i)");
  EXPECT_TRUE(UsesVar(r, other_i.get()));
  EXPECT_FALSE(UsesVar(r, i.get()));
}

// ExprEqual compares structure, with variables and buffers by identity: what
// pad_input's guard matching, the bounds of workload_bounds.h and the vector
// code generator's store-after-load check rely on.
TEST(IrTest, ExprEqualComparesStructureAndIdentity) {
  Var i("i"), j("j"), other_i("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {8, 8});
  Buffer b = MakeBuffer("A", DataType::Float(32), {8, 8});
  Expr guard = And::Make(GE::Make(i * 2 + 1, Expr(0)), LT::Make(j, Expr(8)));
  Expr load = Load::Make(a, {i + 1, j});
  // Rebuilt node by node: equal, though no node is shared.
  EXPECT_TRUE(ExprEqual(guard, And::Make(GE::Make(i * 2 + 1, Expr(0)), LT::Make(j, Expr(8)))));
  EXPECT_TRUE(ExprEqual(Select::Make(guard, load, Expr(0.0f)), Select::Make(guard, Load::Make(a, {i + 1, j}), Expr(0.0f))));
  // Another variable of the same name, another buffer of the same name and
  // shape, another immediate, another type, operands swapped: not equal.
  EXPECT_FALSE(ExprEqual(i + 1, other_i + 1));
  EXPECT_FALSE(ExprEqual(load, Load::Make(b, {i + 1, j})));
  EXPECT_FALSE(ExprEqual(i + 1, i + 2));
  EXPECT_FALSE(ExprEqual(Cast::Make(DataType::Int(64), i), Cast::Make(DataType::Int(32), i)));
  EXPECT_FALSE(ExprEqual(i - j, j - i));
  EXPECT_FALSE(ExprEqual(Expr(), i));
}

TEST(IrTest, SeqStmtFlattensAndUnwrapsSingletons) {
  Buffer a = MakeBuffer("A", DataType::Int(64), {2});
  Stmt s0 = Store::Make(a, Expr(1), {Expr(0)});
  Stmt s1 = Store::Make(a, Expr(2), {Expr(1)});
  EXPECT_TRUE(SeqStmt::Make({s0}).same_as(s0));
  Stmt nested = SeqStmt::Make({SeqStmt::Make({s0, s1}), s0});
  ASSERT_NE(nested.as<SeqStmt>(), nullptr);
  EXPECT_EQ(nested.as<SeqStmt>()->seq.size(), 3u);
}

TEST(IrTest, PostOrderVisitSeesChildrenFirst) {
  Var i("i");
  Buffer a = MakeBuffer("A", DataType::Int(64), {4});
  Stmt s = For::Make(i, Expr(0), Expr(4), ForKind::kSerial, Store::Make(a, i + 1, {i}));
  std::vector<IRNodeKind> kinds;
  PostOrderVisit(s, [&](const IRNode* n) { kinds.push_back(n->kind); });
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), IRNodeKind::kFor);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), IRNodeKind::kStore), 1);
}

TEST(IrTest, DataTypeNamesRoundTrip) {
  for (const char* name : {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool"}) {
    auto t = DataType::Parse(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->ToString(), name);
  }
  EXPECT_FALSE(DataType::Parse("f7").has_value());
  EXPECT_EQ(DataType::Float(32, 16).ToString(), "f32x16");
}

TEST(IrTest, MinAndMaxValuesAreReductionIdentities) {
  EXPECT_EQ(*AsConstInt(MinValue(DataType::Int(8))), -128);
  EXPECT_EQ(*AsConstInt(MaxValue(DataType::Int(32))), 2147483647);
  EXPECT_EQ(*AsConstInt(MaxValue(DataType::UInt(8))), 255);
  EXPECT_TRUE(std::isinf(MinValue(DataType::Float(32)).as<FloatImm>()->value));
}

}  // namespace
}  // namespace tunefarm::ir
