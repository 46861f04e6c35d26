// The reference interpreter on hand-written loop nests with known answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"

namespace tunefarm {
namespace {

using namespace ir;

PrimFunc MatmulFunc(int64_t n) {
  Buffer a = MakeBuffer("A", DataType::Float(32), {n, n});
  Buffer b = MakeBuffer("B", DataType::Float(32), {n, n});
  Buffer c = MakeBuffer("C", DataType::Float(32), {n, n});
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Stmt init = Store::Make(c, Expr(0.0), {vi, vj});
  Stmt update = Store::Make(c, Load::Make(c, {vi, vj}) + Load::Make(a, {vi, vk}) * Load::Make(b, {vk, vj}), {vi, vj});
  Stmt block = Block::Make("C",
                           {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vj, n, IterKind::kSpatial, j},
                            IterVar{vk, n, IterKind::kReduce, k}},
                           init, update);
  Stmt nest = For::Make(i, Expr(0), Expr(n), ForKind::kSerial,
                        For::Make(j, Expr(0), Expr(n), ForKind::kSerial,
                                  For::Make(k, Expr(0), Expr(n), ForKind::kSerial, block)));
  return PrimFunc{"matmul", {a, b, c}, 2, nest};
}

TEST(InterpreterTest, MatmulMatchesDirectComputation) {
  const int64_t n = 9;
  PrimFunc f = MatmulFunc(n);
  HostBuffer a(DataType::Float(32), {n, n}), b(DataType::Float(32), {n, n}), c(DataType::Float(32), {n, n});
  std::mt19937_64 rng(1);
  a.FillRandom(rng);
  b.FillRandom(rng);
  c.SetFromDouble(0, 1234.0);  // init must overwrite stale contents
  ASSERT_TRUE(Interpret(f, {&a, &b, &c}).ok());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float expect = 0;
      for (int64_t k = 0; k < n; ++k) expect += a.as<float>()[i * n + k] * b.as<float>()[k * n + j];
      EXPECT_NEAR(c.as<float>()[i * n + j], expect, 1e-5) << i << "," << j;
    }
  }
}

TEST(InterpreterTest, BlockLoweringPreservesResults) {
  const int64_t n = 7;
  PrimFunc f = MatmulFunc(n);
  auto lowered = LowerForCodegen(f);
  ASSERT_TRUE(lowered.ok());
  HostBuffer a(DataType::Float(32), {n, n}), b(DataType::Float(32), {n, n});
  HostBuffer c0(DataType::Float(32), {n, n}), c1(DataType::Float(32), {n, n});
  std::mt19937_64 rng(2);
  a.FillRandom(rng);
  b.FillRandom(rng);
  ASSERT_TRUE(Interpret(f, {&a, &b, &c0}).ok());
  ASSERT_TRUE(Interpret(*lowered, {&a, &b, &c1}).ok());
  CompareResult cmp = CompareBuffers(c1, c0, 0, 0);
  EXPECT_TRUE(cmp.equal) << cmp.message;
  // The reduction loop is innermost: the init moves in front of it, unguarded.
  std::string text = ToString(*lowered);
  EXPECT_EQ(text.find("if "), std::string::npos) << text;
  EXPECT_EQ(text.find("block"), std::string::npos) << text;
}

