// VerifyGpuBindings: each problem it names (and the programs it lets through),
// on small hand-built kernels; every error names the loop or buffer at fault.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/verify_gpu.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {
namespace {

using namespace ir;

Stmt Bound(const Var& v, Expr extent, const std::string& tag, Stmt body) {
  return For::Make(v, Expr(int64_t(0)), extent, ForKind::kThreadBinding, std::move(body), tag);
}
Stmt Serial(const Var& v, int64_t extent, Stmt body) {
  return For::Make(v, Expr(int64_t(0)), Expr(extent), ForKind::kSerial, std::move(body));
}

// A function writing `out` (f32[4096]) with `body`.
struct Fixture {
  Buffer out = MakeBuffer("out", DataType::Float(32), {4096});
  Var bx{"bx"}, tx{"tx"}, ty{"ty"}, tz{"tz"}, t2{"t2"}, k{"k"};
  PrimFunc Func(Stmt body) const { return PrimFunc{"f", {out}, 0, std::move(body)}; }
  Stmt StoreOut(Expr index, Expr value = Expr(1.0)) const { return Store::Make(out, std::move(value), {std::move(index)}); }
};

// Expects InvalidArgument whose message holds every one of `words`.
::testing::AssertionResult Rejects(const PrimFunc& f, const std::vector<std::string>& words,
                                   const GpuLimits& limits = {}) {
  Status s = VerifyGpuBindings(f, limits);
  if (s.ok()) return ::testing::AssertionFailure() << "accepted:\n" << ToString(f);
  if (s.code() != StatusCode::kInvalidArgument) return ::testing::AssertionFailure() << s.ToString();
  for (const std::string& w : words) {
    if (s.message().find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << w << "': " << s.message();
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Accepts(const PrimFunc& f, const GpuLimits& limits = {}) {
  Status s = VerifyGpuBindings(f, limits);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.ToString() << "\n" << ToString(f);
}

TEST(VerifyGpuBindingsTest, AcceptsATiledKernelWithSharedAndLocalBuffers) {
  Fixture x;
  Buffer sh = MakeBuffer("tile", DataType::Float(32), {64}, MemoryScope::kShared);
  Buffer acc = MakeBuffer("acc", DataType::Float(32), {1}, MemoryScope::kLocal);
  Stmt fetch = Bound(x.t2, Expr(int64_t(32)), "threadIdx.x", Store::Make(sh, Expr(2.0), {x.t2 * 2}));
  Stmt compute = Store::Make(acc, Load::Make(acc, {Expr(int64_t(0))}) + Load::Make(sh, {x.tx}), {Expr(int64_t(0))});
  Stmt k_loop = Serial(x.k, 4, SeqStmt::Make({Barrier::Make(), compute, Barrier::Make()}));
  Stmt thread = Bound(x.tx, Expr(int64_t(64)), "threadIdx.x",
                      Allocate::Make(acc, SeqStmt::Make({fetch, k_loop, x.StoreOut(x.bx * 64 + x.tx, Load::Make(acc, {Expr(int64_t(0))}))})));
  Stmt kernel = Bound(x.bx, Expr(int64_t(64)), "blockIdx.x", Allocate::Make(sh, thread));
  EXPECT_TRUE(Accepts(x.Func(kernel)));
}

TEST(VerifyGpuBindingsTest, AcceptsAGlobalStoreAtKernelLevel) {
  Fixture x;
  EXPECT_TRUE(Accepts(x.Func(Bound(x.bx, Expr(int64_t(16)), "blockIdx.x", x.StoreOut(x.bx)))));
}

TEST(VerifyGpuBindingsTest, RejectsTooManyThreadsPerBlock) {
  Fixture x;
  Stmt body = Bound(x.ty, Expr(int64_t(64)), "threadIdx.y", x.StoreOut(x.tx * 64 + x.ty));
  PrimFunc f = x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", body)));
  EXPECT_TRUE(Rejects(f, {"2048 threads per block", "loop bx", "loop tx", "loop ty"}));
  GpuLimits roomy;
  roomy.max_threads_per_block = 2048;
  EXPECT_TRUE(Accepts(f, roomy));
}

TEST(VerifyGpuBindingsTest, RejectsATagExtentOverItsLimit) {
  Fixture x;
  PrimFunc f = x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Bound(x.tz, Expr(int64_t(128)), "threadIdx.z", x.StoreOut(x.tz))));
  EXPECT_TRUE(Rejects(f, {"threadIdx.z", "128", "loop tz"}));
  Var by("by");
  PrimFunc grid = x.Func(Bound(by, Expr(int64_t(70000)), "blockIdx.y", x.StoreOut(Expr(int64_t(0)))));
  EXPECT_TRUE(Rejects(grid, {"blockIdx.y", "70000", "loop by"}));
}

TEST(VerifyGpuBindingsTest, RejectsANonConstantBoundExtent) {
  Fixture x;
  Var n("n");
  PrimFunc f = x.Func(LetStmt::Make(n, Expr(int64_t(8)),
                                    Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Bound(x.tx, n, "threadIdx.x", x.StoreOut(x.tx)))));
  EXPECT_TRUE(Rejects(f, {"loop tx", "constant"}));
}

TEST(VerifyGpuBindingsTest, RejectsABlockLoopUnderAThreadLoop) {
  Fixture x;
  Var by("by");
  PrimFunc f = x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x",
                            Bound(x.tx, Expr(int64_t(8)), "threadIdx.x",
                                  Bound(by, Expr(int64_t(4)), "blockIdx.y", x.StoreOut(by * 8 + x.tx)))));
  EXPECT_TRUE(Rejects(f, {"loop by", "under a threadIdx loop"}));
}

