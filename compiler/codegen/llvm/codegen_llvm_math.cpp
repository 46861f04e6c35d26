// Inline float math: exp, log, sigmoid, tanh and erf as LLVM IR.
//
// Why not a vector math library. LLVM 16 can map vector math to glibc's
// libmvec through TargetLibraryInfo (-vector-library=LIBMVEC-X86, the
// replace-with-veclib pass in the backend), but its table (VecFuncs.def)
// holds only sin, cos, exp, log and pow, at 2/4 doubles and 4/8 floats: no
// erf or tanh (Debian 12's libmvec exports _ZGV*_erff and _ZGV*_tanhf since
// glibc 2.35, LLVM 16 does not know them), no 16-float AVX-512 forms, no
// odd lane counts. It is x86-only (aarch64's libmvec came with glibc 2.38),
// the JIT would have to resolve the _ZGV symbols, and objects built for the
// fleet would depend on the workers' glibc. A polynomial in IR has none of
// those limits: every lane count, every target (objects for aarch64 hold no
// math symbol), results independent of the C library, and LLVM schedules
// it with the loop body around it. Scalar code gets the same form, so a
// kernel's results do not depend on which loops were vectorized.
//
// The algorithms are the classic ones (Cephes, as Eigen and XNNPACK use them):
// Cody-Waite range reduction and a minimax polynomial; erf's polynomials were
// fitted for this file (Chebyshev fits in 40-digit arithmetic). Clamps are
// written as `select(x < hi, x, hi)`, which sends NaN to the bound (no
// poison from fptosi; on x86 it is one minps); NaN is put back by a final
// select.
#include "codegen_llvm_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <limits>

namespace tunefarm::codegen {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// exp: inputs past these give inf and 0; inside, 2^n stays in [2^-150, 2^128].
constexpr double kExpHi = 89.0;
constexpr double kExpLo = -104.0;
// Adding 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer.
constexpr double kRoundMagicF32 = 12582912.0;
// ln 2 in two parts (Cephes): n * kLn2Hi is exact for |n| < 2^9.
constexpr double kLn2Hi = 0.693359375;
constexpr double kLn2Lo = -2.12194440e-4;

}  // namespace

llvm::Type* WithLanesOf(llvm::Type* element, llvm::Type* like) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like);
  return vt == nullptr ? element : llvm::FixedVectorType::get(element, vt->getNumElements());
}

MathEmitter::MathEmitter(llvm::IRBuilder<>& builder, llvm::Type* t)
    : b(builder), type(t), int_type(WithLanesOf(builder.getIntNTy(t->getScalarSizeInBits()), t)) {}

llvm::Value* MathEmitter::F(double v) const { return llvm::ConstantFP::get(type, v); }
llvm::Value* MathEmitter::I(int64_t v) const { return llvm::ConstantInt::get(int_type, uint64_t(v), true); }

llvm::Value* MathEmitter::MulAdd(llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type}, {x, y, z});
}

llvm::Value* MathEmitter::Poly(llvm::Value* x, std::initializer_list<double> coeffs) {
  const double* c = coeffs.begin();
  llvm::Value* p = F(*c);
  for (++c; c != coeffs.end(); ++c) p = MulAdd(p, x, F(*c));
  return p;
}

llvm::Value* MathEmitter::Abs(llvm::Value* x) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
llvm::Value* MathEmitter::CopySign(llvm::Value* magnitude, llvm::Value* sign) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
}
llvm::Value* MathEmitter::Bits(llvm::Value* x) { return b.CreateBitCast(x, int_type); }
llvm::Value* MathEmitter::Float(llvm::Value* i) { return b.CreateBitCast(i, type); }

