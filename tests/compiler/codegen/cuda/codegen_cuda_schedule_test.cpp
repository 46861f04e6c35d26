// GPU programs made with the schedule primitives (split, fuse, bind,
// vectorize, cache_write local, cache_read shared + compute_at) at odd sizes:
// LowerForCuda and GenerateCuda accept them, the source has the launches,
// guards, barriers and vector accesses the schedule asks for, and NVRTC
// compiles it. Whether the results are right is the interpreter's to check
// (tests/compiler/interpreter); nothing here runs on a GPU.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"

namespace tunefarm::testing {
namespace {

constexpr std::string_view kElementwise = R"(
workload ew(M = 17, N = 33) {
  A = input f32[M, N]
  B[i, j] = max(exp(A[i, j]) * 2.0 + 1.0, 0.0)
  output B
}
)";

constexpr std::string_view kRowSum = R"(
workload rowsum(M = 33, K = 17) {
  A = input f32[M, K]
  S[i] = sum(k: K) A[i, k]
  output S
}
)";

Result<ir::PrimFunc> Scheduled(std::string_view text, const Overrides& overrides,
                               const std::function<Status(Schedule&)>& steps) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(text, overrides));
  Schedule sch(base, 1);
  TF_RETURN_IF_ERROR(steps(sch));
  return sch.func();
}

TEST(CodegenCudaScheduleTest, ElementwiseWithAGuardedLastBlock) {
  auto f = Scheduled(kElementwise, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("B"));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(b));
    TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({l[0], l[1]}));  // 17 * 33 = 561
    TF_ASSIGN_OR_RETURN(auto s, sch.Split(fused, {-1, 64}));     // 9 blocks, the last partly used
    TF_RETURN_IF_ERROR(sch.Bind(s[0], "blockIdx.x"));
    return sch.Bind(s[1], "threadIdx.x");
  });
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*f);
  ASSERT_EQ(module->launches.size(), 1u);
  const cuda::CudaLaunch& launch = module->launches[0];
  EXPECT_EQ(launch.grid, (std::array<int64_t, 3>{9, 1, 1}));
  EXPECT_EQ(launch.block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(launch.buffers, (std::vector<int>{0, 1}));
  ASSERT_EQ(module->buffers.size(), 2u);
  EXPECT_EQ(module->buffers[0].param_index, 0);
  EXPECT_EQ(module->buffers[1].param_index, 1);
  EXPECT_EQ(module->buffers[1].elements, 17 * 33);
  const std::string& src = module->source;
  EXPECT_NE(src.find("extern \"C\" __global__ void __launch_bounds__(64) " + launch.kernel + "("), std::string::npos)
      << src;
  EXPECT_NE(src.find("const float* __restrict__"), std::string::npos) << src;  // A is only read
  EXPECT_NE(src.find("blockIdx.x"), std::string::npos) << src;
  EXPECT_NE(src.find("threadIdx.x"), std::string::npos) << src;
  EXPECT_NE(src.find("< 561"), std::string::npos) << src;  // the split's guard
  // B[i, j] with i = f / 33, j = f % 33 of the fused f is B's element f.
  EXPECT_EQ(src.find("/ 33"), std::string::npos) << src;
  EXPECT_EQ(src.find("% 33"), std::string::npos) << src;
  EXPECT_NE(src.find("expf("), std::string::npos) << src;
  EXPECT_EQ(src.find("__syncthreads"), std::string::npos) << src;  // nothing shared
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaScheduleTest, VectorizedInnerLoopUsesFloat4) {
  auto f = Scheduled(kElementwise, {{"M", 16}, {"N", 36}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("B"));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(b));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
    TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({l[0], j[0]}));  // 16 * 9 = 144
    TF_ASSIGN_OR_RETURN(auto s, sch.Split(fused, {-1, 48}));
    TF_RETURN_IF_ERROR(sch.Bind(s[0], "blockIdx.x"));
    TF_RETURN_IF_ERROR(sch.Bind(s[1], "threadIdx.x"));
    return sch.Vectorize(j[1]);
  });
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->launches[0].grid, (std::array<int64_t, 3>{3, 1, 1}));
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{48, 1, 1}));
  const std::string& src = module->source;
  EXPECT_NE(src.find("*reinterpret_cast<const float4*>(A + "), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<float4*>(B + "), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaScheduleTest, VectorizedLoopOfAnUnalignedRowStaysScalar) {
  // Rows of 33 floats: row i starts at 33 * i, not a multiple of 4.
  auto f = Scheduled(kElementwise, {{"M", 4}, {"N", 33}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("B"));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(b));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Bind(l[0], "blockIdx.x"));
    TF_RETURN_IF_ERROR(sch.Bind(j[0], "threadIdx.x"));
    return sch.Vectorize(j[1]);
  });
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const std::string& src = module->source;
  EXPECT_EQ(src.find("float4"), std::string::npos) << src;
  EXPECT_NE(src.find("#pragma unroll"), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaScheduleTest, ReductionIntoALocalAccumulator) {
  auto f = Scheduled(kRowSum, {}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV s, sch.GetBlock("S"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(s, ir::MemoryScope::kLocal));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(s));  // i k
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 16}));  // 3 blocks of 16 rows for 33
    TF_RETURN_IF_ERROR(sch.Bind(i[0], "blockIdx.x"));
    TF_RETURN_IF_ERROR(sch.Bind(i[1], "threadIdx.x"));
    return sch.ReverseComputeAt(write_back, i[1]);
  });
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*f);
  ASSERT_EQ(module->launches.size(), 1u);
  EXPECT_EQ(module->launches[0].grid, (std::array<int64_t, 3>{3, 1, 1}));
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{16, 1, 1}));
  const std::string& src = module->source;
  EXPECT_NE(src.find("float S_local["), std::string::npos) << src;  // a register array per thread
  EXPECT_EQ(src.find("__shared__"), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

// C[33, 17] = A[33, 7] B[7, 17]: 8 x 8 tiles per block (5 x 3 blocks, fused),
// one thread per element, k in tiles of 4; A and B fetched into shared memory
// per k tile by all threads of the block (fused copy loop split by the block's
// 64 threads, bound to threadIdx.x again), C accumulated in a register.
Result<ir::PrimFunc> SharedMemoryMatmul() {
  return Scheduled(kMatmul, {{"M", 33}, {"N", 17}, {"K", 7}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));  // i j k
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 8}));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 8}));
    TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, 4}));
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1]}));
    TF_ASSIGN_OR_RETURN(LoopRV bx, sch.Fuse({i[0], j[0]}));
    TF_ASSIGN_OR_RETURN(LoopRV tx, sch.Fuse({i[1], j[1]}));
    TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
    TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, tx));
    TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
    for (BlockRV copy : {a_copy, b_copy}) {
      TF_RETURN_IF_ERROR(sch.ComputeAt(copy, k[0]));
      TF_ASSIGN_OR_RETURN(auto cl, sch.GetLoops(copy));  // bx tx k0 ax0 ax1
      TF_ASSIGN_OR_RETURN(LoopRV fetch, sch.Fuse({cl[cl.size() - 2], cl.back()}));
      TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fetch, {-1, 64}));
      TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
    }
    return Status::OK();
  });
}

