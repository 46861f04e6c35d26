// Loop kinds, allocations and control flow through the LLVM code generator,
// each compared with the interpreter; widened loops are also checked to be
// real vector code.
#include <atomic>
#include <thread>

#include "../codegen_test_util.h"

namespace tunefarm {
namespace {

using namespace ir;  // NOLINT
using testing::MatchesInterpreter;

const DataType kF32 = DataType::Float(32);

PrimFunc Func(std::string name, std::vector<Buffer> params, size_t num_inputs, Stmt body) {
  PrimFunc f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.num_inputs = num_inputs;
  f.body = std::move(body);
  return f;
}

std::string IR(const PrimFunc& f) {
  auto ir = EmitLLVMIR(f, Target::Host());
  EXPECT_TRUE(ir.ok()) << ir.status().ToString();
  return ir.ok() ? *ir : "";
}

Stmt Loop(Var v, int64_t extent, ForKind kind, Stmt body) { return For::Make(v, Expr(0), Expr(extent), kind, body); }

// C[i, j] = sum_k A[i, k] * B[k, j] as a Block, loops in the order i, k, j.
PrimFunc Matmul(int64_t n, ForKind i_kind, ForKind k_kind, ForKind j_kind, const std::string& name) {
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  Buffer a = MakeBuffer("A", kF32, {n, n}), b = MakeBuffer("B", kF32, {n, n}), c = MakeBuffer("C", kF32, {n, n});
  Stmt block = Block::Make(
      "C", {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vj, n, IterKind::kSpatial, j}, IterVar{vk, n, IterKind::kReduce, k}},
      Store::Make(c, Expr(0.0), {vi, vj}),
      Store::Make(c, Load::Make(c, {vi, vj}) + Load::Make(a, {vi, vk}) * Load::Make(b, {vk, vj}), {vi, vj}));
  return Func(name, {a, b, c}, 2, Loop(i, n, i_kind, Loop(k, n, k_kind, Loop(j, n, j_kind, block))));
}

TEST(CodegenLoopsTest, SerialMatmulWithBlocks) {
  EXPECT_TRUE(MatchesInterpreter(Matmul(24, ForKind::kSerial, ForKind::kSerial, ForKind::kSerial, "mm_serial")));
}

TEST(CodegenLoopsTest, ParallelVectorizedMatmul) {
  PrimFunc f = Matmul(32, ForKind::kParallel, ForKind::kSerial, ForKind::kVectorized, "mm_par_vec");
  EXPECT_TRUE(MatchesInterpreter(f));
  std::string ir = IR(f);
  EXPECT_NE(ir.find("<32 x float>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tunefarm_parallel_for"), std::string::npos);
}

TEST(CodegenLoopsTest, UnrolledLoops) {
  EXPECT_TRUE(MatchesInterpreter(Matmul(8, ForKind::kSerial, ForKind::kUnrolled, ForKind::kUnrolled, "mm_unroll")));
  // Longer than the code generator replicates itself: loop with llvm.loop.unroll.full.
  EXPECT_TRUE(MatchesInterpreter(Matmul(80, ForKind::kSerial, ForKind::kSerial, ForKind::kUnrolled, "mm_unroll_md")));
}

TEST(CodegenLoopsTest, VectorizedReductionFallsBackToScalarLoop) {
  // k (a reduction into C[i, j]) vectorized: not widenable, still correct.
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vk("vk");
  int64_t n = 16;
  Buffer a = MakeBuffer("A", kF32, {n, n}), b = MakeBuffer("B", kF32, {n, n}), c = MakeBuffer("C", kF32, {n, n});
  Stmt block = Block::Make(
      "C", {IterVar{vi, n, IterKind::kSpatial, i}, IterVar{vj, n, IterKind::kSpatial, j}, IterVar{vk, n, IterKind::kReduce, k}},
      Store::Make(c, Expr(0.0), {vi, vj}),
      Store::Make(c, Load::Make(c, {vi, vj}) + Load::Make(a, {vi, vk}) * Load::Make(b, {vk, vj}), {vi, vj}));
  PrimFunc f = Func("mm_vec_k", {a, b, c}, 2,
                    Loop(i, n, ForKind::kSerial, Loop(j, n, ForKind::kSerial, Loop(k, n, ForKind::kVectorized, block))));
  EXPECT_TRUE(MatchesInterpreter(f));
}

TEST(CodegenLoopsTest, VectorizedContiguousAndBroadcast) {
  Var i("i"), j("j");
  Buffer a = MakeBuffer("A", kF32, {8, 16}), b = MakeBuffer("B", kF32, {16}), s = MakeBuffer("S", kF32, {8});
  Buffer out = MakeBuffer("out", kF32, {8, 16});
  Stmt body = Store::Make(out, Load::Make(a, {i, j}) * Load::Make(s, {i}) + Load::Make(b, {j}), {i, j});
  PrimFunc f = Func("vec_contig", {a, b, s, out}, 3, Loop(i, 8, ForKind::kSerial, Loop(j, 16, ForKind::kVectorized, body)));
  EXPECT_TRUE(MatchesInterpreter(f));
  std::string ir = IR(f);
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("gather"), std::string::npos) << ir;
}

