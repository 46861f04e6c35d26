// Every expression kind through the LLVM code generator, compared with the
// interpreter, in each loop form that changes how expressions are emitted:
// scalar (serial), widened (vectorized), outlined (parallel) and unrolled.
#include <functional>

#include "../codegen_test_util.h"

namespace tunefarm {
namespace {

using namespace ir;  // NOLINT
using testing::MatchesInterpreter;

enum class Mode { kSerial, kVectorized, kParallel, kUnrolled };

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kSerial: return "serial";
    case Mode::kVectorized: return "vectorized";
    case Mode::kParallel: return "parallel";
    case Mode::kUnrolled: return "unrolled";
  }
  return "?";
}

using ExprFn = std::function<Expr(const std::vector<Expr>&)>;

struct ExprCase {
  std::string name;
  std::vector<DataType> inputs;
  DataType output;
  ExprFn fn;
  double tolerance = 1e-4;
};

constexpr int64_t kN = 64;
constexpr int64_t kLanes = 16;

// out[i] = fn(in0[i], in1[i], ...), i = io * 16 + ii, with the loop kind under test on io or ii.
PrimFunc Elementwise(const ExprCase& c, Mode mode) {
  PrimFunc f;
  f.name = "expr_" + c.name;
  std::vector<Expr> loads;
  Var io("io"), ii("ii");
  Expr i = io * Expr(kLanes) + ii;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    Buffer b = MakeBuffer("in" + std::to_string(k), c.inputs[k], {kN});
    f.params.push_back(b);
    loads.push_back(Load::Make(b, {i}));
  }
  f.num_inputs = f.params.size();
  Buffer out = MakeBuffer("out", c.output, {kN});
  f.params.push_back(out);
  Stmt store = Store::Make(out, Cast::Make(c.output, c.fn(loads)), {i});
  ForKind inner = mode == Mode::kVectorized ? ForKind::kVectorized
                  : mode == Mode::kUnrolled ? ForKind::kUnrolled
                                            : ForKind::kSerial;
  ForKind outer = mode == Mode::kParallel ? ForKind::kParallel : ForKind::kSerial;
  f.body = For::Make(io, Expr(0), Expr(kN / kLanes), outer, For::Make(ii, Expr(0), Expr(kLanes), inner, store));
  return f;
}

DataType F32 = DataType::Float(32), F16 = DataType::Float(16), F64 = DataType::Float(64);
DataType I32 = DataType::Int(32), I8 = DataType::Int(8), U8 = DataType::UInt(8), I64 = DataType::Int(64);
DataType B1 = DataType::Bool();

Expr C(DataType t, double v) { return MakeConst(t, v); }
// A divisor that is never zero: y, or 3 where y == 0.
Expr NonZero(const Expr& y) { return Select::Make(EQ::Make(y, C(y.dtype(), 0)), C(y.dtype(), 3), y); }
Expr Call1(CallOp op, Expr x) { return Call::Make(op, {std::move(x)}); }
Expr Abs(Expr x) { return Call1(CallOp::kAbs, std::move(x)); }