TEST(VerifyGpuBindingsTest, RejectsANestedBindingLargerThanItsEnclosingOne) {
  Fixture x;
  auto kernel = [&](int64_t outer, int64_t inner) {
    return x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x",
                        Bound(x.tx, Expr(outer), "threadIdx.x", Bound(x.t2, Expr(inner), "threadIdx.x", x.StoreOut(x.t2)))));
  };
  EXPECT_TRUE(Rejects(kernel(64, 128), {"loop t2", "128", "larger than the enclosing binding of threadIdx.x (64)"}));
  EXPECT_TRUE(Accepts(kernel(128, 64)));  // a guarded cooperative loop
}

TEST(VerifyGpuBindingsTest, AcceptsSiblingBindingsOfDifferentExtents) {
  Fixture x;
  Stmt a = Bound(x.tx, Expr(int64_t(64)), "threadIdx.x", x.StoreOut(x.tx));
  Stmt b = Bound(x.t2, Expr(int64_t(32)), "threadIdx.x", x.StoreOut(x.t2 + 64));
  EXPECT_TRUE(Accepts(x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", SeqStmt::Make({a, b})))));
}

TEST(VerifyGpuBindingsTest, RejectsSharedMemoryOverTheLimit) {
  Fixture x;
  Buffer big = MakeBuffer("big_tile", DataType::Float(32), {16384}, MemoryScope::kShared);  // 64 KiB
  Stmt thread = Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", Store::Make(big, Expr(1.0), {x.tx}));
  PrimFunc f = x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Allocate::Make(big, thread)));
  EXPECT_TRUE(Rejects(f, {"65536 bytes of shared memory", "big_tile", "loop bx"}));
  GpuLimits h100;
  h100.max_shared_bytes = 228 * 1024;
  EXPECT_TRUE(Accepts(f, h100));
}

