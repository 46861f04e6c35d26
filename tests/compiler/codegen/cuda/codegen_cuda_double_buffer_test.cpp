// Double-buffered shared-memory stages (inject_double_buffer.h): a matmul
// whose outer k loop carries kDoubleBufferAnnotation lowers to doubled shared
// buffers, a prologue fetch, the next tile fetched through registers during
// the computation and one barrier per k iteration; the interpreter (threads
// as fibers meeting at barriers) gives the default program's results at odd
// sizes, with guards on partial tiles and k extents the tile does not
// divide, and NVRTC compiles the CUDA C. Malformed uses are InvalidArgument
// naming the loop.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::testing {
namespace {

struct MatmulShape {
  int64_t m, n, k;
  int64_t tile_m, tile_n, tile_k;
  int64_t lanes;  // the fetch's vector width (1: scalar)
  int64_t unroll = 0;
};

// kMatmul tiled as the GPU sketch rules tile it, one thread per output
// element of a tile_m x tile_n block, A and B fetched into shared memory per
// k tile by all threads; the k tile loop double-buffered when `annotate`.
Result<ir::PrimFunc> StagedMatmul(const MatmulShape& s, bool annotate) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(kMatmul, {{"M", s.m}, {"N", s.n}, {"K", s.k}}));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, s.tile_m}));
  TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, s.tile_n}));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, s.tile_k}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1]}));
  TF_ASSIGN_OR_RETURN(LoopRV bx, sch.Fuse({i[0], j[0]}));
  TF_ASSIGN_OR_RETURN(LoopRV tx, sch.Fuse({i[1], j[1]}));
  TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
  TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, tx));
  const int64_t threads = s.tile_m * s.tile_n;
  TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
  for (BlockRV copy : {a_copy, b_copy}) {
    TF_RETURN_IF_ERROR(sch.ComputeAt(copy, k[0]));
    TF_ASSIGN_OR_RETURN(auto cl, sch.GetLoops(copy));
    TF_ASSIGN_OR_RETURN(LoopRV fetch, sch.Fuse({cl[cl.size() - 2], cl.back()}));
    TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(fetch));
    if (s.lanes > 1 && extent % s.lanes == 0) {
      TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fetch, {-1, std::min(threads, extent / s.lanes), s.lanes}));
      TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
      TF_RETURN_IF_ERROR(sch.Vectorize(parts[2]));
    } else {
      TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fetch, {-1, threads}));
      TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
    }
  }
  if (annotate) TF_RETURN_IF_ERROR(sch.Annotate(k[0], ir::kDoubleBufferAnnotation, 1));
  if (s.unroll > 0) TF_RETURN_IF_ERROR(sch.Annotate(bx, ir::kAutoUnrollMaxStepAnnotation, s.unroll));
  return sch.func();
}

struct SharedAlloc {
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<SharedAlloc> SharedAllocs(const ir::PrimFunc& f) {
  std::vector<SharedAlloc> out;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kAllocate) return;
    const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
    if (b->scope == ir::MemoryScope::kShared) out.push_back({b->name, b->shape});
  });
  return out;
}

int CountBarriers(const ir::Stmt& s) {
  int n = 0;
  ir::PostOrderVisit(s, [&](const ir::IRNode* node) { n += node->kind == ir::IRNodeKind::kBarrier; });
  return n;
}

// The loop named `name` (the k tile loop keeps its name through lowering).
const ir::For* FindLoop(const ir::PrimFunc& f, const std::string& name) {
  const ir::For* found = nullptr;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kFor && static_cast<const ir::For*>(n)->loop_var.name() == name) {
      found = static_cast<const ir::For*>(n);
    }
  });
  return found;
}