std::vector<ExprCase> Cases() {
  std::vector<ExprCase> cs = {
      {"add_f32", {F32, F32}, F32, [](auto& v) { return v[0] + v[1]; }},
      {"sub_f32", {F32, F32}, F32, [](auto& v) { return v[0] - v[1]; }},
      {"mul_f32", {F32, F32}, F32, [](auto& v) { return v[0] * v[1]; }},
      {"div_f32", {F32, F32}, F32, [](auto& v) { return v[0] / (Abs(v[1]) + C(F32, 0.5)); }},
      {"mod_f32", {F32}, F32, [](auto& v) { return v[0] % C(F32, 0.375); }},
      {"min_max_f32", {F32, F32}, F32, [](auto& v) { return min(v[0], v[1]) + max(v[0], v[1]) * C(F32, 2); }},
      {"fma_f32", {F32, F32, F32}, F32, [](auto& v) { return v[0] * v[1] + v[2]; }},
      {"select_f32", {F32, F32}, F32, [](auto& v) { return Select::Make(LT::Make(v[0], v[1]), v[0], v[1] * C(F32, 2)); }},
      {"compare_f32", {F32, F32}, I32, [](auto& v) {
         auto c = [](Expr b) { return Cast::Make(I32, b); };
         return c(LT::Make(v[0], v[1])) + c(LE::Make(v[0], C(F32, 0))) * C(I32, 2) +
                c(GT::Make(v[0], v[1])) * C(I32, 4) + c(GE::Make(v[1], C(F32, 0))) * C(I32, 8) +
                c(EQ::Make(v[0], v[0])) * C(I32, 16) + c(NE::Make(v[0], v[1])) * C(I32, 32);
       }},
      {"compare_i32", {I32, I32}, I32, [](auto& v) {
         auto c = [](Expr b) { return Cast::Make(I32, b); };
         return c(LT::Make(v[0], v[1])) + c(LE::Make(v[0], v[1])) * C(I32, 2) + c(GT::Make(v[0], v[1])) * C(I32, 4) +
                c(GE::Make(v[0], v[1])) * C(I32, 8) + c(EQ::Make(v[0], v[1])) * C(I32, 16) +
                c(NE::Make(v[0], v[1])) * C(I32, 32);
       }},
      {"logic", {I32, I32}, I32, [](auto& v) {
         Expr p = LT::Make(v[0], v[1]), q = GT::Make(v[0], C(I32, 0));
         return Select::Make(Or::Make(And::Make(p, Not::Make(q)), EQ::Make(v[1], C(I32, 2))), C(I32, 5), C(I32, -7));
       }},
      {"arith_i32", {I32, I32}, I32, [](auto& v) { return (v[0] + v[1]) * v[1] - min(v[0], v[1]) + max(v[0], C(I32, 1)); }},
      {"floordiv_i32", {I32, I32}, I32, [](auto& v) {
         return v[0] / NonZero(v[1]) * C(I32, 1000) + v[0] / C(I32, 3) * C(I32, 100) + v[0] / C(I32, -3) * C(I32, 10) +
                (v[0] * C(I32, 7)) / C(I32, 4);
       }},
      {"floormod_i32", {I32, I32}, I32, [](auto& v) {
         return v[0] % NonZero(v[1]) * C(I32, 1000) + v[0] % C(I32, 3) * C(I32, 100) + v[0] % C(I32, -3) * C(I32, 10) +
                (v[0] * C(I32, 7)) % C(I32, 4);
       }},
      {"floordiv_i64", {I64, I64}, I64, [](auto& v) { return v[0] / NonZero(v[1]) * C(I64, 100) + v[0] % NonZero(v[1]); }},
      {"wrap_i8", {I8, I8}, I8, [](auto& v) { return v[0] * v[1] * C(I8, 5) + C(I8, 100); }},
      {"uint8", {U8, U8}, U8, [](auto& v) { return v[0] * C(U8, 30) - v[1] + v[0] / (v[1] + C(U8, 1)); }},
      {"exp_log", {F32}, F32, [](auto& v) { return Call1(CallOp::kExp, v[0]) + Call1(CallOp::kLog, Abs(v[0]) + C(F32, 0.1)); }},
      {"sqrt_rsqrt", {F32}, F32, [](auto& v) {
         return Call1(CallOp::kSqrt, Abs(v[0])) + Call1(CallOp::kRsqrt, Abs(v[0]) + C(F32, 0.1));
       }},
      {"tanh_sigmoid_erf", {F32}, F32, [](auto& v) {
         Expr x = v[0] * C(F32, 3);
         return Call1(CallOp::kTanh, x) + Call1(CallOp::kSigmoid, x) * C(F32, 2) + Call1(CallOp::kErf, x) * C(F32, 4);
       }},
      {"pow_floor_ceil", {F32, F32}, F32, [](auto& v) {
         Expr x = v[0] * C(F32, 4);
         return Call::Make(CallOp::kPow, {Abs(v[0]) + C(F32, 0.1), v[1]}) + Call1(CallOp::kFloor, x) * C(F32, 10) +
                Call1(CallOp::kCeil, x) * C(F32, 100);
       }},
      {"abs_int", {I32}, I32, [](auto& v) { return Abs(v[0]); }},
      {"cast_f32_i32", {F32, I32}, F32, [](auto& v) {
         return Cast::Make(F32, Cast::Make(I32, v[0] * C(F32, 100))) + Cast::Make(F32, v[1]);
       }},
      // f16 sums may be contracted into one rounding where the interpreter rounds twice.
      {"cast_f16", {F16, F32}, F16, [](auto& v) { return v[0] * Cast::Make(F16, v[1]) + C(F16, 0.5); }, 2e-3},
      {"cast_f16_to_f32", {F16}, F32, [](auto& v) { return Cast::Make(F32, v[0]) * C(F32, 3); }},
      {"cast_i8", {I32, I8}, I32, [](auto& v) { return Cast::Make(I32, Cast::Make(I8, v[0] * C(I32, 40))) + Cast::Make(I32, v[1]); }},
      {"cast_i8_f32", {I8, F32}, F32, [](auto& v) {
         return Cast::Make(F32, v[0]) + Cast::Make(F32, Cast::Make(I8, v[1] * C(F32, 100)));
       }},
      {"cast_u8_f32", {F32}, F32, [](auto& v) { return Cast::Make(F32, Cast::Make(U8, Abs(v[0]) * C(F32, 200))); }},
      {"cast_bool", {I32, F32, B1}, I32, [](auto& v) {
         return Cast::Make(I32, Cast::Make(B1, v[0])) + Cast::Make(I32, Cast::Make(B1, v[1])) * C(I32, 2) +
                Cast::Make(I32, v[2]) * C(I32, 4) + Cast::Make(I32, Cast::Make(F32, v[2]) * C(F32, 8));
       }},
      {"bool_out", {I32, I32}, B1, [](auto& v) { return LT::Make(v[0], v[1]); }},
      {"f64", {F32, F64}, F64, [](auto& v) { return Cast::Make(F64, v[0]) * v[1] + Call1(CallOp::kExp, v[1]); }},
  };
  return cs;
}

class CodegenExprTest : public ::testing::TestWithParam<std::tuple<ExprCase, Mode>> {};

TEST_P(CodegenExprTest, MatchesInterpreter) {
  const auto& [c, mode] = GetParam();
  PrimFunc f = Elementwise(c, mode);
  EXPECT_TRUE(MatchesInterpreter(f, {11, 12, 13}, c.tolerance, c.tolerance)) << c.name << " " << ModeName(mode);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, CodegenExprTest,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::Values(Mode::kSerial, Mode::kVectorized, Mode::kParallel,
                                                              Mode::kUnrolled)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_" + ModeName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace tunefarm
