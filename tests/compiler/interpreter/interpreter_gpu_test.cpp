// The reference interpreter on GPU-bound IR: blocks run serially, a block's
// threads in phases between barriers, shared buffers one per block, local
// ones per thread; broken programs come back as errors, never as a hang.
#include <gtest/gtest.h>

#include "../gpu_matmul_test_util.h"
#include "../schedule_test_util.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {
namespace {

using namespace ir;
using testing::GpuMatmul;
using testing::GpuMatmulOptions;

PrimFunc DefaultMatmul(int64_t m, int64_t n, int64_t k) {
  auto base = testing::LowerText(testing::kMatmul, {{"M", m}, {"N", n}, {"K", k}});
  EXPECT_TRUE(base.ok()) << base.status().ToString();
  return *base;
}

TEST(InterpreterGpuTest, SharedTileMatmulEqualsTheDefaultProgram) {
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{{7, 17, 33}, {1, 1, 1}, {16, 16, 16}, {9, 31, 5}}) {
    PrimFunc base = DefaultMatmul(m, n, k);
    for (bool under_threads : {false, true}) {
      GpuMatmulOptions o;
      o.shared_under_threads = under_threads;
      EXPECT_TRUE(testing::SameResults(base, GpuMatmul(base, o), /*jit=*/false))
          << m << "x" << n << "x" << k << " shared under threads: " << under_threads;
    }
  }
}

TEST(InterpreterGpuTest, OtherTileShapesEqualTheDefaultProgram) {
  PrimFunc base = DefaultMatmul(13, 10, 21);
  GpuMatmulOptions o;
  o.tm = 2;
  o.tn = 3;
  o.tk = 3;  // B's fetch takes two passes of six threads, guarded by an if
  EXPECT_TRUE(testing::SameResults(base, GpuMatmul(base, o), /*jit=*/false));
}

// Without either barrier the threads' phases interleave differently: a
// thread reads a tile others have not fetched yet (poisoned), or one the
// first threads already overwrote with the next k0 tile.
TEST(InterpreterGpuTest, MatmulMissingABarrierComputesWrongResults) {
  PrimFunc base = DefaultMatmul(7, 17, 33);
  for (int drop : {0, 1}) {
    GpuMatmulOptions o;
    o.drop_barrier = drop;
    PrimFunc gpu = GpuMatmul(base, o);
    std::vector<HostBuffer> expected = testing::RandomArgs(base, 5), actual = testing::CopyArgs(expected);
    ASSERT_TRUE(Interpret(base, testing::HostPointers(expected)).ok());
    Status s = Interpret(gpu, testing::HostPointers(actual));
    if (!s.ok()) continue;  // an error is as good a sign as a wrong result
    CompareResult cmp = CompareBuffers(actual[2], expected[2]);
    EXPECT_FALSE(cmp.equal) << "dropping barrier " << drop << " went unnoticed";
  }
}

// One block of `threads` threadIdx.x threads over a shared buffer S: each
// thread stores `value` to S[tx], then (after a barrier when `barrier`)
// stores S[(tx + 1) % threads] to Out[tx].
PrimFunc RotateThroughShared(int64_t threads, Expr (*value)(const Buffer& in, const Var& tx), bool barrier) {
  Buffer in = MakeBuffer("In", DataType::Float(32), {threads});
  Buffer out = MakeBuffer("Out", DataType::Float(32), {threads});
  Buffer s = MakeBuffer("S", DataType::Float(32), {threads}, MemoryScope::kShared);
  Var bx("bx"), tx("tx");
  std::vector<Stmt> body = {Store::Make(s, value(in, tx), {tx})};
  if (barrier) body.push_back(Barrier::Make());
  body.push_back(Store::Make(out, Load::Make(s, {(Expr(tx) + 1) % threads}), {tx}));
  Stmt kernel = For::Make(bx, Expr(0), Expr(2), ForKind::kThreadBinding,
                          Allocate::Make(s, For::Make(tx, Expr(0), Expr(threads), ForKind::kThreadBinding,
                                                      SeqStmt::Make(body), "threadIdx.x")),
                          "blockIdx.x");
  return PrimFunc{"rotate", {in, out}, 1, kernel};
}

