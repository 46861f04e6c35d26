// Reads at a block's own iteration variables (iter_var_reads.h): a constant
// 0 in a unit dimension, where the reader's iteration variable has extent 1,
// counts as that variable, so reverse_compute_at and reverse_compute_inline
// fuse a batch-1 consumer written `acc[0, i, j]` exactly as one written
// `acc[n, i, j]`, and the program computes the same. A 0 in a longer
// dimension, and any other constant, stay rejected with the old message.
#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/iter_var_reads.h"

namespace tunefarm::testing {
namespace {

// A batch-1 dense layer with a residual add; `{read}` is how out reads acc.
constexpr std::string_view kBatchDense = R"(
workload bdense(N = 1, M = 7, J = 9, K = 5) {
  A = input f32[N, M, K]
  W = input f32[J, K]
  x = input f32[N, M, J]
  acc[n, i, j] = sum(k: K) A[n, i, k] * W[j, k]
  out[n: N, i: M, j: J] = max({read} + x[n, i, j], 0.0)
  output out
}
)";

// An element-wise producer and its consumer, for reverse_compute_inline.
constexpr std::string_view kBatchBias = R"(
workload bbias(N = 1, M = 6, J = 17) {
  A    = input f32[N, M, J]
  bias = input f32[J]
  t[n, i, j] = A[n, i, j] + bias[j]
  out[n: N, i: M, j: J] = max({read}, 0.0)
  output out
}
)";

std::string With(std::string_view text, const std::string& read) {
  std::string s(text);
  s.replace(s.find("{read}"), 6, read);
  return s;
}

Result<std::vector<LoopRV>> Loops(Schedule& sch, const std::string& block) {
  TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock(block));
  return sch.GetLoops(b);
}

// acc tiled by (i, j) with out moved under the j tile.
Status EpilogueIntoTile(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(auto l, Loops(sch, "acc"));  // n i j k
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[1], {-1, 4}));
  TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[2], {-1, 4}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[3], i[1], j[1]}));
  TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
  return sch.ReverseComputeAt(out, j[0]);
}

Status InlineConsumer(Schedule& sch) {
  TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
  return sch.ReverseComputeInline(out);
}

const ir::Block* FindBlock(const ir::PrimFunc& f, const std::string& name) {
  const ir::Block* found = nullptr;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kBlock && static_cast<const ir::Block*>(n)->name == name) {
      found = static_cast<const ir::Block*>(n);
    }
  });
  return found;
}

const ir::BufferNode* StoredBuffer(const ir::PrimFunc& f, const std::string& block) {
  return FindBlock(f, block)->body.as<ir::Store>()->buffer.get();
}

TEST(IterVarReadsTest, ReverseComputeAtMovesAUnitZeroReadAsItsVariable) {
  for (int64_t m : {1, 7, 17, 101}) {
    SCOPED_TRACE(m);
    ScheduleOutcome zero, var;
    ASSERT_TRUE(ScheduleIsCorrect(With(kBatchDense, "acc[0, i, j]"), {{"M", m}}, EpilogueIntoTile, &zero));
    ASSERT_TRUE(ScheduleIsCorrect(With(kBatchDense, "acc[n, i, j]"), {{"M", m}}, EpilogueIntoTile, &var, false));
    EXPECT_EQ(zero.trace_text, var.trace_text);
    // The moved consumer reads the compacted tile as the acc[n, ...] form does.
    std::string text = ir::ToString(zero.scheduled);
    EXPECT_EQ(text, ir::ToString(var.scheduled));
  }
}

TEST(IterVarReadsTest, ReverseComputeInlineFoldsAUnitZeroReadAsItsVariable) {
  ScheduleOutcome zero, var;
  ASSERT_TRUE(ScheduleIsCorrect(With(kBatchBias, "t[0, i, j]"), {}, InlineConsumer, &zero));
  ASSERT_TRUE(ScheduleIsCorrect(With(kBatchBias, "t[n, i, j]"), {}, InlineConsumer, &var));
  EXPECT_EQ(zero.trace_text, var.trace_text);
  EXPECT_EQ(ir::ToString(zero.scheduled), ir::ToString(var.scheduled));
  EXPECT_EQ(FindBlock(zero.scheduled, "out"), nullptr) << ir::ToString(zero.scheduled);
}

