// The IR's integer Div and Mod: floor division and the modulo that goes with
// it (a non-zero result has the divisor's sign), not C++'s truncation. One
// definition for every pass that folds, bounds or evaluates them: the
// simplifier, the workload bounds, the interpreter and the cost model's
// index features; the LLVM code generator emits the same (EmitDivMod).
#pragma once

#include <cstdint>

namespace tunefarm::ir {

// b != 0; callers check (a zero divisor is the caller's error to report).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

}  // namespace tunefarm::ir