Expr PlainLoad(const Buffer& in, const Var& tx) { return Load::Make(in, {tx}); }
// Thread 5 reads far past the end of In.
Expr ThreadFiveOutOfBounds(const Buffer& in, const Var& tx) {
  return Load::Make(in, {Select::Make(EQ::Make(tx, Expr(5)), Expr(1000), Expr(tx))});
}

TEST(InterpreterGpuTest, ThreadsExchangeValuesThroughSharedMemory) {
  for (int64_t threads : {8, 1024}) {  // 1024: the largest CUDA block
    PrimFunc f = RotateThroughShared(threads, PlainLoad, true);
    HostBuffer in(DataType::Float(32), {threads}), out(DataType::Float(32), {threads});
    for (int64_t i = 0; i < threads; ++i) in.SetFromDouble(i, double(10 + i));
    ASSERT_TRUE(Interpret(f, {&in, &out}).ok());
    for (int64_t i = 0; i < threads; ++i) ASSERT_EQ(out.GetAsDouble(i), double(10 + (i + 1) % threads)) << i;
    // Without the barrier thread 0 reads S[1] before thread 1 wrote it.
    PrimFunc racy = RotateThroughShared(threads, PlainLoad, false);
    ASSERT_TRUE(Interpret(racy, {&in, &out}).ok());
    EXPECT_NE(out.GetAsDouble(0), 11);
  }
}

TEST(InterpreterGpuTest, AnErrorInOneThreadIsTheStatusOfTheCall) {
  for (bool barrier : {true, false}) {
    PrimFunc f = RotateThroughShared(8, ThreadFiveOutOfBounds, barrier);
    HostBuffer in(DataType::Float(32), {8}), out(DataType::Float(32), {8});
    Status s = Interpret(f, {&in, &out});
    EXPECT_TRUE(testing::IsInvalid(s, {"out-of-bounds load of In", "index 1000", "thread (5, 0, 0)", "blockIdx.x=0"}))
        << "barrier: " << barrier;
  }
}

// for tx in threadIdx.x(8): { S[tx] = In[tx]; if (tx < 3) { barrier }; Out[tx] = S[tx] }
PrimFunc BarrierUnderThreadBranch(bool else_barrier) {
  Buffer in = MakeBuffer("In", DataType::Float(32), {8});
  Buffer out = MakeBuffer("Out", DataType::Float(32), {8});
  Buffer s = MakeBuffer("S", DataType::Float(32), {8}, MemoryScope::kShared);
  Var bx("bx"), tx("tx");
  Stmt body =
      SeqStmt::Make({Store::Make(s, Load::Make(in, {tx}), {tx}),
                     IfThenElse::Make(LT::Make(tx, Expr(3)), Barrier::Make(), else_barrier ? Barrier::Make() : Stmt()),
                     Store::Make(out, Load::Make(s, {tx}), {tx})});
  Stmt kernel = For::Make(
      bx, Expr(0), Expr(1), ForKind::kThreadBinding,
      Allocate::Make(s, For::Make(tx, Expr(0), Expr(8), ForKind::kThreadBinding, body, "threadIdx.x")), "blockIdx.x");
  return PrimFunc{"diverge", {in, out}, 1, kernel};
}

TEST(InterpreterGpuTest, ABarrierOnlySomeThreadsReachIsAnError) {
  PrimFunc f = BarrierUnderThreadBranch(false);
  HostBuffer in(DataType::Float(32), {8}), out(DataType::Float(32), {8});
  Status s = Interpret(f, {&in, &out});
  EXPECT_TRUE(testing::IsInvalid(s, {"the barrier under `if (tx < 3)` in `for tx (threadIdx.x)`", "only some threads",
                                     "thread (0, 0, 0) waits there", "thread (3, 0, 0) ends without reaching it"}))
      << s.ToString();
}

