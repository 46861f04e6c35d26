// Inline float pow: x^y = 2^(y log2 |x|) in double arithmetic, rounded to
// float once at the end, then C's special cases.
//
// Why double: in float, the error of log2 |x| is multiplied by y, and an
// exponent y log2 |x| of 100 off by one float ULP is a result off by 2^-17,
// 100 float ULP. In double the exponent is good to about 1e-14 relative, so
// the float result is within 0.5 ULP (plus 1e-11) wherever it is finite,
// subnormal results included (the final rounding to float is the only one
// that reaches them). A vector of doubles costs twice the registers of one
// of floats; pow is rare in the kernels tunefarm tunes, so accuracy wins.
//
//   log2 m = 2 atanh(s) / ln 2, s = (m - 1) / (m + 1), m in [sqrt(1/2), sqrt(2)),
//   so |s| <= 0.172 and the series in s^2 is done after 8 terms;
//   2^t = 2^n e^(g), g = (t - n) ln 2, |g| <= 0.347: Taylor to degree 10.
// n is taken from the low bits of t + 1.5 * 2^52 (no float-to-int64
// conversion, which x86 has only with AVX-512DQ).
#include <llvm/IR/Constants.h>

#include <limits>

#include "codegen_llvm_math.h"

namespace tunefarm::codegen {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kRoundMagicF64 = 6755399441055744.0;  // 1.5 * 2^52
// |y log2 |x|| past this is 0 or inf in float whatever the rounding.
constexpr double kMaxExponent = 200.0;

// log2 |x| for x of type double (vector): -inf at 0, inf at inf.
llvm::Value* Log2(MathEmitter& d, llvm::Value* ax) {
  auto& b = d.b;
  llvm::Value* bits = d.Bits(ax);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, d.I(52)), d.I(1023));  // ax >= 0: no sign bit
  llvm::Value* m = d.Float(b.CreateOr(b.CreateAnd(bits, d.I(0x000fffffffffffffLL)), d.I(0x3ff0000000000000LL)));
  llvm::Value* high = b.CreateFCmpOGT(m, d.F(1.41421356237309505));
  m = b.CreateSelect(high, b.CreateFMul(m, d.F(0.5)), m);
  e = b.CreateAdd(e, b.CreateZExt(high, d.int_type));
  // e is within [-1075, 1024]: int32 converts to double on every target.
  llvm::Value* ed = b.CreateSIToFP(b.CreateTrunc(e, WithLanesOf(b.getInt32Ty(), d.type)), d.type);
  llvm::Value* s = b.CreateFDiv(b.CreateFSub(m, d.F(1.0)), b.CreateFAdd(m, d.F(1.0)));
  llvm::Value* s2 = b.CreateFMul(s, s);
  llvm::Value* series = d.Poly(s2, {2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3, 2.0});
  llvm::Value* l = d.MulAdd(b.CreateFMul(s, series), d.F(1.44269504088896341), ed);
  l = b.CreateSelect(b.CreateFCmpOEQ(ax, d.F(0.0)), d.F(-kInf), l);
  return b.CreateSelect(b.CreateFCmpOEQ(ax, d.F(kInf)), d.F(kInf), l);
}

// 2^t for t of type double (vector), t clamped to +-kMaxExponent (NaN to the top).
llvm::Value* Exp2(MathEmitter& d, llvm::Value* t) {
  auto& b = d.b;
  t = b.CreateSelect(b.CreateFCmpOLT(t, d.F(kMaxExponent)), t, d.F(kMaxExponent));
  t = b.CreateSelect(b.CreateFCmpOGT(t, d.F(-kMaxExponent)), t, d.F(-kMaxExponent));
  llvm::Value* sum = b.CreateFAdd(t, d.F(kRoundMagicF64));
  llvm::Value* n = b.CreateFSub(sum, d.F(kRoundMagicF64));
  llvm::Value* ni = b.CreateSub(d.Bits(sum), d.Bits(d.F(kRoundMagicF64)));
  llvm::Value* g = b.CreateFMul(b.CreateFSub(t, n), d.F(0.693147180559945309));
  llvm::Value* q = d.Poly(g, {1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24,
                              1.0 / 6, 0.5, 1.0, 1.0});
  // |n| <= 200: 2^n is a normal double.
  llvm::Value* scale = d.Float(b.CreateShl(b.CreateAdd(ni, d.I(1023)), d.I(52)));
  return b.CreateFMul(q, scale);
}

}  // namespace

llvm::Value* EmitPowF32(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  MathEmitter m(b, x->getType());
  llvm::Type* f64 = WithLanesOf(b.getDoubleTy(), x->getType());
  MathEmitter d(b, f64);
  llvm::Value* ax = b.CreateFPExt(m.Abs(x), f64);
  llvm::Value* yd = b.CreateFPExt(y, f64);
  llvm::Value* r = b.CreateFPTrunc(Exp2(d, b.CreateFMul(yd, Log2(d, ax))), x->getType());

  // Whether y is an integer, and an odd one: every float of magnitude 2^24
  // or more is an even integer (so are the infinities); below, y converts.
  llvm::Value* ay = m.Abs(y);
  llvm::Value* y_big = b.CreateFCmpUGE(ay, m.F(16777216.0));  // or NaN
  llvm::Value* yi = b.CreateFPToSI(b.CreateSelect(y_big, m.F(0.0), y), m.int_type);
  llvm::Value* y_small_int = b.CreateAnd(b.CreateNot(y_big), b.CreateFCmpOEQ(b.CreateSIToFP(yi, m.type), y));
  llvm::Value* y_int = b.CreateOr(y_big, y_small_int);
  llvm::Value* y_odd = b.CreateAnd(y_small_int, b.CreateTrunc(yi, y_big->getType()));

  // Negative x (-0 and -inf included) to an odd power is negative.
  llvm::Value* x_neg = b.CreateICmpSLT(m.Bits(x), m.I(0));
  r = b.CreateSelect(b.CreateAnd(x_neg, y_odd), b.CreateFNeg(r), r);
  // A finite negative x to a non-integer power is NaN; NaN in, NaN out...
  llvm::Value* finite_negative = b.CreateAnd(b.CreateFCmpOLT(x, m.F(0.0)), b.CreateFCmpOGT(x, m.F(-kInf)));
  r = b.CreateSelect(b.CreateAnd(finite_negative, b.CreateNot(y_int)), m.F(kNaN), r);
  r = b.CreateSelect(b.CreateOr(b.CreateFCmpUNO(x, x), b.CreateFCmpUNO(y, y)), m.F(kNaN), r);
  // ...except pow(+-1, +-inf) = 1, and pow(x, +-0) = pow(1, y) = 1 for any x and y, NaN too.
  r = b.CreateSelect(b.CreateAnd(b.CreateFCmpOEQ(m.Abs(x), m.F(1.0)), b.CreateFCmpOEQ(ay, m.F(kInf))), m.F(1.0), r);
  return b.CreateSelect(b.CreateOr(b.CreateFCmpOEQ(y, m.F(0.0)), b.CreateFCmpOEQ(x, m.F(1.0))), m.F(1.0), r);
}

}  // namespace tunefarm::codegen