TEST(CodegenLoopsTest, VectorizedGatherScatterAndReverse) {
  Var i("i"), j("j");
  int64_t n = 16;
  Buffer a = MakeBuffer("A", kF32, {n, n}), out = MakeBuffer("out", kF32, {n, n}), rev = MakeBuffer("rev", kF32, {n, n});
  // out[j, i] = A[i, j] * 2 (scatter), rev[i, j] = A[j, n-1-j] (gather, stride -n-1).
  Stmt body = SeqStmt::Make({Store::Make(out, Load::Make(a, {i, j}) * Expr(2.0), {j, i}),
                             Store::Make(rev, Load::Make(a, {j, Expr(n - 1) - j}), {i, j})});
  PrimFunc f = Func("vec_gather", {a, out, rev}, 1, Loop(i, n, ForKind::kSerial, Loop(j, n, ForKind::kVectorized, body)));
  EXPECT_TRUE(MatchesInterpreter(f));
  std::string ir = IR(f);
  EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << ir;
}

// out[j] = A[S * j] (under a guard on every other lane when `guarded`), A
// exactly as long as the reads need: a load of the whole span S * lanes
// would pass its end by S - 1 elements.
PrimFunc StridedRead(int64_t stride, int64_t lanes, bool guarded) {
  Var j("j");
  Buffer a = MakeBuffer("A", kF32, {stride * (lanes - 1) + 1}), out = MakeBuffer("out", kF32, {lanes});
  Expr value = Load::Make(a, {Expr(stride) * j}) * Expr(2.0);
  if (guarded) value = Select::Make(EQ::Make(j % Expr(2), Expr(0)), value, Expr(-1.0));
  return Func("vec_stride" + std::to_string(stride), {a, out}, 1, Loop(j, lanes, ForKind::kVectorized, Store::Make(out, value, {j})));
}

TEST(CodegenLoopsTest, SmallConstantStridesLoadWholeVectorsAndShuffle) {
  for (int64_t stride : {2, 3, 4, 5}) {
    for (int64_t lanes : {1, 7, 16, 17}) {
      for (bool guarded : {false, true}) {
        SCOPED_TRACE("stride " + std::to_string(stride) + ", " + std::to_string(lanes) + " lanes" + (guarded ? ", guarded" : ""));
        PrimFunc f = StridedRead(stride, lanes, guarded);
        EXPECT_TRUE(MatchesInterpreter(f));
        if (lanes == 1) continue;
        std::string ir = IR(f);
        // Strides up to 4: a masked load of the span and a shuffle; 5: a gather.
        EXPECT_EQ(ir.find("gather") == std::string::npos, stride <= 4) << ir;
        if (stride <= 4) {
          EXPECT_NE(ir.find("shufflevector"), std::string::npos) << ir;
        }
      }
    }
  }
}

