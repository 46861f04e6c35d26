// Arithmetic simplifier for index expressions.
//
// Folds constants, removes identities (x+0, x*1, x*0), canonicalises sums of
// products of variables with constant coefficients (so (i*4 + j) - j*1 + 2*i
// becomes i*6 + 2 style forms), and uses the known ranges of loop variables to
// simplify floor div/mod ((i*16 + j) / 16 -> i when 0 <= j < 16), min/max and
// comparisons that are decided by those ranges.
#pragma once

#include <map>
#include <optional>

#include "tunefarm/compiler/ir/interval.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

// The known ranges of loop variables (interval.h).
using RangeMap = std::map<const Variable*, Interval>;

Expr Simplify(const Expr& e, const RangeMap& ranges = {});
// Simplifies every expression in s, learning loop variable ranges from For nodes
// and block iter vars, and removes loops of extent 1 and ifs with a known condition.
Stmt Simplify(const Stmt& s);

// Bounds of an integer expression under the given variable ranges, if they
// can be derived: +, - and * saturate (Interval::SaturatingAdd), / and % by
// a positive constant only.
std::optional<Interval> BoundOf(const Expr& e, const RangeMap& ranges);

}  // namespace tunefarm::ir