TEST(InterpreterTest, ReductionOutsideSpatialLoopGetsItsOwnInitNest) {
  const int64_t n = 5;
  Buffer a = MakeBuffer("A", DataType::Float(32), {n, n});
  Buffer s = MakeBuffer("S", DataType::Float(32), {n});
  Var i("i"), k("k"), vi("vi"), vk("vk");
  Stmt block = Block::Make("S", {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vk, n, IterKind::kReduce, k}},
                           Store::Make(s, Expr(0.0), {vi}),
                           Store::Make(s, Load::Make(s, {vi}) + Load::Make(a, {vi, vk}), {vi}));
  // k outside i: the init runs as its own loop over i, in front of the k loop.
  Stmt nest = For::Make(k, Expr(0), Expr(n), ForKind::kSerial, For::Make(i, Expr(0), Expr(n), ForKind::kSerial, block));
  PrimFunc f{"rowsum", {a, s}, 1, nest};
  auto lowered = LowerForCodegen(f);
  ASSERT_TRUE(lowered.ok());
  EXPECT_NE(ToString(*lowered).find("for i_init in [0, 5)"), std::string::npos) << ToString(*lowered);
  EXPECT_EQ(ToString(*lowered).find("if "), std::string::npos) << ToString(*lowered);
  HostBuffer ab(DataType::Float(32), {n, n}), s0(DataType::Float(32), {n}), s1(DataType::Float(32), {n});
  std::mt19937_64 rng(3);
  ab.FillRandom(rng);
  ASSERT_TRUE(Interpret(f, {&ab, &s0}).ok());
  ASSERT_TRUE(Interpret(*lowered, {&ab, &s1}).ok());
  for (int64_t r = 0; r < n; ++r) {
    double expect = 0;
    for (int64_t c = 0; c < n; ++c) expect += ab.GetAsDouble(r * n + c);
    EXPECT_NEAR(s0.GetAsDouble(r), expect, 1e-5);
  }
  EXPECT_TRUE(CompareBuffers(s1, s0, 0, 0).equal);
}

TEST(InterpreterTest, ReductionSplitByANonReductionStatementKeepsAGuardedInit) {
  const int64_t n = 4;
  Buffer a = MakeBuffer("A", DataType::Float(32), {n, n});
  Buffer s = MakeBuffer("S", DataType::Float(32), {n});
  Var i("i"), k("k"), vi("vi"), vk("vk");
  // The reduction loop k sits above the spatial loop i but the nest under it
  // also holds a second block that reads S, so the init cannot move out: it
  // stays guarded.
  Stmt block = Block::Make("S", {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vk, n, IterKind::kReduce, k}},
                           Store::Make(s, Expr(0.0), {vi}),
                           Store::Make(s, Load::Make(s, {vi}) + Load::Make(a, {vi, vk}), {vi}));
  Var j("j"), vj("vj");
  Buffer t = MakeBuffer("T", DataType::Float(32), {n});
  Stmt other =
      Block::Make("T", {IterVar{vj, n, IterKind::kSpatial, j}}, Stmt(), Store::Make(t, Load::Make(s, {vj}), {vj}));
  Stmt nest = For::Make(k, Expr(0), Expr(n), ForKind::kSerial,
                        SeqStmt::Make({For::Make(i, Expr(0), Expr(n), ForKind::kSerial, block),
                                       For::Make(j, Expr(0), Expr(n), ForKind::kSerial, other)}));
  PrimFunc f{"guarded", {a, s, t}, 1, nest};
  auto lowered = LowerForCodegen(f);
  ASSERT_TRUE(lowered.ok());
  EXPECT_NE(ToString(*lowered).find("if (k == 0)"), std::string::npos) << ToString(*lowered);
  HostBuffer ab(DataType::Float(32), {n, n}), s0(DataType::Float(32), {n}), s1(DataType::Float(32), {n});
  HostBuffer t0(DataType::Float(32), {n}), t1(DataType::Float(32), {n});
  std::mt19937_64 rng(4);
  ab.FillRandom(rng);
  ASSERT_TRUE(Interpret(f, {&ab, &s0, &t0}).ok());
  ASSERT_TRUE(Interpret(*lowered, {&ab, &s1, &t1}).ok());
  EXPECT_TRUE(CompareBuffers(s1, s0, 0, 0).equal);
  EXPECT_TRUE(CompareBuffers(t1, t0, 0, 0).equal);
}