TEST(CodegenLoopsTest, VectorizedNonAffineIndex) {
  // out[j] = A[j / 4 * 4 + (3 - j % 4)] -- floor div/mod of the lane index: gathers.
  Var j("j");
  Buffer a = MakeBuffer("A", kF32, {32}), out = MakeBuffer("out", kF32, {32});
  Stmt body = Store::Make(out, Load::Make(a, {j / Expr(4) * Expr(4) + (Expr(3) - j % Expr(4))}), {j});
  EXPECT_TRUE(MatchesInterpreter(Func("vec_nonaffine", {a, out}, 1, Loop(j, 32, ForKind::kVectorized, body))));
}

// out[i] = select(0 <= i - 1 < n, A[i - 1], 0): the load is out of bounds exactly where the guard is false.
PrimFunc PaddedShift(ForKind kind, const std::string& name) {
  int64_t n = 16;
  Var i("i");
  Buffer a = MakeBuffer("A", kF32, {n}), out = MakeBuffer("out", kF32, {n + 2});
  Expr src = i - Expr(1);
  Expr guard = And::Make(GE::Make(src, Expr(0)), LT::Make(src, Expr(n)));
  Stmt body = Store::Make(out, Select::Make(guard, Load::Make(a, {src}) * Expr(3.0), Expr(-1.0)), {i});
  return Func(name, {a, out}, 1, Loop(i, n + 2, kind, body));
}

TEST(CodegenLoopsTest, SelectGuardsOutOfBoundsLoad) {
  EXPECT_TRUE(MatchesInterpreter(PaddedShift(ForKind::kSerial, "pad_serial")));
  EXPECT_TRUE(MatchesInterpreter(PaddedShift(ForKind::kVectorized, "pad_vec")));
  std::string ir = IR(PaddedShift(ForKind::kVectorized, "pad_vec"));
  EXPECT_NE(ir.find("llvm.masked"), std::string::npos) << ir;
}

TEST(CodegenLoopsTest, PaddedConvGuardUniformAndVarying) {
  // 2-D 3x3 "same" convolution on one channel: rows guarded uniformly, columns per lane.
  int64_t h = 8, w = 16;
  Var y("y"), x("x"), r("r"), s("s");
  Buffer in = MakeBuffer("in", kF32, {h, w}), k = MakeBuffer("k", kF32, {3, 3}), out = MakeBuffer("out", kF32, {h, w});
  Expr iy = y + r - Expr(1), ix = x + s - Expr(1);
  Expr ok = And::Make(And::Make(GE::Make(iy, Expr(0)), LT::Make(iy, Expr(h))),
                      And::Make(GE::Make(ix, Expr(0)), LT::Make(ix, Expr(w))));
  Expr val = Select::Make(ok, Load::Make(in, {iy, ix}), Expr(0.0)) * Load::Make(k, {r, s});
  Stmt body = Store::Make(out, Load::Make(out, {y, x}) + val, {y, x});
  Stmt init = Loop(y, h, ForKind::kSerial, Loop(x, w, ForKind::kVectorized, Store::Make(out, Expr(0.0), {y, x})));
  Stmt nest = Loop(y, h, ForKind::kParallel,
                   Loop(r, 3, ForKind::kSerial, Loop(s, 3, ForKind::kUnrolled, Loop(x, w, ForKind::kVectorized, body))));
  EXPECT_TRUE(MatchesInterpreter(Func("conv_pad", {in, k, out}, 2, SeqStmt::Make({init, nest}))));
}