// e^x = 2^n * e^r, n = round(x / ln 2), |r| <= ln 2 / 2; e^r = 1 + r + r^2 P(r).
// 2^n is applied as two factors 2^(n/2) and 2^(n - n/2), each a normal
// float, so results near overflow and in the subnormal range are rounded
// once, at the last multiplication.
llvm::Value* EmitExpF32(MathEmitter& m, llvm::Value* x) {
  auto& b = m.b;
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOLT(x, m.F(kExpHi)), x, m.F(kExpHi));
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, m.F(kExpLo)), xc, m.F(kExpLo));
  llvm::Value* n = b.CreateFSub(m.MulAdd(xc, m.F(1.44269504088896341), m.F(kRoundMagicF32)), m.F(kRoundMagicF32));
  llvm::Value* r = m.MulAdd(n, m.F(-kLn2Hi), xc);
  r = m.MulAdd(n, m.F(-kLn2Lo), r);
  llvm::Value* p = m.Poly(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                              5.0000001201e-1});
  p = b.CreateFAdd(m.MulAdd(p, b.CreateFMul(r, r), r), m.F(1.0));
  llvm::Value* ni = b.CreateFPToSI(n, m.int_type);
  llvm::Value* n1 = b.CreateAShr(ni, m.I(1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* k) { return m.Float(b.CreateShl(b.CreateAdd(k, m.I(127)), m.I(23))); };
  llvm::Value* result = b.CreateFMul(b.CreateFMul(p, pow2(n1)), pow2(n2));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

namespace {

// log x = e ln 2 + log(1 + f), x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2));
// log(1 + f) = f - f^2 / 2 + f^3 P(f) (Cephes logf). Subnormal inputs are
// scaled by 2^23 first.
llvm::Value* EmitLogF32(MathEmitter& m, llvm::Value* x) {
  auto& b = m.b;
  llvm::Value* subnormal = b.CreateFCmpOLT(x, m.F(0x1p-126));
  llvm::Value* xn = b.CreateSelect(subnormal, b.CreateFMul(x, m.F(0x1p23)), x);
  llvm::Value* bits = m.Bits(xn);
  // Exponent and mantissa in [1/2, 1): x = 2^e * mant.
  llvm::Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, m.I(23)), m.I(0xff)), m.I(126));
  e = b.CreateSub(e, b.CreateSelect(subnormal, m.I(23), m.I(0)));
  llvm::Value* mant = m.Float(b.CreateOr(b.CreateAnd(bits, m.I(0x007fffff)), m.I(0x3f000000)));
  llvm::Value* low = b.CreateFCmpOLT(mant, m.F(0.707106781186547524));
  // mant + mant - 1 and mant - 1 are exact (Sterbenz).
  llvm::Value* f = b.CreateFSub(b.CreateSelect(low, b.CreateFAdd(mant, mant), mant), m.F(1.0));
  llvm::Value* ef = b.CreateSIToFP(b.CreateSub(e, b.CreateZExt(low, m.int_type)), m.type);
  llvm::Value* z = b.CreateFMul(f, f);
  llvm::Value* p = m.Poly(f, {7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                              -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1});
  llvm::Value* y = b.CreateFMul(b.CreateFMul(p, f), z);
  y = m.MulAdd(ef, m.F(kLn2Lo), y);
  y = m.MulAdd(z, m.F(-0.5), y);
  llvm::Value* r = m.MulAdd(ef, m.F(kLn2Hi), b.CreateFAdd(f, y));
  r = b.CreateSelect(b.CreateFCmpOEQ(x, m.F(kInf)), x, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, m.F(0.0)), m.F(-kInf), r);
  return b.CreateSelect(b.CreateFCmpULT(x, m.F(0.0)), m.F(kNaN), r);  // negative or NaN
}

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: e^-|x| never
// overflows, so results down to the subnormal range keep their precision.
llvm::Value* EmitSigmoidF32(MathEmitter& m, llvm::Value* x) {
  auto& b = m.b;
  llvm::Value* e = EmitExpF32(m, b.CreateFNeg(m.Abs(x)));
  llvm::Value* numerator = b.CreateSelect(b.CreateFCmpOLT(x, m.F(0.0)), e, m.F(1.0));
  return b.CreateFDiv(numerator, b.CreateFAdd(m.F(1.0), e));
}

// tanh |x| = |x| + |x|^3 P(x^2) below 0.625 (Cephes tanhf), else
// 1 - 2 / (e^(2|x|) + 1) (exact 1 once e^(2|x|) overflows); the sign of x
// is copied last, so tanh(-0) = -0.
llvm::Value* EmitTanhF32(MathEmitter& m, llvm::Value* x) {
  auto& b = m.b;
  llvm::Value* a = m.Abs(x);
  llvm::Value* z = b.CreateFMul(a, a);
  llvm::Value* p =
      m.Poly(z, {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1});
  llvm::Value* near_zero = m.MulAdd(b.CreateFMul(p, z), a, a);
  llvm::Value* e = EmitExpF32(m, b.CreateFAdd(a, a));
  llvm::Value* far = b.CreateFSub(m.F(1.0), b.CreateFDiv(m.F(2.0), b.CreateFAdd(e, m.F(1.0))));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(a, m.F(0.625)), near_zero, far);  // NaN: far, NaN
  return m.CopySign(r, x);
}

