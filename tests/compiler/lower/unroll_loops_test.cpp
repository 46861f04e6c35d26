// UnrollLoops: which loops "pragma_auto_unroll_max_step" unrolls, and that a
// program it unrolls still computes what the default schedule computes.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/unroll_loops.h"

namespace tunefarm::testing {
namespace {

using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::ForKind;
using ir::Stmt;
using ir::Var;

// for r in [0, 3) { for s in [0, 3) { for v in [0, 28) <inner_kind> { A[...] = 1 } } }
// under a loop annotated with `max_step`.
Stmt TapNest(ForKind inner_kind, int64_t max_step) {
  Var o("o"), r("r"), s("s"), v("v");
  Buffer a = ir::MakeBuffer("A", ir::DataType::Float(32), {2, 3, 3, 28});
  Stmt store = ir::Store::Make(a, Expr(1.0), {o, r, s, v});
  Stmt nest = For::Make(r, Expr(0), Expr(3), ForKind::kSerial,
                        For::Make(s, Expr(0), Expr(3), ForKind::kSerial,
                                  For::Make(v, Expr(0), Expr(28), inner_kind, store)));
  return For::Make(o, Expr(0), Expr(2), ForKind::kSerial, nest, "", {{"pragma_auto_unroll_max_step", max_step}});
}

int CountUnrolled(const Stmt& s) {
  std::string text = ir::ToString(s);
  int count = 0;
  for (size_t at = text.find(" unrolled"); at != std::string::npos; at = text.find(" unrolled", at + 1)) ++count;
  return count;
}

TEST(UnrollLoopsTest, VectorizedLoopCountsAsOneStep) {
  // 3 x 3 taps around one 28-lane vector: 9 steps, within 16. The annotated
  // loop itself (2 x 9 = 18 steps) stays rolled.
  Stmt vector_taps = ir::UnrollLoops(TapNest(ForKind::kVectorized, 16));
  EXPECT_EQ(CountUnrolled(vector_taps), 2) << ir::ToString(vector_taps);
  // The same taps around 28 scalar iterations: 252 steps, nothing unrolls.
  Stmt scalar_taps = ir::UnrollLoops(TapNest(ForKind::kSerial, 16));
  EXPECT_EQ(CountUnrolled(scalar_taps), 0) << ir::ToString(scalar_taps);
  // With room for them (512), the scalar iterations unroll too.
  Stmt roomy = ir::UnrollLoops(TapNest(ForKind::kSerial, 512));
  EXPECT_EQ(CountUnrolled(roomy), 4) << ir::ToString(roomy);
}

TEST(UnrollLoopsTest, NoPragmaNoUnrolling) {
  Stmt zero = TapNest(ForKind::kVectorized, 0);
  EXPECT_TRUE(ir::UnrollLoops(zero).same_as(zero));
}

// A matmul whose 28 columns are one vector under the k loop: k (12 steps)
// unrolls under max_step 16 and the result matches the default schedule
// through the interpreter and the JIT.
TEST(UnrollLoopsTest, UnrolledTapsAroundAWideVectorRunCorrectly) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, {{"M", 5}, {"N", 28}, {"K", 12}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> l, sch.GetLoops(c));
    TF_RETURN_IF_ERROR(sch.Reorder({l[0], l[2], l[1]}));
    TF_RETURN_IF_ERROR(sch.Vectorize(l[1]));
    return sch.Annotate(l[0], "pragma_auto_unroll_max_step", 16);
  }, &out));
  auto lowered = LowerForCodegen(out.scheduled);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  std::string text = ir::ToString(lowered->body);
  EXPECT_NE(text.find(" unrolled"), std::string::npos) << text;
}

}  // namespace
}  // namespace tunefarm::testing
