// Private to the LLVM code generator: the inline forms of the workload
// language's float math functions (exp, log, pow, sigmoid, tanh, erf), emitted
// as straight-line LLVM IR -- range reduction, a polynomial, bit manipulation
// and selects for the special values -- so that in a vectorized loop they are
// vector instructions on every lane at once, on any target LLVM can emit for.
//
//   codegen_llvm_math.cpp       exp, log, sigmoid, tanh, erf (float arithmetic)
//   codegen_llvm_math_pow.cpp   pow (double arithmetic, then rounded to float)
//
// Accuracy, float32, in ULP of the exact result (double-precision libm),
// the worst over all 2^32 inputs of the JIT-compiled vectorized kernels, for
// the host (AVX-512, FMA) / for generic x86-64 (no FMA: llvm.fmuladd is a
// multiply and an add): exp 1.01 / 0.99, log 0.83 / 0.83, tanh 1.33 / 1.33,
// erf 1.22 / 2.33, sigmoid 2.40 / 2.40; pow, over every pair of special
// values and 5e7 random pairs (a C model of the same algorithm), 0.50.
// Infinities, NaN, signed zeros, subnormal inputs and results, overflow
// and underflow follow C's libm (Annex F), as the interpreter does: over
// all inputs, no NaN, infinity or zero differed from libm's.
//
// The emitters build no control flow: a value is scalar or vector alike.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <initializer_list>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::codegen {

// True if `op` has an inline form (exp, log, pow, sigmoid, tanh, erf).
bool HasInlineMath(ir::CallOp op);

// `op` of x (and y, pow's exponent; null for the others), x and y of one
// type: half or float, scalar or vector. The result has their type (half is
// computed in float and rounded back). Clears the builder's fast-math flags
// for what it emits: the reductions depend on each rounding being where it
// is written.
llvm::Value* EmitInlineMath(llvm::IRBuilder<>& builder, ir::CallOp op, llvm::Value* x, llvm::Value* y);

// `element` with as many lanes as `like` (`element` itself for a scalar).
llvm::Type* WithLanesOf(llvm::Type* element, llvm::Type* like);

// Constants and operations on values of one floating-point type (scalar or
// vector), and on the integers of the same width and lanes its bits are.
struct MathEmitter {
  MathEmitter(llvm::IRBuilder<>& builder, llvm::Type* type);

  llvm::IRBuilder<>& b;
  llvm::Type* const type;      // float or double, scalar or vector
  llvm::Type* const int_type;  // i32 or i64, same lanes

  llvm::Value* F(double v) const;   // a float constant (splat)
  llvm::Value* I(int64_t v) const;  // an integer constant (splat)
  // a * b + c, one rounding where the target has FMA (llvm.fmuladd).
  llvm::Value* MulAdd(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  // The polynomial with `coeffs`, highest degree first, at x (Horner).
  llvm::Value* Poly(llvm::Value* x, std::initializer_list<double> coeffs);
  llvm::Value* Abs(llvm::Value* x);
  llvm::Value* CopySign(llvm::Value* magnitude, llvm::Value* sign);
  llvm::Value* Bits(llvm::Value* x);   // bitcast to int_type
  llvm::Value* Float(llvm::Value* i);  // bitcast to type
};

// e^x for float x (scalar or vector); shared by sigmoid, tanh and erf.
llvm::Value* EmitExpF32(MathEmitter& m, llvm::Value* x);
// x^y for float x and y: see codegen_llvm_math_pow.cpp.
llvm::Value* EmitPowF32(llvm::IRBuilder<>& builder, llvm::Value* x, llvm::Value* y);

}  // namespace tunefarm::codegen
