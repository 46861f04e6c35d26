// Interval analysis of index expressions for the workload checker (private
// to compiler/).
//
// Bounds an integer IR expression given the ranges of the stage's axes and
// the conditions known to hold at that point (the conditions of enclosing
// select branches). A condition refines the bound of any subexpression that
// is structurally equal to one side of a comparison in it, so both
// `select(h >= 1 && h <= H, X[h - 1], 0.0)` and
// `select(h + r - 1 >= 0 && h + r - 1 < H, X[h + r - 1], 0.0)` are proven in range.
// All arithmetic is overflow-checked (ir::Interval's checked operations); an
// unknown bound is std::nullopt. An interval with min > max holds no value:
// the index of a branch the facts rule out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "tunefarm/compiler/ir/interval.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::wl {

using VarRanges = std::map<const ir::Variable*, ir::Interval>;

// A condition that holds (holds == true) or fails (false) where an access sits.
struct Fact {
  ir::Expr cond;
  bool holds;
};

// Bound of `e` (integer typed) under the ranges and facts.
std::optional<ir::Interval> BoundOf(const ir::Expr& e, const VarRanges& vars,
                             const std::vector<Fact>& facts);

// True if e mentions any of the variables.
bool MentionsAny(const ir::Expr& e, const std::vector<const ir::Variable*>& vars);
// Appends the variables e mentions.
void CollectVars(const ir::Expr& e, std::vector<const ir::Variable*>* out);

}  // namespace tunefarm::wl