// erf |x| = |x| P(x^2) below 0.921875; above, 1 - erfc |x| with
// erfc t = e^(h(t) - t^2), h a polynomial in t - 2.5 fitted on
// [0.921875, 4] (past 4, erf rounds to 1). The leading coefficient of P is
// split in two so that |x| times it is rounded once, in the last FMA.
llvm::Value* EmitErfF32(MathEmitter& m, llvm::Value* x) {
  auto& b = m.b;
  llvm::Value* a = m.Abs(x);
  llvm::Value* z = b.CreateFMul(a, a);
  llvm::Value* p = m.Poly(z, {-6.0040811559210596e-4, 4.9960201222474733e-3, -2.6768756699813974e-2,
                              1.1281882319397829e-1, -3.7612500896193643e-1, 4.43088088546875e-8});
  llvm::Value* near_zero = m.MulAdd(a, m.F(1.12837910652160645), b.CreateFMul(a, p));
  llvm::Value* t = b.CreateSelect(b.CreateFCmpOGT(a, m.F(4.0)), m.F(4.0), a);  // keeps NaN
  llvm::Value* h = m.Poly(b.CreateFSub(t, m.F(2.5)),
                          {1.6435709184984341e-6, -1.3306857711801999e-5, 7.7254921961971723e-5,
                           -4.2014957440487006e-4, 2.1653664599966082e-3, -1.0858517642470339e-2,
                           5.6106262448009844e-2, -3.5268067894609165e-1, -1.556815269933235});
  llvm::Value* erfc = EmitExpF32(m, b.CreateFSub(h, b.CreateFMul(t, t)));
  llvm::Value* far = b.CreateFSub(m.F(1.0), erfc);
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(a, m.F(0.921875)), near_zero, far);
  return m.CopySign(r, x);
}

}  // namespace

bool HasInlineMath(ir::CallOp op) {
  switch (op) {
    case ir::CallOp::kExp: case ir::CallOp::kLog: case ir::CallOp::kPow: case ir::CallOp::kSigmoid:
    case ir::CallOp::kTanh: case ir::CallOp::kErf:
      return true;
    // Single instructions (or a division by one) already.
    case ir::CallOp::kSqrt: case ir::CallOp::kRsqrt: case ir::CallOp::kAbs: case ir::CallOp::kFloor:
    case ir::CallOp::kCeil:
      return false;
  }
  return false;
}

llvm::Value* EmitInlineMath(llvm::IRBuilder<>& builder, ir::CallOp op, llvm::Value* x, llvm::Value* y) {
  llvm::IRBuilderBase::FastMathFlagGuard guard(builder);
  builder.clearFastMathFlags();
  llvm::Type* type = x->getType();
  llvm::Type* f32 = WithLanesOf(builder.getFloatTy(), type);
  const bool widened = type != f32;  // half, computed in float
  if (widened) {
    x = builder.CreateFPExt(x, f32);
    if (y != nullptr) y = builder.CreateFPExt(y, f32);
  }
  MathEmitter m(builder, f32);
  llvm::Value* r = nullptr;
  switch (op) {
    case ir::CallOp::kExp: r = EmitExpF32(m, x); break;
    case ir::CallOp::kLog: r = EmitLogF32(m, x); break;
    case ir::CallOp::kPow: r = EmitPowF32(builder, x, y); break;
    case ir::CallOp::kSigmoid: r = EmitSigmoidF32(m, x); break;
    case ir::CallOp::kTanh: r = EmitTanhF32(m, x); break;
    case ir::CallOp::kErf: r = EmitErfF32(m, x); break;
    case ir::CallOp::kSqrt: case ir::CallOp::kRsqrt: case ir::CallOp::kAbs: case ir::CallOp::kFloor:
    case ir::CallOp::kCeil:
      return llvm::PoisonValue::get(type);  // callers ask HasInlineMath first
  }
  return widened ? builder.CreateFPTrunc(r, type) : r;
}

}  // namespace tunefarm::codegen
