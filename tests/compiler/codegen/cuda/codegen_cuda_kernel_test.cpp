// GenerateCuda on hand-built GPU loop IR: cooperative fetches narrower than
// the block (guarded), barriers, workspaces between kernels, 2-D blocks,
// vthreads, the expression forms (math, integer floor division, casts,
// selects, f16), and the programs it refuses.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"

namespace tunefarm::testing {
namespace {

using namespace ir;

const DataType kF32 = DataType::Float(32);

Stmt Bound(const Var& v, int64_t extent, const std::string& tag, Stmt body) {
  return For::Make(v, Expr(0), Expr(extent), ForKind::kThreadBinding, std::move(body), tag);
}

// C[33, 17] = A[33, 7] B[7, 17]: a block of 32 threads computes a 4 x 8 tile;
// per k tile of 5, its threads fetch A's 4 x 5 tile (20 of the 32 threads:
// the inner threadIdx.x loop of extent 20) and B's 5 x 8 tile into shared
// memory, with a barrier after the fetch and one at the end of the k tile.
PrimFunc HandMatmul() {
  Buffer a = MakeBuffer("A", kF32, {33, 7}), b = MakeBuffer("B", kF32, {7, 17}), c = MakeBuffer("C", kF32, {33, 17});
  Buffer a_sh = MakeBuffer("A_shared", kF32, {4, 5}, MemoryScope::kShared);
  Buffer b_sh = MakeBuffer("B_shared", kF32, {5, 8}, MemoryScope::kShared);
  Buffer acc = MakeBuffer("acc", kF32, {1}, MemoryScope::kLocal);
  Var by("by"), bx("bx"), tx("tx"), k0("k0"), k1("k1"), fa("fa"), fb("fb");
  auto inside = [](Expr i, int64_t m, Expr j, int64_t n) { return And::Make(LT::Make(i, Expr(m)), LT::Make(j, Expr(n))); };
  Expr a_row = Expr(by) * 4 + Expr(fa) / 5, a_col = Expr(k0) * 5 + Expr(fa) % 5;
  Stmt fetch_a = Bound(fa, 20, "threadIdx.x",
                       Store::Make(a_sh, Select::Make(inside(a_row, 33, a_col, 7), Load::Make(a, {a_row, a_col}), Expr(0.0)),
                                   {Expr(fa) / 5, Expr(fa) % 5}));
  Var fo("fo");
  Expr fetched = Expr(fo) * 32 + fb;  // B's 40 elements in two passes of the block's 32 threads
  Expr b_row = Expr(k0) * 5 + fetched / 8, b_col = Expr(bx) * 8 + fetched % 8;
  Stmt fetch_b = For::Make(fo, Expr(0), Expr(2), ForKind::kSerial,
                           Bound(fb, 32, "threadIdx.x",
                                 IfThenElse::Make(LT::Make(fetched, Expr(40)),
                                                  Store::Make(b_sh,
                                                              Select::Make(inside(b_row, 7, b_col, 17),
                                                                           Load::Make(b, {b_row, b_col}), Expr(0.0)),
                                                              {fetched / 8, fetched % 8}))));
  Stmt compute = For::Make(k1, Expr(0), Expr(5), ForKind::kUnrolled,
                           Store::Make(acc,
                                       Load::Make(acc, {Expr(0)}) + Load::Make(a_sh, {Expr(tx) / 8, k1}) *
                                                                        Load::Make(b_sh, {k1, Expr(tx) % 8}),
                                       {Expr(0)}));
  Stmt k_loop = For::Make(k0, Expr(0), Expr(2), ForKind::kSerial,
                          SeqStmt::Make({fetch_a, fetch_b, Barrier::Make(), compute, Barrier::Make()}));
  Expr row = Expr(by) * 4 + Expr(tx) / 8, col = Expr(bx) * 8 + Expr(tx) % 8;
  Stmt thread = Allocate::Make(acc, SeqStmt::Make({Store::Make(acc, Expr(0.0), {Expr(0)}), k_loop,
                                                   IfThenElse::Make(inside(row, 33, col, 17),
                                                                    Store::Make(c, Load::Make(acc, {Expr(0)}), {row, col}))}));
  Stmt kernel = Bound(by, 9, "blockIdx.y",
                      Bound(bx, 3, "blockIdx.x",
                            Allocate::Make(a_sh, Allocate::Make(b_sh, Bound(tx, 32, "threadIdx.x", thread)))));
  return PrimFunc{"hand_mm", {a, b, c}, 2, kernel};
}

TEST(CodegenCudaKernelTest, CooperativeFetchNarrowerThanTheBlockIsGuarded) {
  // The program computes the matmul (the interpreter runs it as a GPU would).
  auto base = LowerText(kMatmul, {{"M", 33}, {"N", 17}, {"K", 7}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_TRUE(SameResults(*base, HandMatmul(), /*jit=*/false));
  auto module = cuda::GenerateCuda(HandMatmul());
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_EQ(module->launches.size(), 1u);
  EXPECT_EQ(module->launches[0].grid, (std::array<int64_t, 3>{3, 9, 1}));
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{32, 1, 1}));
  EXPECT_EQ(module->static_shared_bytes, 80 + 160);
  const std::string& src = module->source;
  EXPECT_NE(src.find("__launch_bounds__(32)"), std::string::npos) << src;
  EXPECT_NE(src.find("const int fa = (int)threadIdx.x;"), std::string::npos) << src;
  EXPECT_NE(src.find("if (threadIdx.x < 20) {"), std::string::npos) << src;
  EXPECT_EQ(CountOf(src, "if (threadIdx.x <"), 1) << src;  // B's fetch uses every thread
  EXPECT_EQ(CountOf(src, "__syncthreads();"), 2) << src;
  EXPECT_NE(src.find("(int)blockIdx.y"), std::string::npos) << src;
  EXPECT_NE(src.find("float acc[1];"), std::string::npos) << src;
  EXPECT_EQ(CountOf(src, "#pragma unroll"), 1) << src;  // the unrolled k1 loop
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

// T = exp(A) in one kernel, C = T * 2 in the next: T is a workspace.
PrimFunc TwoKernels() {
  Buffer a = MakeBuffer("A", kF32, {100}), t = MakeBuffer("T", kF32, {100}), c = MakeBuffer("C", kF32, {100});
  Var b0("b0"), t0("t0"), b1("b1"), t1("t1");
  Expr i0 = Expr(b0) * 25 + t0, i1 = Expr(b1) * 50 + t1;
  Stmt first = Bound(b0, 4, "blockIdx.x", Bound(t0, 25, "threadIdx.x", Store::Make(t, Call::Make(CallOp::kExp, {Load::Make(a, {i0})}), {i0})));
  Stmt second = Bound(b1, 2, "blockIdx.x", Bound(t1, 50, "threadIdx.x", Store::Make(c, Load::Make(t, {i1}) * Expr(2.0), {i1})));
  return PrimFunc{"two", {a, c}, 1, Allocate::Make(t, SeqStmt::Make({first, second}))};
}

TEST(CodegenCudaKernelTest, GlobalIntermediateIsAWorkspaceBetweenKernels) {
  PrimFunc f = TwoKernels();
  auto module = cuda::GenerateCuda(f);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_EQ(module->buffers.size(), 3u);
  EXPECT_EQ(module->buffers[2].name, "T");
  EXPECT_EQ(module->buffers[2].param_index, -1);
  EXPECT_EQ(module->buffers[2].bytes(), 400);
  ASSERT_EQ(module->launches.size(), 2u);
  EXPECT_EQ(module->launches[0].buffers, (std::vector<int>{0, 2}));
  EXPECT_EQ(module->launches[1].buffers, (std::vector<int>{1, 2}));
  EXPECT_EQ(module->launches[0].grid[0], 4);
  EXPECT_EQ(module->launches[1].block[0], 50);
  EXPECT_NE(module->launches[0].kernel, module->launches[1].kernel);
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

// Every math op on f32 and f64, integer floor division, casts, select,
// min / max, a 2-D block and a vthread loop.
PrimFunc ExpressionForms() {
  Buffer x = MakeBuffer("X", kF32, {7, 8}), y = MakeBuffer("Y", kF32, {7, 8});
  Buffer d = MakeBuffer("D", DataType::Float(64), {7, 8}), n = MakeBuffer("N", DataType::Int(32), {7, 8});
  Var bx("bx"), ty("ty"), tx("tx"), vt("vt");
  Expr i = Expr(bx), j = Expr(ty) * 4 + Expr(vt) * 2 + tx;  // 7 blocks; 2 x 2 threads x 2 vthreads = 8 columns
  Expr xv = Load::Make(x, {i, j});
  Expr sum = Call::Make(CallOp::kExp, {xv});
  for (CallOp op : {CallOp::kLog, CallOp::kSqrt, CallOp::kRsqrt, CallOp::kTanh, CallOp::kSigmoid, CallOp::kAbs,
                    CallOp::kFloor, CallOp::kCeil, CallOp::kErf}) {
    sum = sum + Call::Make(op, {xv});
  }
  sum = sum + Call::Make(CallOp::kPow, {xv, Expr(2.0)}) + min(xv, Expr(1.0)) + max(xv, Expr(-1.0)) + xv % Expr(3.0);
  Expr dv = Load::Make(d, {i, j});
  Expr dsum = Call::Make(CallOp::kErf, {dv}) + Call::Make(CallOp::kSigmoid, {dv}) + Call::Make(CallOp::kPow, {dv, dv});
  Expr nv = Load::Make(n, {i, j});
  DataType i32 = DataType::Int(32);
  Expr ints = Div::Make(nv - IntImm::Make(i32, 3), IntImm::Make(i32, 4)) + Mod::Make(nv, IntImm::Make(i32, -5)) +
              Cast::Make(i32, xv) + Select::Make(LT::Make(nv, IntImm::Make(i32, 0)), IntImm::Make(i32, 1), nv);
  Stmt store = Store::Make(y, sum + Cast::Make(kF32, dsum) + Cast::Make(kF32, ints), {i, j});
  Stmt index_math = Store::Make(n, Cast::Make(i32, Div::Make(j - Expr(5), Expr(3)) + Mod::Make(j - Expr(5), Expr(3))), {i, j});
  Stmt kernel = Bound(bx, 7, "blockIdx.x",
                      Bound(ty, 2, "threadIdx.y",
                            For::Make(vt, Expr(0), Expr(2), ForKind::kThreadBinding,
                                      Bound(tx, 2, "threadIdx.x", SeqStmt::Make({store, index_math})), "vthread")));
  return PrimFunc{"forms", {x, d, n, y}, 3, kernel};
}

TEST(CodegenCudaKernelTest, ExpressionFormsCompile) {
  PrimFunc f = ExpressionForms();
  auto module = cuda::GenerateCuda(f);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{2, 2, 1}));
  const std::string& src = module->source;
  for (const char* fn : {"expf(", "logf(", "sqrtf(", "rsqrtf(", "tanhf(", "fabsf(", "floorf(", "ceilf(", "erff(",
                         "powf(", "fminf(", "fmaxf(", "erf(", "pow(", "tf_floordiv(", "tf_floormod("}) {
    EXPECT_NE(src.find(fn), std::string::npos) << fn << "\n" << src;
  }
  EXPECT_NE(src.find("(1.0f / (1.0f + expf(-"), std::string::npos) << src;  // sigmoid
  EXPECT_NE(src.find("#pragma unroll\n"), std::string::npos) << src;          // the vthread loop
  EXPECT_NE(src.find("(int)threadIdx.y"), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

// 64 KiB of shared memory is past what a kernel may declare statically: it is
// dynamic shared memory, and LowerForCuda takes it only under limits that
// allow it.
PrimFunc BigShared() {
  Buffer out = MakeBuffer("Out", kF32, {4, 16384});
  Buffer big = MakeBuffer("big", kF32, {16384}, MemoryScope::kShared);
  Buffer small = MakeBuffer("small", kF32, {3}, MemoryScope::kShared);
  Var bx("bx"), tx("tx"), i("i"), tx2("tx2"), j("j");
  Expr at = Expr(tx) * 64 + i, back = Expr(tx2) * 64 + j;
  Stmt fill = Bound(tx, 256, "threadIdx.x",
                    SeqStmt::Make({IfThenElse::Make(LT::Make(Expr(tx), Expr(3)), Store::Make(small, Expr(0.5), {Expr(tx)})),
                                   For::Make(i, Expr(0), Expr(64), ForKind::kSerial,
                                             Store::Make(big, Cast::Make(kF32, at) + Load::Make(small, {Expr(tx) % 3}),
                                                         {at}))}));
  Stmt drain = Bound(tx2, 256, "threadIdx.x",
                     For::Make(j, Expr(0), Expr(64), ForKind::kSerial,
                               Store::Make(out, Load::Make(big, {Expr(16383) - back}), {Expr(bx), back})));
  Stmt kernel = Bound(bx, 4, "blockIdx.x", Allocate::Make(big, Allocate::Make(small, SeqStmt::Make({fill, drain}))));
  return PrimFunc{"big_shared", {out}, 0, kernel};
}

TEST(CodegenCudaKernelTest, SharedMemoryPast48KiBIsDynamic) {
  PrimFunc f = BigShared();
  const Buffer& out = f.params[0];
  auto refused = cuda::LowerForCuda(f);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status().ToString();
  GpuLimits limits;
  limits.max_shared_bytes = 96 * 1024;
  auto lowered = cuda::LowerForCuda(f, limits);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  // Out[b, x] = big[16383 - x] = (16383 - x) + 0.5, as the interpreter runs it.
  HostBuffer result = HostBuffer::Like(out);
  ASSERT_TRUE(Interpret(*lowered, {&result}).ok());
  for (int64_t x : {int64_t(0), int64_t(4097), int64_t(16383)}) EXPECT_EQ(result.as<float>()[16384 * 3 + x], 16383.5f - float(x));
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->launches[0].dynamic_shared_bytes, 65536 + 16);
  EXPECT_EQ(module->static_shared_bytes, 0);
  const std::string& src = module->source;
  EXPECT_NE(src.find("extern __shared__ __align__(16) unsigned char tf_dynamic_shared[];"), std::string::npos) << src;
  EXPECT_NE(src.find("float* const small = reinterpret_cast<float*>(tf_dynamic_shared + 65536);"), std::string::npos)
      << src;
  EXPECT_NE(src.find("__syncthreads();"), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaKernelTest, RootNestNotBoundToBlockIdxIsRefused) {
  Buffer a = MakeBuffer("A", kF32, {8});
  Var i("row");
  PrimFunc f{"unbound", {a}, 0, For::Make(i, Expr(0), Expr(8), ForKind::kSerial, Store::Make(a, Expr(1.0), {Expr(i)}))};
  auto module = cuda::GenerateCuda(f);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(module.status().message().find("'row'"), std::string::npos) << module.status().ToString();
  EXPECT_NE(module.status().message().find("BindUnboundLoops"), std::string::npos) << module.status().ToString();
}

TEST(CodegenCudaKernelTest, InnerBindingWiderThanTheBlockIsRefused) {
  Buffer a = MakeBuffer("A", kF32, {64});
  Var bx("bx"), tx("tx"), wide("wide");
  Stmt kernel = Bound(bx, 1, "blockIdx.x",
                      Bound(tx, 32, "threadIdx.x", Bound(wide, 64, "threadIdx.x", Store::Make(a, Expr(1.0), {Expr(wide)}))));
  auto module = cuda::GenerateCuda(PrimFunc{"wide", {a}, 0, kernel});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(module.status().message().find("'wide'"), std::string::npos) << module.status().ToString();
  EXPECT_NE(module.status().message().find("64"), std::string::npos) << module.status().ToString();
}

TEST(CodegenCudaKernelTest, NonConstantBlockExtentIsRefused) {
  Buffer a = MakeBuffer("A", kF32, {64});
  Var bx("bx"), tx("tx");
  Stmt kernel = Bound(bx, 4, "blockIdx.x",
                      For::Make(tx, Expr(0), Expr(bx) + 1, ForKind::kThreadBinding, Store::Make(a, Expr(1.0), {Expr(tx)}),
                                "threadIdx.x"));
  auto module = cuda::GenerateCuda(PrimFunc{"ragged", {a}, 0, kernel});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(module.status().message().find("'tx'"), std::string::npos) << module.status().ToString();
}

TEST(CodegenCudaKernelTest, SharedBufferOutsideEveryKernelIsRefused) {
  Buffer a = MakeBuffer("A", kF32, {4}), s = MakeBuffer("S", kF32, {4}, MemoryScope::kShared);
  Var bx("bx");
  Stmt kernel = Bound(bx, 4, "blockIdx.x", Store::Make(a, Expr(1.0), {Expr(bx)}));
  auto module = cuda::GenerateCuda(PrimFunc{"root_shared", {a}, 0, Allocate::Make(s, kernel)});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(module.status().message().find("'S'"), std::string::npos) << module.status().ToString();
}

// H[i] = f16(exp(H[i]) * 0.1 + X[i]) with X f32 and the arithmetic in f16:
// half bits in unsigned short, computed in float and rounded per operation.
PrimFunc HalfPrecision() {
  const DataType f16 = DataType::Float(16);
  Buffer h = MakeBuffer("H", f16, {50}), x = MakeBuffer("X", kF32, {50});
  Var bx("bx"), tx("tx");
  Expr i = Expr(bx) * 10 + tx;
  Expr value = Call::Make(CallOp::kExp, {Load::Make(h, {i})}) * FloatImm::Make(f16, 0.1) + Cast::Make(f16, Load::Make(x, {i}));
  Stmt kernel = Bound(bx, 5, "blockIdx.x", Bound(tx, 10, "threadIdx.x", Store::Make(h, max(value, FloatImm::Make(f16, -1.0)), {i})));
  return PrimFunc{"half", {x, h}, 1, kernel};
}

TEST(CodegenCudaKernelTest, HalfPrecisionComputesInFloatRoundedToHalf) {
  auto module = cuda::GenerateCuda(HalfPrecision());
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->buffers[1].bytes(), 100);
  const std::string& src = module->source;
  EXPECT_NE(src.find("unsigned short* __restrict__ H"), std::string::npos) << src;
  EXPECT_NE(src.find("= tf_f2h("), std::string::npos) << src;
  EXPECT_NE(src.find("tf_round_h(expf(tf_h2f(H["), std::string::npos) << src;
  EXPECT_NE(src.find("(0.0999755859f)"), std::string::npos) << src;  // 0.1 as the nearest half
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaKernelTest, EightBitFloatsAreUnimplemented) {
  Buffer a = MakeBuffer("A", DataType::Float(8), {4});
  Var bx("bx");
  Stmt kernel = Bound(bx, 4, "blockIdx.x", Store::Make(a, Load::Make(a, {Expr(bx)}), {Expr(bx)}));
  auto module = cuda::GenerateCuda(PrimFunc{"f8", {a}, 0, kernel});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented) << module.status().ToString();
}

}  // namespace
}  // namespace tunefarm::testing