TEST(CodegenLoopsTest, VectorizedIfThenElseAndLets) {
  Var i("i"), j("j"), t("t", kF32);
  Buffer a = MakeBuffer("A", kF32, {4, 16}), out = MakeBuffer("out", kF32, {4, 16}), cnt = MakeBuffer("cnt", kF32, {4});
  // let t = A[i, j] * 2; if (t > 0) out = t + t else { out = -1; if (i == 2) cnt[i] = 7 }
  Stmt inner = LetStmt::Make(
      t, Load::Make(a, {i, j}) * Expr(2.0),
      IfThenElse::Make(GT::Make(t, Expr(0.0)), Store::Make(out, Expr(t) + Expr(t), {i, j}),
                       SeqStmt::Make({Store::Make(out, Expr(-1.0), {i, j}),
                                      IfThenElse::Make(EQ::Make(i, Expr(2)), Store::Make(cnt, Expr(7.0), {i}))})));
  PrimFunc f = Func("vec_if", {a, out, cnt}, 1, Loop(i, 4, ForKind::kSerial, Loop(j, 16, ForKind::kVectorized, inner)));
  EXPECT_TRUE(MatchesInterpreter(f));
  EXPECT_NE(IR(f).find("<16 x float>"), std::string::npos);
}

TEST(CodegenLoopsTest, ScalarIfThenElse) {
  Var i("i");
  Buffer a = MakeBuffer("A", DataType::Int(32), {64}), out = MakeBuffer("out", DataType::Int(32), {64});
  Expr ai = Load::Make(a, {i});
  Stmt body = IfThenElse::Make(LT::Make(ai, MakeConst(DataType::Int(32), 0)), Store::Make(out, ai * ai, {i}),
                               IfThenElse::Make(EQ::Make(i % Expr(3), Expr(0)), Store::Make(out, ai + ai, {i})));
  EXPECT_TRUE(MatchesInterpreter(Func("scalar_if", {a, out}, 1, Loop(i, 64, ForKind::kSerial, body))));
}

TEST(CodegenLoopsTest, ParallelWithCapturedLetsAndNestedLoops) {
  Var o("o"), i("i"), j("j"), k("k"), base("base"), scale("scale", kF32);
  Buffer a = MakeBuffer("A", kF32, {3, 10, 16}), s = MakeBuffer("S", kF32, {3}), out = MakeBuffer("out", kF32, {3, 10, 16});
  Buffer total = MakeBuffer("total", kF32, {3, 10});
  // for o: let scale = S[o]; for i in [1, 9) parallel: let base = i * 16;
  //   for j vectorized: out[o, i, j] = A[o, i, j] * scale + base;  for k: total[o, i] += A[o, i, k]
  Stmt par_body = LetStmt::Make(
      base, i * Expr(16),
      SeqStmt::Make({Loop(j, 16, ForKind::kVectorized,
                          Store::Make(out, Load::Make(a, {o, i, j}) * Expr(scale) + Cast::Make(kF32, base), {o, i, j})),
                     Store::Make(total, Expr(0.0), {o, i}),
                     Loop(k, 16, ForKind::kSerial,
                          Store::Make(total, Load::Make(total, {o, i}) + Load::Make(a, {o, i, k}), {o, i}))}));
  Stmt nest = Loop(o, 3, ForKind::kSerial,
                   LetStmt::Make(scale, Load::Make(s, {o}),
                                 For::Make(i, Expr(1), Expr(8), ForKind::kParallel, par_body)));
  EXPECT_TRUE(MatchesInterpreter(Func("par_lets", {a, s, out, total}, 2, nest)));
}

TEST(CodegenLoopsTest, NestedParallelAndI32LoopVar) {
  Var i("i", DataType::Int(32)), j("j");
  Buffer out = MakeBuffer("out", DataType::Int(32), {37, 5});
  Stmt body = Store::Make(out, i * MakeConst(DataType::Int(32), 10) + Cast::Make(DataType::Int(32), j), {i, j});
  Stmt nest = For::Make(i, MakeConst(DataType::Int(32), 0), MakeConst(DataType::Int(32), 37), ForKind::kParallel,
                        Loop(j, 5, ForKind::kParallel, body));
  EXPECT_TRUE(MatchesInterpreter(Func("par_nested", {out}, 0, nest)));
}

