// PromoteAccumulators: which register tiles get a buffer of their own, and
// that programs it rewrites still compute what the default schedule computes
// (the interpreter on the lowered program, and the JIT) at odd sizes.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/promote_accumulators.h"

namespace tunefarm::testing {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::ForKind;
using ir::Stmt;
using ir::Var;

// The matmul with its accumulator over the whole output (cache_write, never
// moved) and a register tile of `rows` unrolled rows by `cols` vectorized
// columns under the reduction loop k: i0, j0, k, i1, j1.
Status TaskWideAccumulator(Schedule& sch, int64_t rows, int64_t cols) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_RETURN_IF_ERROR(sch.CacheWrite(c, ir::MemoryScope::kLocal).status());
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> i, sch.Split(l[0], {Factor(-1), Factor(rows)}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(l[1], {Factor(-1), Factor(cols)}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
  TF_RETURN_IF_ERROR(sch.Unroll(i[1]));
  return sch.Vectorize(j[1]);
}

bool HasTile(const ir::PrimFunc& f, const std::string& name) {
  return ir::ToString(f.body).find("allocate " + name + ":") != std::string::npos;
}

TEST(PromoteAccumulatorsTest, ATaskWideAccumulatorsRegisterTileComputesTheSameAtOddSizes) {
  struct Shape {
    int64_t m, n, k, rows, cols;
    bool tile;  // whether the window gets its tile
  };
  // Extents 1, 7, 17 and 101; a tile of one row leaves that dimension out of
  // the window. Rows of 4 over 17 leave a partial tile whose rows are
  // guarded under the reduction: no tile, and the same results.
  for (Shape s : {Shape{1, 48, 7, 1, 16, true}, Shape{7, 34, 101, 7, 17, true}, Shape{14, 34, 17, 7, 17, true},
                  Shape{101, 16, 2, 1, 16, true}, Shape{17, 101, 13, 17, 1, true}, Shape{17, 32, 7, 4, 16, false}}) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k));
    ScheduleOutcome out;
    EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", s.m}, {"N", s.n}, {"K", s.k}},
                                  [&](Schedule& sch) { return TaskWideAccumulator(sch, s.rows, s.cols); }, &out));
    auto lowered = LowerForCodegen(out.scheduled);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    // A window of one element is still a tile: the scalar accumulator of a
    // reduction that LLVM would otherwise have to promote itself.
    EXPECT_EQ(HasTile(*lowered, "C_local_tile"), s.tile) << ir::ToString(lowered->body);
    auto ref = MakeReference(out.base);
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    EXPECT_TRUE(MatchesReference(*ref, *lowered, /*jit=*/false));
  }
}

// for t in [0, 2) { for r in [0, 5) <reduction> { for i in [0, 4) unrolled {
//   for v in [0, 16) vectorized { <body(B, t, i, v, r)> } } } }
// inside `allocate B: f32[8, 16] local`; returns the Allocate.
template <typename Body>
Stmt TileNest(const Buffer& b, Body body, int64_t cols = 16) {
  Var t("t"), r("r"), i("i"), v("v");
  Stmt inner = For::Make(v, Expr(0), Expr(cols), ForKind::kVectorized, body(t, i, v, r));
  Stmt nest = For::Make(r, Expr(0), Expr(5), ForKind::kSerial, For::Make(i, Expr(0), Expr(4), ForKind::kUnrolled, inner));
  return ir::Allocate::Make(b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial, nest));
}

Stmt Accumulate(const Buffer& b, std::vector<Expr> at) {
  return ir::Store::Make(b, ir::Load::Make(b, at) + Expr(1.0), at);
}

