// DecomposeReduction through LowerBlocks on hand-built nests that are not
// perfect: the outer reduction loop ko also holds copy stages (and their
// staging buffers), as in the GPU kernels the CUDA sketch draws. The init
// leaves the reduction loops when nothing beside the path can see it, and
// stays guarded otherwise; either way the lowered program computes what the
// unscheduled one does (reference interpreter, odd sizes).
#include "tunefarm/compiler/lower/decompose_reduction.h"

#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/lower_blocks.h"

namespace tunefarm {
namespace {

using namespace ir;

struct StagedOptions {
  int64_t ki = 1;                 // ko runs ceil(K / ki) times
  bool ki_outside_ij = false;     // ko { stages; ki { i { j { C } } } } instead of ko { stages; i { j { ki { C } } } }
  bool local_accumulator = false;  // accumulate in C_local, written back to C after ko
  MemoryScope accumulator_scope = MemoryScope::kLocal;
  bool sibling_reads_accumulator = false;  // a stage under ko copies C[., 0] into an extra output T
};

struct Staged {
  PrimFunc func;
  Buffer acc;
  Var ko, ki;
};

// C[i, j] = sum_k A[i, k] * B[k, j] over `base`'s buffers, k split into ko
// and ki; under ko, A[:, ko*ki : +ki] and B[ko*ki : +ki, :] are first copied
// into staging buffers allocated there. A ragged last ko gets a predicate.
Staged StagedMatmul(const PrimFunc& base, const StagedOptions& o) {
  const Buffer a = base.params[0], b = base.params[1], c = base.params[2];
  const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const int64_t kos = (k + o.ki - 1) / o.ki;
  const DataType f32 = DataType::Float(32);
  Buffer a_s = MakeBuffer("A_s", f32, {m, o.ki}), b_s = MakeBuffer("B_s", f32, {o.ki, n});
  Buffer acc = o.local_accumulator ? MakeBuffer("C_local", f32, {m, n}, o.accumulator_scope) : c;
  Buffer t = MakeBuffer("T", f32, {m});
  Var ko("ko"), ki("ki"), i("i"), j("j"), ai("ai"), ak("ak"), bk("bk"), bj("bj"), ti("ti");
  Var vi("vi"), vj("vj"), vk("vk");
  auto serial = [](const Var& v, int64_t extent, Stmt body) {
    return For::Make(v, Expr(0), Expr(extent), ForKind::kSerial, std::move(body));
  };
  Expr a_col = Expr(ko) * o.ki + ak, b_row = Expr(ko) * o.ki + bk;
  Stmt copy_a = serial(ai, m, serial(ak, o.ki, Store::Make(a_s, Select::Make(LT::Make(a_col, Expr(k)),
                                                                             Load::Make(a, {ai, a_col}), Expr(0.0)),
                                                           {ai, ak})));
  Stmt copy_b = serial(bk, o.ki, serial(bj, n, Store::Make(b_s, Select::Make(LT::Make(b_row, Expr(k)),
                                                                             Load::Make(b, {b_row, bj}), Expr(0.0)),
                                                           {bk, bj})));
  Expr kk = Expr(vk) % o.ki;
  Stmt update = Store::Make(acc, Load::Make(acc, {vi, vj}) + Load::Make(a_s, {vi, kk}) * Load::Make(b_s, {kk, vj}),
                            {vi, vj});
  Expr k_binding = Expr(ko) * o.ki + ki;
  Expr predicate = kos * o.ki == k ? Expr() : LT::Make(k_binding, Expr(k));
  Stmt block = Block::Make("C",
                           {IterVar{vi, m, IterKind::kSpatial, i}, IterVar{vj, n, IterKind::kSpatial, j},
                            IterVar{vk, k, IterKind::kReduce, k_binding}},
                           Store::Make(acc, Expr(0.0), {vi, vj}), update, predicate);
  Stmt compute = o.ki_outside_ij ? serial(ki, o.ki, serial(i, m, serial(j, n, block)))
                                 : serial(i, m, serial(j, n, serial(ki, o.ki, block)));
  std::vector<Stmt> stages = {copy_a, copy_b};
  if (o.sibling_reads_accumulator) {
    stages.push_back(serial(ti, m, Store::Make(t, Load::Make(acc, {ti, Expr(0)}), {ti})));
  }
  stages.push_back(compute);
  Stmt body = serial(ko, kos, Allocate::Make(a_s, Allocate::Make(b_s, SeqStmt::Make(stages))));
  if (o.local_accumulator) {
    Var wi("wi"), wj("wj");
    Stmt write_back = serial(wi, m, serial(wj, n, Store::Make(c, Load::Make(acc, {wi, wj}), {wi, wj})));
    body = Allocate::Make(acc, SeqStmt::Make({body, write_back}));
  }
  PrimFunc f = base;
  f.name = "staged";
  f.body = body;
  if (o.sibling_reads_accumulator) f.params.push_back(t);
  return {f, acc, ko, ki};
}

PrimFunc Lowered(const PrimFunc& f) {
  PrimFunc out = f;
  out.body = LowerBlocks(f.body);
  return out;
}

const For* FindLoop(const Stmt& s, const Var& v) {
  const For* found = nullptr;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kFor && static_cast<const For*>(n)->loop_var.get() == v.get()) {
      found = static_cast<const For*>(n);
    }
  });
  return found;
}