TEST(VerifyGpuBindingsTest, RejectsSharedBuffersOutsideTheirKernel) {
  Fixture x;
  Buffer sh = MakeBuffer("tile", DataType::Float(32), {32}, MemoryScope::kShared);
  Stmt use = Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", Store::Make(sh, Expr(1.0), {x.tx}));
  // Allocated around the kernel, at the root.
  EXPECT_TRUE(Rejects(x.Func(Allocate::Make(sh, Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", use))),
                      {"shared buffer tile", "outside any kernel"}));
  // Used by a kernel that does not allocate it.
  EXPECT_TRUE(Rejects(x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", use)),
                      {"shared buffer tile", "outside the kernel that allocates it"}));

}

TEST(VerifyGpuBindingsTest, RejectsALocalBufferSharedAcrossThreads) {
  Fixture x;
  Buffer acc = MakeBuffer("acc", DataType::Float(32), {1}, MemoryScope::kLocal);
  Stmt thread = Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", Store::Make(acc, Expr(1.0), {Expr(int64_t(0))}));
  PrimFunc f = x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Allocate::Make(acc, thread)));
  EXPECT_TRUE(Rejects(f, {"local buffer acc", "outside the threadIdx loops", "written inside them"}));
  EXPECT_TRUE(Rejects(x.Func(Allocate::Make(acc, Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", thread))),
                      {"local buffer acc", "outside any kernel"}));
}

TEST(VerifyGpuBindingsTest, RejectsAGlobalBufferAllocatedAtKernelLevel) {
  Fixture x;
  Buffer tmp = MakeBuffer("tmp", DataType::Float(32), {32});
  Stmt thread = Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", Store::Make(tmp, Expr(1.0), {x.tx}));
  EXPECT_TRUE(Rejects(x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Allocate::Make(tmp, thread))),
                      {"global buffer tmp", "outside its threadIdx loops"}));
}

TEST(VerifyGpuBindingsTest, RejectsABarrierSomeThreadsDoNotReach) {
  Fixture x;
  auto kernel = [&](Stmt in_thread) {
    return x.Func(Bound(x.bx, Expr(int64_t(2)), "blockIdx.x", Bound(x.tx, Expr(int64_t(64)), "threadIdx.x", std::move(in_thread))));
  };
  // Under a branch on the thread index.
  EXPECT_TRUE(Rejects(kernel(IfThenElse::Make(LT::Make(x.tx, Expr(int64_t(5))), Barrier::Make())),
                      {"barrier", "branch on (tx < 5)", "threadIdx"}));
  // Under a loop whose extent depends on it.
  EXPECT_TRUE(Rejects(kernel(For::Make(x.k, Expr(int64_t(0)), x.tx, ForKind::kSerial, Barrier::Make())),
                      {"barrier", "loop k", "threadIdx"}));
  // Under a threadIdx loop narrower than the block (guarded).
  EXPECT_TRUE(Rejects(kernel(Bound(x.t2, Expr(int64_t(32)), "threadIdx.x", Barrier::Make())),
                      {"barrier", "loop t2", "32 of the 64 threads"}));
  // Under a uniform loop and branch: fine.
  EXPECT_TRUE(Accepts(kernel(Serial(x.k, 4, IfThenElse::Make(LT::Make(x.bx, Expr(int64_t(1))), Barrier::Make())))));
}

TEST(VerifyGpuBindingsTest, RejectsCodeOutsideAnyKernel) {
  Fixture x;
  EXPECT_TRUE(Rejects(x.Func(Serial(x.k, 8, x.StoreOut(x.k))), {"loop k", "outside any kernel"}));
  EXPECT_TRUE(Rejects(x.Func(x.StoreOut(Expr(int64_t(0)))), {"store to out", "outside any kernel"}));
  // A kernel's root is bound to blockIdx, not threadIdx alone.
  EXPECT_TRUE(Rejects(x.Func(Bound(x.tx, Expr(int64_t(32)), "threadIdx.x", x.StoreOut(x.tx))),
                      {"loop tx", "not bound to blockIdx"}));
}

TEST(VerifyGpuBindingsTest, LimitsOfCudaTargets) {
  for (const char* text : {"cuda -arch=sm_80", "cuda -arch=sm_90"}) {
    auto target = Target::Parse(text);
    ASSERT_TRUE(target.ok()) << text << ": " << target.status().ToString();
    GpuLimits limits = GpuLimitsFor(*target);
    EXPECT_EQ(limits.max_threads_per_block, 1024) << text;
    EXPECT_EQ(limits.max_shared_bytes, 48 * 1024) << text;
  }
}

}  // namespace
}  // namespace tunefarm