TEST(CodegenCudaDoubleBufferTest, DoubledStagesEqualTheDefaultAtOddSizes) {
  const std::vector<MatmulShape> shapes = {
      {17, 33, 100, 8, 8, 32, 1},       // k tiles 32, 32, 32, 4: a guarded last tile
      {17, 33, 100, 8, 8, 32, 1, 512},  // the same, unrolled
      {33, 20, 32, 8, 4, 8, 4},         // float4 fetches, 4 k tiles
      {16, 16, 7, 4, 8, 3, 1},          // k tiles 3, 3, 1 (odd count), fetches guarded
      {64, 64, 128, 16, 16, 32, 2},     // 4 k tiles, float2 fetches
  };
  for (const MatmulShape& s : shapes) {
    SCOPED_TRACE("M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
                 " tile_k=" + std::to_string(s.tile_k) + " lanes=" + std::to_string(s.lanes));
    auto base = LowerText(kMatmul, {{"M", s.m}, {"N", s.n}, {"K", s.k}});
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    auto plain = StagedMatmul(s, false);
    auto doubled = StagedMatmul(s, true);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    ASSERT_TRUE(doubled.ok()) << doubled.status().ToString();
    auto plain_lowered = cuda::LowerForCuda(*plain);
    auto lowered = cuda::LowerForCuda(*doubled);
    ASSERT_TRUE(plain_lowered.ok()) << plain_lowered.status().ToString();
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(*doubled);
    // Each stage's buffer doubled: a leading dimension of 2 over the plain shape.
    const auto plain_allocs = SharedAllocs(*plain_lowered), allocs = SharedAllocs(*lowered);
    ASSERT_EQ(allocs.size(), 2u) << ir::ToString(*lowered);
    ASSERT_EQ(plain_allocs.size(), 2u);
    for (size_t b = 0; b < allocs.size(); ++b) {
      std::vector<int64_t> expected{2};
      expected.insert(expected.end(), plain_allocs[b].shape.begin(), plain_allocs[b].shape.end());
      EXPECT_EQ(allocs[b].shape, expected) << allocs[b].name;
    }
    // One barrier per k iteration instead of two, and one after the prologue.
    const ir::For* k_loop = FindLoop(*lowered, "k_0");
    const ir::For* plain_k_loop = FindLoop(*plain_lowered, "k_0");
    ASSERT_NE(k_loop, nullptr) << ir::ToString(*lowered);
    ASSERT_NE(plain_k_loop, nullptr);
    EXPECT_EQ(CountBarriers(plain_k_loop->body), 2) << ir::ToString(*plain_lowered);
    EXPECT_EQ(CountBarriers(k_loop->body), 1) << ir::ToString(*lowered);
    EXPECT_EQ(CountBarriers(lowered->body), 2) << ir::ToString(*lowered);
    EXPECT_EQ(k_loop->annotations.count(ir::kDoubleBufferAnnotation), 0u);
    EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false));
    EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false, /*seed=*/5));

    auto module = cuda::GenerateCuda(*lowered);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    auto plain_module = cuda::GenerateCuda(*plain_lowered);
    ASSERT_TRUE(plain_module.ok());
    EXPECT_EQ(module->static_shared_bytes, 2 * plain_module->static_shared_bytes);
    EXPECT_NE(module->source.find("float A_shared_reg["), std::string::npos) << module->source;
    EXPECT_NE(module->source.find("float B_shared_reg["), std::string::npos) << module->source;
    EXPECT_EQ(CountOf(module->source, "__syncthreads();"), 2) << module->source;
    if (s.lanes == 4) {
      // The staging keeps the vector accesses: float4 from global memory
      // into registers, float4 from registers into the other half.
      EXPECT_NE(module->source.find("*reinterpret_cast<const float4*>(A + "), std::string::npos) << module->source;
      EXPECT_NE(module->source.find("*reinterpret_cast<float4*>(A_shared + "), std::string::npos) << module->source;
    }
  }
}

TEST(CodegenCudaDoubleBufferTest, CompilesWithNvrtc) {
  TF_SKIP_WITHOUT_NVRTC();
  for (const MatmulShape& s : {MatmulShape{17, 33, 100, 8, 8, 32, 1, 512}, MatmulShape{33, 20, 32, 8, 4, 8, 4},
                               MatmulShape{256, 256, 256, 64, 4, 32, 4, 64}}) {
    auto f = StagedMatmul(s, true);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto module = LowerAndGenerate(*f);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    EXPECT_TRUE(CompilesForGpus(*module));
  }
}

TEST(CodegenCudaDoubleBufferTest, MalformedUsesNameTheLoop) {
  // The annotation on a loop with no shared stage under it: the k loop of a
  // matmul accumulating from global memory.
  auto base = LowerText(kMatmul, {{"M", 16}, {"N", 16}, {"K", 16}});
  ASSERT_TRUE(base.ok());
  {
    Schedule sch(*base, 1);
    auto c = sch.GetBlock("C");
    ASSERT_TRUE(c.ok());
    auto l = sch.GetLoops(*c);
    ASSERT_TRUE(l.ok());
    auto k = sch.Split((*l)[2], {-1, 4});
    ASSERT_TRUE(k.ok());
    ASSERT_TRUE(sch.Bind((*l)[0], "blockIdx.x").ok());
    ASSERT_TRUE(sch.Bind((*l)[1], "threadIdx.x").ok());
    ASSERT_TRUE(sch.Annotate((*k)[0], ir::kDoubleBufferAnnotation, 1).ok());
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_FALSE(lowered.ok());
    EXPECT_TRUE(IsInvalid(lowered.status(), {"loop 'k_0'", "no shared-memory stage"}));
  }
  // The annotation on the thread loop around the stage.
  {
    auto f = StagedMatmul({16, 16, 16, 4, 4, 4, 1}, false);
    ASSERT_TRUE(f.ok());
    Schedule sch(*f, 1);
    auto c = sch.GetBlock("C");
    ASSERT_TRUE(c.ok());
    auto l = sch.GetLoops(*c);  // bx tx k0 k1
    ASSERT_TRUE(l.ok());
    ASSERT_TRUE(sch.Annotate((*l)[1], ir::kDoubleBufferAnnotation, 1).ok());
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_FALSE(lowered.ok());
    EXPECT_TRUE(IsInvalid(lowered.status(), {"double buffer: loop 'i_1_j_1_fused'", "thread_binding"}));
  }
  // The annotation on the inner k loop, under which nothing is fetched.
  {
    auto f = StagedMatmul({16, 16, 16, 4, 4, 4, 1}, false);
    ASSERT_TRUE(f.ok());
    Schedule sch(*f, 1);
    auto c = sch.GetBlock("C");
    ASSERT_TRUE(c.ok());
    auto l = sch.GetLoops(*c);
    ASSERT_TRUE(l.ok());
    ASSERT_TRUE(sch.Annotate(l->back(), ir::kDoubleBufferAnnotation, 1).ok());
    auto lowered = cuda::LowerForCuda(sch.func());
    ASSERT_FALSE(lowered.ok());
    EXPECT_TRUE(IsInvalid(lowered.status(), {"loop 'k_1'"}));
  }
}

}  // namespace
}  // namespace tunefarm::testing
