// InsertGpuBarriers on hand-built kernels: where shared memory is written
// and read by different statements, and only there.
#include "tunefarm/compiler/lower/insert_gpu_barriers.h"

#include <gtest/gtest.h>

#include "../gpu_matmul_test_util.h"
#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {
namespace {

using namespace ir;
using testing::GpuMatmul;
using testing::GpuMatmulOptions;

int CountBarriers(const Stmt& s) {
  int n = 0;
  PostOrderVisit(s, [&](const IRNode* node) { n += node->kind == IRNodeKind::kBarrier; });
  return n;
}

const Buffer kIn = MakeBuffer("In", DataType::Float(32), {8});
const Buffer kOut = MakeBuffer("Out", DataType::Float(32), {8});
const Buffer kShared = MakeBuffer("S", DataType::Float(32), {8}, MemoryScope::kShared);

// for bx in blockIdx.x(2): allocate S: for tx in threadIdx.x(8): body(tx)
Stmt Kernel(const Var& tx, Stmt body) {
  return For::Make(
      Var("bx"), Expr(0), Expr(2), ForKind::kThreadBinding,
      Allocate::Make(kShared, For::Make(tx, Expr(0), Expr(8), ForKind::kThreadBinding, std::move(body), "threadIdx.x")),
      "blockIdx.x");
}

// The statements of the sequence under the kernel's threadIdx.x loop.
const std::vector<Stmt>& ThreadSeq(const Stmt& kernel) {
  const auto* tx = kernel.as<For>()->body.as<Allocate>()->body.as<For>();
  return tx->body.as<SeqStmt>()->seq;
}

TEST(InsertGpuBarriersTest, MatmulGetsABarrierAfterTheFetchAndAtTheEndOfTheK0Body) {
  PrimFunc base = *testing::LowerText(testing::kMatmul, {{"M", 7}, {"N", 17}, {"K", 33}});
  for (bool under_threads : {false, true}) {
    GpuMatmulOptions bare;
    bare.barriers = false;
    bare.shared_under_threads = under_threads;
    GpuMatmulOptions expected = bare;
    expected.barriers = true;
    PrimFunc f = GpuMatmul(base, bare);
    f.body = InsertGpuBarriers(f.body);
    EXPECT_EQ(ToString(f.body), ToString(GpuMatmul(base, expected).body));
    EXPECT_TRUE(testing::SameResults(base, f, /*jit=*/false));
    // Idempotent, and a program that has its barriers already is left alone.
    EXPECT_TRUE(InsertGpuBarriers(f.body).same_as(f.body));
  }
}

TEST(InsertGpuBarriersTest, NoSharedMemoryNoKernelNoBarrier) {
  PrimFunc base = *testing::LowerText(testing::kMatmul);
  EXPECT_TRUE(InsertGpuBarriers(base.body).same_as(base.body));
  // Threads exchanging values through global memory are not this pass's business.
  Var tx("tx");
  Stmt global = Kernel(tx, SeqStmt::Make({Store::Make(kOut, Load::Make(kIn, {tx}), {tx}),
                                          Store::Make(kOut, Load::Make(kOut, {(Expr(tx) + 1) % 8}), {tx})}));
  EXPECT_TRUE(InsertGpuBarriers(global).same_as(global));
  // Shared buffers outside any kernel: nothing to synchronise.
  Var i("i");
  Stmt host = Allocate::Make(
      kShared,
      SeqStmt::Make({For::Make(i, Expr(0), Expr(8), ForKind::kSerial, Store::Make(kShared, Load::Make(kIn, {i}), {i})),
                     Store::Make(kOut, Load::Make(kShared, {Expr(3)}), {Expr(0)})}));
  EXPECT_TRUE(InsertGpuBarriers(host).same_as(host));
}

TEST(InsertGpuBarriersTest, ReadsAfterWritesAndWritesAfterReadsAreSeparated) {
  Var tx("tx");
  // S[tx] = In[tx]; Out[tx] = S[7 - tx]; S[tx] = 0
  Stmt kernel = Kernel(tx, SeqStmt::Make({Store::Make(kShared, Load::Make(kIn, {tx}), {tx}),
                                          Store::Make(kOut, Load::Make(kShared, {Expr(7) - tx}), {tx}),
                                          Store::Make(kShared, Expr(0.0), {tx})}));
  Stmt out = InsertGpuBarriers(kernel);
  const std::vector<Stmt>& seq = ThreadSeq(out);
  ASSERT_EQ(seq.size(), 5u) << ToString(out);
  EXPECT_TRUE(seq[1].as<Barrier>() && seq[3].as<Barrier>()) << ToString(out);
  EXPECT_TRUE(InsertGpuBarriers(out).same_as(out));
}

TEST(InsertGpuBarriersTest, ALoopThatOnlyReadsGetsNoBarrierAtItsEnd) {
  Var tx("tx"), k("k");
  // S[tx] = In[tx]; for k: Out[tx] = Out[tx] + S[k]
  Stmt kernel = Kernel(
      tx, SeqStmt::Make({Store::Make(kShared, Load::Make(kIn, {tx}), {tx}),
                         For::Make(k, Expr(0), Expr(8), ForKind::kSerial,
                                   Store::Make(kOut, Load::Make(kOut, {tx}) + Load::Make(kShared, {k}), {tx}))}));
  Stmt out = InsertGpuBarriers(kernel);
  EXPECT_EQ(CountBarriers(out), 1) << ToString(out);
  EXPECT_TRUE(ThreadSeq(out)[1].as<Barrier>()) << ToString(out);
}

TEST(InsertGpuBarriersTest, NeverUnderAThreadDependentBranch) {
  Var tx("tx");
  // if (tx < 3) { S[tx] = In[tx] }; Out[tx] = S[0]: the barrier goes after the if.
  Stmt kernel = Kernel(
      tx, SeqStmt::Make({IfThenElse::Make(LT::Make(tx, Expr(3)), Store::Make(kShared, Load::Make(kIn, {tx}), {tx})),
                         Store::Make(kOut, Load::Make(kShared, {Expr(0)}), {tx})}));
  Stmt out = InsertGpuBarriers(kernel);
  ASSERT_EQ(CountBarriers(out), 1) << ToString(out);
  EXPECT_TRUE(ThreadSeq(out)[1].as<Barrier>()) << ToString(out);

  // Inside a thread-dependent if, or a threadIdx loop narrower than the
  // block, a sequence gets no barrier: some threads would never reach it.
  Var t2("t2");
  Stmt inner = SeqStmt::Make({Store::Make(kShared, Load::Make(kIn, {t2}), {t2}),
                              Store::Make(kOut, Load::Make(kShared, {Expr(3) - t2}), {t2})});
  Stmt guarded_if = Kernel(t2, IfThenElse::Make(LT::Make(t2, Expr(4)), inner));
  EXPECT_EQ(CountBarriers(InsertGpuBarriers(guarded_if)), 0) << ToString(InsertGpuBarriers(guarded_if));
  Stmt narrow =
      Kernel(tx, SeqStmt::Make({Store::Make(kOut, Expr(0.0), {tx}),
                                For::Make(t2, Expr(0), Expr(4), ForKind::kThreadBinding, inner, "threadIdx.x")}));
  EXPECT_EQ(CountBarriers(InsertGpuBarriers(narrow)), 0) << ToString(InsertGpuBarriers(narrow));
}

TEST(InsertGpuBarriersTest, ALoopBoundByTheThreadIndexIsThreadDependent) {
  Var tx("tx"), k("k");
  // for k in 0..tx: { S[tx] = In[k]; Out[tx] = S[7 - tx] }: threads run different trip counts.
  Stmt kernel = Kernel(tx, For::Make(k, Expr(0), tx, ForKind::kSerial,
                                     SeqStmt::Make({Store::Make(kShared, Load::Make(kIn, {k}), {tx}),
                                                    Store::Make(kOut, Load::Make(kShared, {Expr(7) - tx}), {tx})})));
  EXPECT_EQ(CountBarriers(InsertGpuBarriers(kernel)), 0);
}

}  // namespace
}  // namespace tunefarm