// Stores into `acc` of a value that reads nothing: the init's.
int InitStores(const Stmt& s, const Buffer& acc) {
  int count = 0;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kStore) return;
    const auto* store = static_cast<const Store*>(n);
    bool reads = false;
    PostOrderVisit(Evaluate::Make(store->value), [&](const IRNode* e) { reads |= e->kind == IRNodeKind::kLoad; });
    count += store->buffer == acc && !reads;
  });
  return count;
}

bool SomeIfTests(const Stmt& s, const Var& v) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kIfThenElse) found |= UsesVar(static_cast<const IfThenElse*>(n)->condition, v.get());
  });
  return found;
}

// The init runs once, in front of ko, and nothing tests a reduction variable.
void ExpectInitHoisted(const Staged& s, const PrimFunc& lowered) {
  const For* ko = FindLoop(lowered.body, s.ko);
  ASSERT_NE(ko, nullptr) << ToString(lowered);
  EXPECT_EQ(InitStores(lowered.body, s.acc), 1) << ToString(lowered);
  EXPECT_EQ(InitStores(ko->body, s.acc), 0) << ToString(lowered);
  EXPECT_FALSE(SomeIfTests(lowered.body, s.ko)) << ToString(lowered);
  EXPECT_FALSE(SomeIfTests(lowered.body, s.ki)) << ToString(lowered);
}

// The init stays under ko, behind a test of the reduction variables.
void ExpectInitGuarded(const Staged& s, const PrimFunc& lowered) {
  const For* ko = FindLoop(lowered.body, s.ko);
  ASSERT_NE(ko, nullptr) << ToString(lowered);
  EXPECT_EQ(InitStores(ko->body, s.acc), 1) << ToString(lowered);
  EXPECT_TRUE(SomeIfTests(ko->body, s.ko)) << ToString(lowered);
}

PrimFunc Matmul(int64_t m, int64_t n, int64_t k) {
  auto f = testing::LowerText(testing::kMatmul, {{"M", m}, {"N", n}, {"K", k}});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

TEST(DecomposeReductionTest, InitLeavesAnOuterReductionLoopThatHoldsCopyStages) {
  struct Case {
    int64_t m, n, k, ki;
    bool ki_outside_ij, local;
  };
  for (const Case& c : {Case{7, 17, 101, 1, false, false}, Case{7, 17, 21, 3, false, true},
                        Case{17, 7, 21, 7, true, false}, Case{7, 17, 101, 1, true, true}}) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << " ki=" << c.ki);
    const PrimFunc base = Matmul(c.m, c.n, c.k);
    const Staged s = StagedMatmul(base, {c.ki, c.ki_outside_ij, c.local});
    const PrimFunc lowered = Lowered(s.func);
    ExpectInitHoisted(s, lowered);
    // The init nest has the spatial loops' extents, over fresh variables.
    if (!c.local) {
      const auto* seq = lowered.body.as<SeqStmt>();
      ASSERT_NE(seq, nullptr) << ToString(lowered);
      const auto* i_init = seq->seq[0].as<For>();
      ASSERT_NE(i_init, nullptr);
      EXPECT_EQ(*AsConstInt(i_init->extent), c.m);
      ASSERT_NE(i_init->body.as<For>(), nullptr);
      EXPECT_EQ(*AsConstInt(i_init->body.as<For>()->extent), c.n);
      EXPECT_EQ(i_init->loop_var.name(), "i_init");
    }
    EXPECT_TRUE(testing::SameResults(base, lowered, /*jit=*/false));
    EXPECT_TRUE(testing::SameResults(base, s.func, /*jit=*/true));  // the CPU pipeline lowers it itself
  }
}