// Y[t*4 + i, v] = sum_r X[r, t*4 + i, v] through a local B[8, 16] whose
// 4 x 16 window the reduction over r updates; `window_kind` is the kind of
// the window's row loop i.
ir::PrimFunc RowSums(ForKind window_kind = ForKind::kUnrolled) {
  Buffer x = ir::MakeBuffer("X", ir::DataType::Float(32), {5, 8, 16});
  Buffer y = ir::MakeBuffer("Y", ir::DataType::Float(32), {8, 16});
  Buffer b = ir::MakeBuffer("B", ir::DataType::Float(32), {8, 16}, ir::MemoryScope::kLocal);
  Var t("t"), r("r"), i("i"), v("v"), i0("i0"), v0("v0"), i1("i1"), v1("v1");
  auto rows = [&](Var row, Var lane, Stmt body, ForKind kind) {
    return For::Make(row, Expr(0), Expr(4), kind, For::Make(lane, Expr(0), Expr(16), ForKind::kVectorized, body));
  };
  Stmt init = rows(i0, v0, ir::Store::Make(b, Expr(0.0), {Expr(t) * 4 + i0, v0}), ForKind::kUnrolled);
  Stmt reduce = For::Make(
      r, Expr(0), Expr(5), ForKind::kSerial,
      rows(i, v,
           ir::Store::Make(b, ir::Load::Make(b, {Expr(t) * 4 + i, v}) + ir::Load::Make(x, {r, Expr(t) * 4 + i, v}),
                           {Expr(t) * 4 + i, v}),
           window_kind));
  Stmt store = rows(i1, v1, ir::Store::Make(y, ir::Load::Make(b, {Expr(t) * 4 + i1, v1}), {Expr(t) * 4 + i1, v1}),
                    ForKind::kUnrolled);
  ir::PrimFunc f;
  f.name = "row_sums";
  f.params = {x, y};
  f.num_inputs = 1;
  f.body = ir::Allocate::Make(
      b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial, ir::SeqStmt::Make({init, reduce, store})));
  return f;
}

TEST(PromoteAccumulatorsTest, TheTileHoldsTheWindowAroundTheReductionAndComputesTheSame) {
  const ir::PrimFunc original = RowSums();
  ir::PrimFunc promoted = original;
  promoted.body = ir::PromoteAccumulators(original.body);
  std::string text = ir::ToString(promoted.body);
  EXPECT_NE(text.find("allocate B_tile: f32[4, 16] local"), std::string::npos) << text;
  EXPECT_NE(text.find("B_tile[i_in, v_in] = B[((t * 4) + i_in), v_in]"), std::string::npos) << text;
  EXPECT_NE(text.find("B_tile[i, v] = (B_tile[i, v] + X[r, ((t * 4) + i), v])"), std::string::npos) << text;
  EXPECT_NE(text.find("B[((t * 4) + i_out), v_out] = B_tile[i_out, v_out]"), std::string::npos) << text;
  // Copied in before the reduction and out after it: the sums come out right.
  auto ref = MakeReference(original);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_TRUE(MatchesReference(*ref, promoted, /*jit=*/false));
  // A serial window loop would leave the tile indexed by a variable: no gain.
  const ir::PrimFunc serial = RowSums(ForKind::kSerial);
  EXPECT_TRUE(ir::PromoteAccumulators(serial.body).same_as(serial.body));
}