TEST(InterpreterTest, OutOfBoundsAccessIsAnErrorNamingTheBuffer) {
  Buffer a = MakeBuffer("A", DataType::Float(32), {4});
  Var i("i");
  Stmt s = For::Make(i, Expr(0), Expr(5), ForKind::kSerial, Store::Make(a, Expr(1.0), {i}));
  HostBuffer buf(DataType::Float(32), {4});
  Status st = Interpret(PrimFunc{"oob", {a}, 0, s}, {&buf});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("A"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("index 4"), std::string::npos) << st.message();
}

TEST(InterpreterTest, SelectEvaluatesOnlyTheChosenBranch) {
  Buffer a = MakeBuffer("A", DataType::Float(32), {4});
  Buffer out = MakeBuffer("out", DataType::Float(32), {6});
  Var i("i");
  // out[i] = i >= 1 && i <= 4 ? A[i - 1] : 0   (a padded copy)
  Expr in_range = And::Make(GE::Make(i, Expr(1)), LE::Make(i, Expr(4)));
  Stmt s = For::Make(i, Expr(0), Expr(6), ForKind::kSerial,
                     Store::Make(out, Select::Make(in_range, Load::Make(a, {i - 1}), Expr(0.0)), {i}));
  HostBuffer ab(DataType::Float(32), {4}), ob(DataType::Float(32), {6});
  for (int k = 0; k < 4; ++k) ab.SetFromDouble(k, k + 1);
  ASSERT_TRUE(Interpret(PrimFunc{"pad", {a, out}, 1, s}, {&ab, &ob}).ok());
  std::vector<double> expect = {0, 1, 2, 3, 4, 0};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(ob.GetAsDouble(k), expect[k]);
}

TEST(InterpreterTest, IntegerArithmeticWrapsAndFloorsLikeCompiledCode) {
  Buffer out = MakeBuffer("out", DataType::Int(8), {4});
  Var x("x", DataType::Int(8));
  Expr i8_100 = IntImm::Make(DataType::Int(8), 100);
  Stmt s = SeqStmt::Make({
      Store::Make(out, i8_100 + i8_100, {Expr(0)}),                                              // wraps to -56
      Store::Make(out, IntImm::Make(DataType::Int(8), -7) / IntImm::Make(DataType::Int(8), 2), {Expr(1)}),  // floor: -4
      Store::Make(out, IntImm::Make(DataType::Int(8), -7) % IntImm::Make(DataType::Int(8), 2), {Expr(2)}),  // floor: 1
      Store::Make(out, Cast::Make(DataType::Int(8), Expr(3.9)), {Expr(3)}),                      // truncates: 3
  });
  HostBuffer ob(DataType::Int(8), {4});
  ASSERT_TRUE(Interpret(PrimFunc{"ints", {out}, 0, s}, {&ob}).ok());
  EXPECT_EQ(ob.GetAsDouble(0), -56);
  EXPECT_EQ(ob.GetAsDouble(1), -4);
  EXPECT_EQ(ob.GetAsDouble(2), 1);
  EXPECT_EQ(ob.GetAsDouble(3), 3);
}

TEST(InterpreterTest, HalfPrecisionRoundsEveryOperation) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f)), 1.0f);
  EXPECT_EQ(HalfToFloat(FloatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 1.0f / 4096)), 1.0f);  // below half's resolution
  EXPECT_EQ(HalfToFloat(FloatToHalf(5.96046448e-08f)), 5.96046448e-08f);  // smallest subnormal
}

TEST(InterpreterTest, ArgumentMismatchIsReported) {
  PrimFunc f = MatmulFunc(4);
  HostBuffer a(DataType::Float(32), {4, 4}), wrong(DataType::Float(32), {5, 4});
  Status st = Interpret(f, {&a, &wrong, &a});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("parameter B"), std::string::npos) << st.message();
  EXPECT_FALSE(Interpret(f, {&a}).ok());
}

}  // namespace
}  // namespace tunefarm