TEST(CodegenCudaScheduleTest, MatmulWithSharedTilesAndCooperativeFetch) {
  auto f = SharedMemoryMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*f);
  ASSERT_EQ(module->launches.size(), 1u);
  EXPECT_EQ(module->launches[0].grid, (std::array<int64_t, 3>{15, 1, 1}));
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(module->launches[0].buffers, (std::vector<int>{0, 1, 2}));
  const std::string& src = module->source;
  EXPECT_NE(src.find("__shared__ __align__(16) float A_shared["), std::string::npos) << src;
  EXPECT_NE(src.find("__shared__ __align__(16) float B_shared["), std::string::npos) << src;
  EXPECT_GT(module->static_shared_bytes, 0);
  // The fetch, then the compute, then the end of the k tile: two barriers.
  EXPECT_GE(CountOf(src, "__syncthreads();"), 2) << src;
  EXPECT_NE(src.find("float C_local["), std::string::npos) << src;
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

// C[33, 20] = A[33, 32] B[32, 20] with 8 x 4 tiles of 32 threads, k tiles of
// 8: each shared tile's copy loop is fused and split [.., 8 or 16, 4], the
// middle loop bound to threadIdx.x (8 or 16 of the block's 32 threads) and the
// 4 vectorized: float4 stores into shared memory, and float4 loads from A,
// whose rows (32 floats) keep the lanes aligned; B's rows of 20 do too.
Result<ir::PrimFunc> VectorizedFetchMatmul() {
  return Scheduled(kMatmul, {{"M", 33}, {"N", 20}, {"K", 32}}, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
    TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
    TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 8}));
    TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
    TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, 8}));
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1]}));
    TF_ASSIGN_OR_RETURN(LoopRV bx, sch.Fuse({i[0], j[0]}));
    TF_ASSIGN_OR_RETURN(LoopRV tx, sch.Fuse({i[1], j[1]}));
    TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
    TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, tx));
    TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
    for (BlockRV copy : {a_copy, b_copy}) {
      TF_RETURN_IF_ERROR(sch.ComputeAt(copy, k[0]));
      TF_ASSIGN_OR_RETURN(auto cl, sch.GetLoops(copy));
      TF_ASSIGN_OR_RETURN(LoopRV fetch, sch.Fuse({cl[cl.size() - 2], cl.back()}));
      TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(fetch));  // 64 of A, 32 of B
      TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fetch, {-1, extent / 4, 4}));
      TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
      TF_RETURN_IF_ERROR(sch.Vectorize(parts[2]));
    }
    return Status::OK();
  });
}

TEST(CodegenCudaScheduleTest, CooperativeFetchVectorizedIntoSharedMemory) {
  auto f = VectorizedFetchMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto module = LowerAndGenerate(*f);
  ASSERT_TRUE(module.ok()) << module.status().ToString() << "\n" << ir::ToString(*f);
  const std::string& src = module->source;
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{32, 1, 1}));
  EXPECT_NE(src.find("*reinterpret_cast<float4*>(A_shared + "), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<float4*>(B_shared + "), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<const float4*>(A + "), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<const float4*>(B + "), std::string::npos) << src;
  EXPECT_NE(src.find("if (threadIdx.x < 8)"), std::string::npos) << src;  // B's fetch: 32 / 4 threads
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

}  // namespace
}  // namespace tunefarm::testing