TEST(PromoteAccumulatorsTest, WindowsItCannotProveAreLeftAlone) {
  Buffer b = ir::MakeBuffer("B", ir::DataType::Float(32), {8, 16}, ir::MemoryScope::kLocal);
  // An access under an if: the window's elements are not all touched.
  Stmt guarded = TileNest(b, [&](Var t, Var i, Var v, Var r) {
    return ir::IfThenElse::Make(ir::LT::Make(r, Expr(int64_t{2})), Accumulate(b, {Expr(t) * 4 + i, v}));
  });
  EXPECT_TRUE(ir::PromoteAccumulators(guarded).same_as(guarded));
  // Two accesses at different places.
  Stmt shifted = TileNest(b, [&](Var t, Var i, Var v, Var) {
    Expr at = Expr(t) * 4 + i;
    return ir::Store::Make(b, ir::Load::Make(b, {at, v}) + Expr(1.0), {at + 1, v});
  });
  EXPECT_TRUE(ir::PromoteAccumulators(shifted).same_as(shifted));
  // The reduction variable in the index: no window stays in place.
  Stmt moving = TileNest(b, [&](Var t, Var i, Var v, Var r) { return Accumulate(b, {Expr(r) + i, v}); });
  EXPECT_TRUE(ir::PromoteAccumulators(moving).same_as(moving));
  // A window as large as the buffer is already a tile.
  Buffer small = ir::MakeBuffer("S", ir::DataType::Float(32), {4, 16}, ir::MemoryScope::kLocal);
  Stmt whole = TileNest(small, [&](Var, Var i, Var v, Var) { return Accumulate(small, {i, v}); });
  EXPECT_TRUE(ir::PromoteAccumulators(whole).same_as(whole));
  // A window over the register file (4 x 256 f32, 4 KiB) stays in memory.
  Buffer wide = ir::MakeBuffer("W", ir::DataType::Float(32), {8, 256}, ir::MemoryScope::kLocal);
  Stmt over = TileNest(wide, [&](Var t, Var i, Var v, Var) { return Accumulate(wide, {Expr(t) * 4 + i, v}); }, 256);
  EXPECT_TRUE(ir::PromoteAccumulators(over).same_as(over));
  // Under a vectorized loop each lane is an iteration: one tile for all of
  // them would be wrong.
  {
    Var t("t"), v("v"), r("r");
    Stmt lanes = ir::Allocate::Make(
        b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial,
                     For::Make(v, Expr(0), Expr(16), ForKind::kVectorized,
                               For::Make(r, Expr(0), Expr(5), ForKind::kSerial, Accumulate(b, {Expr(t) * 4, v})))));
    EXPECT_TRUE(ir::PromoteAccumulators(lanes).same_as(lanes));
  }
  // A reduction that may not run (an extent of t: none at t = 0) leaves the
  // window untouched there, so it may not be copied.
  {
    Var t("t"), r("r"), i("i"), v("v");
    Stmt inner = For::Make(v, Expr(0), Expr(16), ForKind::kVectorized, Accumulate(b, {Expr(t) * 4 + i, v}));
    Stmt nest = For::Make(r, Expr(0), t, ForKind::kSerial, For::Make(i, Expr(0), Expr(4), ForKind::kUnrolled, inner));
    Stmt maybe = ir::Allocate::Make(b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial, nest));
    EXPECT_TRUE(ir::PromoteAccumulators(maybe).same_as(maybe));
  }
  // A nest a code generator matches as it stands (here a matrix
  // multiply-accumulate) keeps its accumulator where the nest has it.
  {
    Var t("t"), r("r"), i("i"), v("v");
    Stmt inner = For::Make(v, Expr(0), Expr(16), ForKind::kVectorized, Accumulate(b, {Expr(t) * 4 + i, v}));
    Stmt nest = For::Make(r, Expr(0), Expr(8), ForKind::kSerial,
                          For::Make(i, Expr(0), Expr(4), ForKind::kUnrolled, inner), "",
                          {{ir::kMatrixMultiplyAnnotation, ir::kMatrixMultiplySteps}});
    Stmt matched = ir::Allocate::Make(b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial, nest));
    EXPECT_TRUE(ir::PromoteAccumulators(matched).same_as(matched));
  }
  // A variable bound again under the reduction (here the tile loop's t, as a
  // window loop): one name for two loops, so no window can be named.
  {
    Var t("t"), r("r"), v("v");
    Stmt inner = For::Make(t, Expr(0), Expr(4), ForKind::kUnrolled,
                           For::Make(v, Expr(0), Expr(16), ForKind::kVectorized, Accumulate(b, {t, v})));
    Stmt rebound = ir::Allocate::Make(
        b, For::Make(t, Expr(0), Expr(2), ForKind::kSerial, For::Make(r, Expr(0), Expr(5), ForKind::kSerial, inner)));
    EXPECT_TRUE(ir::PromoteAccumulators(rebound).same_as(rebound));
  }
  // Read only: nothing accumulates.
  Stmt read_only = TileNest(b, [&](Var t, Var i, Var v, Var) {
    Buffer out = ir::MakeBuffer("O", ir::DataType::Float(32), {8, 16});
    return ir::Store::Make(out, ir::Load::Make(b, {Expr(t) * 4 + i, v}), {Expr(t) * 4 + i, v});
  });
  EXPECT_TRUE(ir::PromoteAccumulators(read_only).same_as(read_only));
  // A GPU kernel (a thread-bound loop anywhere) is left as it is.
  {
    Var tx("tx");
    Stmt gpu = For::Make(tx, Expr(0), Expr(2), ForKind::kThreadBinding,
                         TileNest(b, [&](Var t, Var i, Var v, Var) { return Accumulate(b, {Expr(t) * 4 + i, v}); }),
                         "threadIdx.x");
    EXPECT_TRUE(ir::PromoteAccumulators(gpu).same_as(gpu));
  }
  // A global buffer is the caller's: its stores must land where they are.
  Buffer global = ir::MakeBuffer("G", ir::DataType::Float(32), {8, 16});
  Stmt outside = TileNest(global, [&](Var t, Var i, Var v, Var) { return Accumulate(global, {Expr(t) * 4 + i, v}); });
  EXPECT_TRUE(ir::PromoteAccumulators(outside).same_as(outside));
}

}  // namespace
}  // namespace tunefarm::testing