TEST(IterVarReadsTest, AZeroInALongerDimensionStaysRejected) {
  // N = 2: every n reads batch 0, a broadcast, not an element-wise read.
  auto dense = LowerText(With(kBatchDense, "acc[0, i, j]"), {{"N", 2}});
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  Schedule sch(*dense);
  EXPECT_TRUE(IsInvalid(EpilogueIntoTile(sch), {"reverse_compute_at(out", "own iteration variables"}));
  auto bias = LowerText(With(kBatchBias, "t[0, i, j]"), {{"N", 2}});
  ASSERT_TRUE(bias.ok()) << bias.status().ToString();
  Schedule inl(*bias);
  EXPECT_TRUE(IsInvalid(InlineConsumer(inl), {"reverse_compute_inline(out", "distinct iteration variables"}));
  EXPECT_FALSE(sched::ReadsAtIterVars(FindBlock(*dense, "out"), StoredBuffer(*dense, "acc")));
  // A unit dimension of the buffer read at 0 by a longer iteration variable
  // of the reader (i: 3 over t's M = 1): a broadcast too.
  std::string spread = With(kBatchBias, "t[n, 0, j]");
  spread.replace(spread.find("i: M"), 4, "i: 3");
  auto row = LowerText(spread, {{"M", 1}});
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_FALSE(sched::ReadsAtIterVars(FindBlock(*row, "out"), StoredBuffer(*row, "t")));
  Schedule spread_sch(*row);
  EXPECT_TRUE(IsInvalid(InlineConsumer(spread_sch), {"reverse_compute_inline(out", "distinct iteration variables"}));
  // Read with i itself where M = 1, the 0 is the variable.
  auto unit = LowerText(With(kBatchBias, "t[n, 0, j]"), {{"M", 1}});
  ASSERT_TRUE(unit.ok()) << unit.status().ToString();
  EXPECT_TRUE(sched::ReadsAtIterVars(FindBlock(*unit, "out"), StoredBuffer(*unit, "t")));
}

TEST(IterVarReadsTest, AConstantOneStaysRejected) {
  auto dense = LowerText(With(kBatchDense, "acc[n, 1, j]"));
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  Schedule sch(*dense);
  EXPECT_TRUE(IsInvalid(EpilogueIntoTile(sch), {"reverse_compute_at(out", "own iteration variables"}));
  auto bias = LowerText(With(kBatchBias, "t[n, 1, j]"));
  ASSERT_TRUE(bias.ok()) << bias.status().ToString();
  Schedule inl(*bias);
  EXPECT_TRUE(IsInvalid(InlineConsumer(inl), {"reverse_compute_inline(out", "distinct iteration variables"}));
  // A 1 in a unit dimension names no element; the predicate refuses it too.
  const ir::Block* out = FindBlock(*bias, "out");
  const ir::BufferNode* t = StoredBuffer(*bias, "t");
  std::vector<ir::Expr> at_one = {ir::Expr(int64_t(1)), out->iter_vars[1].var, out->iter_vars[2].var};
  std::vector<ir::Expr> at_zero = {ir::Expr(int64_t(0)), out->iter_vars[1].var, out->iter_vars[2].var};
  ir::Buffer t_buffer = FindBlock(*bias, "t")->body.as<ir::Store>()->buffer;
  ir::Expr one = ir::Load::Make(t_buffer, at_one), zero = ir::Load::Make(t_buffer, at_zero);
  EXPECT_FALSE(sched::IsUnitZeroIndex(out, one.as<ir::Load>(), 0));
  EXPECT_TRUE(sched::IsUnitZeroIndex(out, zero.as<ir::Load>(), 0));
  EXPECT_EQ(t, t_buffer.get());
}

TEST(IterVarReadsTest, AZeroForAVariableTheReadAlreadyUsesIsNoVariable) {
  // out[n, m] = acc[0, n]: n indexes dimension 1, so the 0 cannot be n too.
  constexpr std::string_view kTwice = R"(
workload twice(N = 1, K = 3) {
  A = input f32[N, N, K]
  acc[a, b] = sum(k: K) A[a, b, k]
  out[n: N, m: N] = acc[0, n]
  output out
}
)";
  auto f = LowerText(kTwice);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(sched::ReadsAtIterVars(FindBlock(*f, "out"), StoredBuffer(*f, "acc")));
  Schedule sch(*f);
  auto l = Loops(sch, "acc");
  ASSERT_TRUE(l.ok());
  auto out = sch.GetBlock("out");
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(IsInvalid(sch.ReverseComputeAt(*out, (*l)[0]), {"reverse_compute_at(out", "own iteration variables"}));
}

}  // namespace
}  // namespace tunefarm::testing