TEST(InterpreterGpuTest, ThreadsWaitingAtDifferentBarriersIsAnError) {
  PrimFunc f = BarrierUnderThreadBranch(true);
  HostBuffer in(DataType::Float(32), {8}), out(DataType::Float(32), {8});
  EXPECT_TRUE(testing::IsInvalid(Interpret(f, {&in, &out}), {"different barriers", "at the barrier under `if (tx < 3)`",
                                                             "at the barrier under `else of if (tx < 3)`"}));
}

// A 2-D block (threadIdx.x and threadIdx.y) transposes tiles through shared
// memory; a vthread loop inside runs as a serial loop in each thread, and a
// kLocal buffer is each thread's own.
TEST(InterpreterGpuTest, TwoDimensionalBlocksTransposeThroughSharedMemory) {
  const int64_t rows = 7, cols = 10, t = 4;
  Buffer a = MakeBuffer("A", DataType::Float(32), {rows, cols});
  Buffer out = MakeBuffer("Out", DataType::Float(32), {cols, rows});
  Buffer s = MakeBuffer("S", DataType::Float(32), {t, t}, MemoryScope::kShared);
  Buffer mine = MakeBuffer("mine", DataType::Float(32), {2}, MemoryScope::kLocal);
  Var by("by"), bx("bx"), ty("ty"), tx("tx"), v("v");
  Expr r = Expr(by) * t + ty, c = Expr(bx) * t + tx;
  Expr r2 = Expr(bx) * t + ty, c2 = Expr(by) * t + tx;
  auto inside = [](Expr i, int64_t hi, Expr j, int64_t hj) {
    return And::Make(LT::Make(i, Expr(hi)), LT::Make(j, Expr(hj)));
  };
  Expr loaded = Select::Make(inside(r, rows, c, cols), Load::Make(a, {r, c}), Expr(0.0));
  Stmt body = Allocate::Make(
      mine, SeqStmt::Make(
                {For::Make(v, Expr(0), Expr(2), ForKind::kThreadBinding,
                           Store::Make(mine, Select::Make(EQ::Make(v, Expr(1)), loaded, Expr(0.0)), {v}), "vthread"),
                 Store::Make(s, Load::Make(mine, {Expr(0)}) + Load::Make(mine, {Expr(1)}), {ty, tx}), Barrier::Make(),
                 IfThenElse::Make(inside(r2, cols, c2, rows), Store::Make(out, Load::Make(s, {tx, ty}), {r2, c2}))}));
  Stmt kernel = For::Make(
      by, Expr((rows + t - 1) / t), Expr((rows + t - 1) / t), ForKind::kThreadBinding,
      For::Make(
          bx, Expr(0), Expr((cols + t - 1) / t), ForKind::kThreadBinding,
          Allocate::Make(s, For::Make(ty, Expr(0), Expr(t), ForKind::kThreadBinding,
                                      For::Make(tx, Expr(0), Expr(t), ForKind::kThreadBinding, body, "threadIdx.x"),
                                      "threadIdx.y")),
          "blockIdx.x"),
      "blockIdx.y");
  // The by loop runs from its min: shift it back so the tiles start at row 0.
  kernel = Substitute(kernel, {{by.get(), Expr(by) - Expr((rows + t - 1) / t)}});
  PrimFunc f{"transpose", {a, out}, 1, kernel};
  HostBuffer ha(DataType::Float(32), {rows, cols}), hout(DataType::Float(32), {cols, rows});
  std::mt19937_64 rng(3);
  ha.FillRandom(rng);
  ASSERT_TRUE(Interpret(f, {&ha, &hout}).ok()) << ToString(f);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      EXPECT_EQ(hout.GetAsDouble(j * rows + i), ha.GetAsDouble(i * cols + j)) << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace tunefarm
