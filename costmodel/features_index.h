// Index analysis for feature extraction (internal to costmodel/).
//
// LoopStack is the stack of loops around the statement being visited,
// outermost first. Index expressions are analysed against it in two ways:
//  * IndexForm: a linear form sum(coef[d] * loop_var[d]) + constant when the
//    expression is affine in the loop variables (the common case: splits and
//    reorders give affine indices), computed once per index so that region
//    sizes at every loop level cost O(depth) arithmetic, no tree walks;
//  * interval evaluation for non-affine terms (fuse gives floor-div and
//    floor-mod, padding gives selects): bounds of the term with some loop
//    variables varying over their ranges, the others fixed at their first
//    value. Up to kMaxAtoms such terms of a sum are kept apart from its
//    affine part (IndexAtom); beyond that the whole index is evaluated.
// Loops deeper than kMaxDepth are treated as unknown variables (unbounded).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tunefarm/compiler/ir/interval.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::costmodel::detail {

inline constexpr int kMaxDepth = 32;

// ir::AsConstInt, inlined: it is called for every loop and every index
// product, and the compiler library's copy is out of line.
inline const int64_t* ConstInt(const ir::Expr& e) {
  const auto* imm = e.as<ir::IntImm>();
  return imm ? &imm->value : nullptr;
}

// GPU binding of a loop, classified once from its thread tag.
enum class Binding : int8_t { kNone = -1, kBlockX, kBlockY, kBlockZ, kThreadX, kThreadY, kThreadZ, kVThread };

struct LoopInfo {
  const ir::Variable* var = nullptr;
  int64_t min = 0;
  int64_t extent = 1;
  ir::ForKind kind = ir::ForKind::kSerial;
  Binding binding = Binding::kNone;
  int64_t auto_unroll = 0;  // pragma_auto_unroll_max_step, 0 when absent
};

class LoopStack {
 public:
  void Push(const LoopInfo& loop) { loops_.push_back(loop); }
  void Pop() { loops_.pop_back(); }
  int depth() const { return static_cast<int>(loops_.size()); }
  const LoopInfo& at(int d) const { return loops_[static_cast<size_t>(d)]; }
  // Depth of the loop whose variable is v, or -1 (searched innermost first:
  // index expressions mostly use the inner loops).
  int DepthOf(const ir::Variable* v) const {
    for (int d = depth() - 1; d >= 0; --d) {
      if (loops_[static_cast<size_t>(d)].var == v) return d < kMaxDepth ? d : -1;
    }
    return -1;
  }

 private:
  std::vector<LoopInfo> loops_;
};

// Which loops vary when an index is evaluated: loops at depth >= vary_from
// over their whole range; if only_depth >= 0, instead only that loop, over
// its first two values (to measure a stride); the rest sit at their minimum.
struct VaryingLoops {
  int vary_from = 0;
  int only_depth = -1;
};

// Bounds of e (ir::Interval's checked arithmetic); std::nullopt when unbounded:
// a variable of no loop on the stack, a load, a division by other than a
// positive constant, an overflow.
std::optional<ir::Interval> EvalInterval(const ir::Expr& e, const LoopStack& loops, VaryingLoops varying);

// Bit d set if the expression uses the variable of the loop at depth d.
uint64_t LoopVarMask(const ir::Expr& e, const LoopStack& loops);

// A non-affine term of an otherwise affine index: scale * expr (fuse's
// `fused / 4 * 32`, `fused % 4`). Interval arithmetic is additive over the
// terms of a sum, so the index's width is the linear part's plus each
// term's, and only the small term is evaluated as an interval, and only
// when one of its loops varies.
struct IndexAtom {
  const ir::Expr* expr = nullptr;
  int64_t scale = 0;
  uint64_t mask = 0;
};
inline constexpr int kMaxAtoms = 4;

struct IndexForm {
  // User-provided so that emplace_back() does not zero the arrays (~350
  // bytes per index, most of them past the loop depth): AnalyzeIndex sets
  // coef for the loops of the stack and atoms up to num_atoms, all that is read.
  IndexForm() {}  // NOLINT(modernize-use-equals-default)
  const ir::Expr* expr = nullptr;
  bool linear = false;  // affine apart from its atoms
  int64_t constant = 0;
  std::array<int64_t, kMaxDepth> coef;  // [0, min(depth, kMaxDepth)) valid
  uint64_t mask = 0;  // loops the index uses
  int num_atoms = 0;
  std::array<IndexAtom, kMaxAtoms> atoms;  // [0, num_atoms) valid

  // Values the index takes when loops at depth >= level vary (an upper bound
  // for non-affine indices), capped at `dim_extent`.
  int64_t Width(const LoopStack& loops, int level, int64_t dim_extent) const;
  // Width at every level 0..loops.depth() into out[], in one pass from the
  // innermost loop outwards (the affine part grows by one term a level).
  void AllWidths(const LoopStack& loops, int64_t dim_extent, int64_t* out) const;
  // |change of the index| when loop `d` advances by one.
  int64_t Step(const LoopStack& loops, int d) const;
};

// Analyses `e` into *form (callers build it in place in a reused vector: an
// IndexForm is ~400 bytes); every field that is read afterwards is set.
void AnalyzeIndex(const ir::Expr& e, const LoopStack& loops, IndexForm* form);

}  // namespace tunefarm::costmodel::detail