TEST(DecomposeReductionTest, SiblingReadingTheAccumulatorKeepsTheInitGuarded) {
  const PrimFunc base = Matmul(7, 17, 21);
  StagedOptions o;
  o.ki = 3;
  o.sibling_reads_accumulator = true;
  const Staged s = StagedMatmul(base, o);
  const PrimFunc lowered = Lowered(s.func);
  ExpectInitGuarded(s, lowered);
  // T sees the partial sums of each ko step: the blocks' semantics decide it.
  EXPECT_TRUE(testing::SameResults(s.func, lowered, /*jit=*/false));
}

TEST(DecomposeReductionTest, PredicatedBlockKeepsTheInitGuarded) {
  const PrimFunc base = Matmul(7, 17, 101);
  StagedOptions o;
  o.ki = 4;  // 26 * 4 = 104: the last ko step is ragged
  const Staged s = StagedMatmul(base, o);
  const PrimFunc lowered = Lowered(s.func);
  ExpectInitGuarded(s, lowered);
  EXPECT_TRUE(testing::SameResults(base, lowered, /*jit=*/false));
}

TEST(DecomposeReductionTest, SharedAccumulatorBesideCopyStagesKeepsTheInitGuarded) {
  const PrimFunc base = Matmul(7, 17, 21);
  StagedOptions o;
  o.ki = 3;
  o.local_accumulator = true;
  o.accumulator_scope = MemoryScope::kShared;
  const Staged s = StagedMatmul(base, o);
  ExpectInitGuarded(s, Lowered(s.func));
}

// A loop under the reduction loop that no binding uses re-runs the guarded
// init at each of its iterations while k == 0: a hoisted init would not.
TEST(DecomposeReductionTest, LoopNoBindingUsesKeepsTheInitGuarded) {
  const int64_t n = 7, k = 17;
  Buffer a = MakeBuffer("A", DataType::Float(32), {n, k});
  Buffer s = MakeBuffer("S", DataType::Float(32), {n});
  Var kv("k"), r("r"), i("i"), vi("vi"), vk("vk");
  Stmt block = Block::Make("S", {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vk, k, IterKind::kReduce, kv}},
                           Store::Make(s, Expr(0.0), {vi}),
                           Store::Make(s, Load::Make(s, {vi}) + Load::Make(a, {vi, vk}), {vi}));
  Stmt nest = For::Make(kv, Expr(0), Expr(k), ForKind::kSerial,
                        For::Make(r, Expr(0), Expr(2), ForKind::kSerial,
                                  For::Make(i, Expr(0), Expr(n), ForKind::kSerial, block)));
  const PrimFunc f{"repeated", {a, s}, 1, nest};
  const PrimFunc lowered = Lowered(f);
  EXPECT_TRUE(SomeIfTests(lowered.body, kv)) << ToString(lowered);
  EXPECT_TRUE(testing::SameResults(f, lowered, /*jit=*/false));
}

TEST(DecomposeReductionTest, NotALoopOrNoReductionUnderItIsLeftAlone) {
  const PrimFunc base = Matmul(7, 17, 21);
  EXPECT_FALSE(DecomposeReduction(base.body).has_value());  // i: a spatial loop
  EXPECT_FALSE(DecomposeReduction(Store::Make(base.params[2], Expr(0.0), {Expr(0), Expr(0)})).has_value());
  const Staged s = StagedMatmul(base, {3, false, false});
  auto split = DecomposeReduction(s.func.body);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(InitStores(split->init, s.acc), 1);
  EXPECT_EQ(InitStores(split->rest, s.acc), 0);
}

}  // namespace
}  // namespace tunefarm