TEST(CodegenLoopsTest, StackAndHeapAllocations) {
  for (int64_t n : {int64_t{64}, int64_t{40000}}) {  // 256 B on the stack, 160 KB on the heap
    Var p("p"), i("i");
    Buffer a = MakeBuffer("A", kF32, {4, n}), out = MakeBuffer("out", kF32, {4, n});
    Buffer tmp = MakeBuffer("tmp", kF32, {n}, MemoryScope::kLocal);
    Stmt fill = Loop(i, n, ForKind::kSerial, Store::Make(tmp, Load::Make(a, {p, i}) * Expr(2.0), {i}));
    Stmt use = Loop(i, n, ForKind::kSerial,
                    Store::Make(out, Load::Make(tmp, {i}) + Load::Make(tmp, {Expr(n - 1) - i}), {p, i}));
    // Allocation inside a parallel loop (one per iteration) and one outside around a serial loop.
    PrimFunc inside = Func("alloc_in_" + std::to_string(n), {a, out}, 1,
                           Loop(p, 4, ForKind::kParallel, Allocate::Make(tmp, SeqStmt::Make({fill, use}))));
    EXPECT_TRUE(MatchesInterpreter(inside)) << n;
    PrimFunc outside = Func("alloc_out_" + std::to_string(n), {a, out}, 1,
                            Allocate::Make(tmp, Loop(p, 4, ForKind::kSerial, SeqStmt::Make({fill, use}))));
    EXPECT_TRUE(MatchesInterpreter(outside)) << n;
    std::string ir = IR(outside);
    EXPECT_EQ(ir.find("tunefarm_alloc") != std::string::npos, n > 1000) << ir;
  }
}

TEST(CodegenLoopsTest, FailedHeapAllocationIsAnErrorStatus) {
  // 2^48 floats cannot be allocated: the kernel returns an error code, from inside a parallel body too.
  Var p("p");
  Buffer out = MakeBuffer("out", kF32, {4});
  Buffer huge = MakeBuffer("huge", kF32, {int64_t{1} << 48});
  Stmt use = SeqStmt::Make({Store::Make(huge, Expr(1.0), {p}), Store::Make(out, Load::Make(huge, {p}), {p})});
  for (ForKind kind : {ForKind::kSerial, ForKind::kParallel}) {
    PrimFunc f = Func("oom", {out}, 0, For::Make(p, Expr(0), Expr(4), kind, Allocate::Make(huge, use)));
    auto k = JitCompile(f, Target::Host());
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    HostBuffer o(kF32, {4});
    Status s = (*k)->Run({o.data()});
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("out of memory"), std::string::npos) << s.ToString();
  }
}

TEST(CodegenLoopsTest, ConcurrentCompilesAndRuns) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      PrimFunc f = PaddedShift(t % 2 ? ForKind::kVectorized : ForKind::kSerial, "conc" + std::to_string(t));
      if (!MatchesInterpreter(f, {uint64_t(t)})) failures++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(CodegenLoopsTest, ThreadBindingIsUnimplementedOnCpu) {
  Var i("i");
  Buffer out = MakeBuffer("out", kF32, {32});
  PrimFunc f = Func("bound", {out}, 0,
                    For::Make(i, Expr(0), Expr(32), ForKind::kThreadBinding, Store::Make(out, Expr(1.0), {i}), "threadIdx.x"));
  auto k = JitCompile(f, Target::Host());
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(k.status().message().find("threadIdx.x"), std::string::npos);
}

TEST(CodegenLoopsTest, RunChecksArgumentCount) {
  PrimFunc f = PaddedShift(ForKind::kSerial, "argcount");
  auto k = JitCompile(f, Target::Host());
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ((*k)->Run({nullptr}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*k)->name(), "argcount");
}

}  // namespace
}  // namespace tunefarm
