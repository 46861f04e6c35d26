// Linearisation of integer index expressions: the one walk that reads an
// expression as a weighted sum of terms, shared by the simplifier's linear
// form (simplify.cpp), the schedule's access regions (AccessRegion,
// compiler/schedule/schedule_utils.cpp) and the cost model's index forms
// (AnalyzeIndex, costmodel/features_index.cpp).
//
// Linearize(e, scale, leaf) reads scale * e as  sum_i scale_i * term_i
// through +, - and multiplication by an integer immediate on either side
// (the right one tried first), and calls leaf(term_i, scale_i) for every
// other node, left to right: a variable, an immediate, a division, a cast, a
// load, a product of two non-immediates. What a term means is the caller's:
// the regions keep terms free of their loops as a symbolic rest, the features
// keep divisions as atoms and look through integer casts (by calling
// Linearize again from their leaf).
//
// It returns false as soon as a leaf does (the rest of e is not visited), true
// when every leaf accepted its term. A scale that would leave int64_t is not
// formed: that product (or negated difference) is handed to the leaf whole.
// Header-only: the cost model calls it for every index of every candidate.
#pragma once

#include <cstdint>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::ir {

template <typename Leaf>
bool Linearize(const Expr& e, int64_t scale, Leaf&& leaf) {
  if (const auto* op = e.as<Add>()) return Linearize(op->a, scale, leaf) && Linearize(op->b, scale, leaf);
  if (const auto* op = e.as<Sub>()) {
    int64_t negated = 0;
    if (!__builtin_mul_overflow(scale, int64_t{-1}, &negated)) {
      return Linearize(op->a, scale, leaf) && Linearize(op->b, negated, leaf);
    }
  } else if (const auto* op = e.as<Mul>()) {
    int64_t s = 0;
    if (const auto* c = op->b.as<IntImm>(); c && !__builtin_mul_overflow(scale, c->value, &s)) {
      return Linearize(op->a, s, leaf);
    }
    if (const auto* c = op->a.as<IntImm>(); c && !__builtin_mul_overflow(scale, c->value, &s)) {
      return Linearize(op->b, s, leaf);
    }
  }
  return leaf(e, scale);
}

}  // namespace tunefarm::ir
