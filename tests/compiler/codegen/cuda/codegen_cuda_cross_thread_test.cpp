// Cross-thread reductions (lower_cross_thread_reduction.h): a reduction loop
// bound to threadIdx.x, at T = 32, 128 and 512 threads over reductions that
// T does not divide, lowers to per-thread partial results in shared memory
// and a tree of barrier-separated steps; the interpreter (a block's threads
// in phases between barriers) gives the default program's results, and
// NVRTC compiles the CUDA C. Malformed variants are InvalidArgument naming
// the loop.
#include "../../schedule_test_util.h"
#include "cuda_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/lower_cross_thread_reduction.h"
#include "tunefarm/compiler/lower/verify_gpu.h"

namespace tunefarm::testing {
namespace {

constexpr std::string_view kRowMax = R"(
workload rowmax(M = 6, K = 1000) {
  A = input f32[M, K]
  S[i] = max(k: K) A[i, k] * 2.0
  output S
}
)";

constexpr std::string_view kRowSum = R"(
workload rowsum(M = 6, K = 1000) {
  A = input f32[M, K]
  S[i] = sum(k: K) A[i, k]
  output S
}
)";

// Rows over blockIdx.x (and `rows` of them per block over threadIdx.y), the
// reduction split (rounds, threads) with the threads on threadIdx.x.
Result<ir::PrimFunc> CrossThread(std::string_view text, const Overrides& overrides, int64_t threads, int64_t rows = 1) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(text, overrides));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("S"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(b));
  TF_ASSIGN_OR_RETURN(auto r, sch.Split(l[1], {-1, threads}));
  TF_ASSIGN_OR_RETURN(auto s, sch.Split(l[0], {-1, rows}));
  TF_RETURN_IF_ERROR(sch.Reorder({s[0], s[1], r[1], r[0]}));
  TF_RETURN_IF_ERROR(sch.Bind(s[0], "blockIdx.x"));
  if (rows > 1) TF_RETURN_IF_ERROR(sch.Bind(s[1], "threadIdx.y"));
  TF_RETURN_IF_ERROR(sch.Bind(r[1], "threadIdx.x"));
  return sch.func();
}

// Shapes of the shared buffers the lowered program allocates.
std::vector<std::vector<int64_t>> SharedShapes(const ir::PrimFunc& f) {
  std::vector<std::vector<int64_t>> shapes;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kAllocate) return;
    const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
    if (b->scope == ir::MemoryScope::kShared) shapes.push_back(b->shape);
  });
  return shapes;
}

int Log2(int64_t t) {
  int n = 0;
  while ((int64_t(1) << (n + 1)) <= t) ++n;
  return n;
}

TEST(CodegenCudaCrossThreadTest, TreeReductionsAtSeveralThreadCountsEqualTheDefault) {
  for (int64_t threads : {32, 128, 512}) {
    for (int64_t k : {1000, 77}) {
      SCOPED_TRACE("T=" + std::to_string(threads) + " K=" + std::to_string(k));
      for (std::string_view text : {kRowSum, kRowMax}) {
        auto base = LowerText(text, {{"K", k}});
        ASSERT_TRUE(base.ok()) << base.status().ToString();
        auto f = CrossThread(text, {{"K", k}}, threads);
        ASSERT_TRUE(f.ok()) << f.status().ToString();
        auto lowered = cuda::LowerForCuda(*f);
        ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << ir::ToString(*f);
        // One partial per thread in shared memory, combined across threads.
        EXPECT_EQ(SharedShapes(*lowered), (std::vector<std::vector<int64_t>>{{threads}})) << ir::ToString(*lowered);
        EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false));
        auto module = cuda::GenerateCuda(*lowered);
        ASSERT_TRUE(module.ok()) << module.status().ToString();
        EXPECT_GE(CountOf(module->source, "__syncthreads()"), Log2(threads)) << module->source;
        ASSERT_EQ(module->launches.size(), 1u);
        EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{threads, 1, 1}));
        EXPECT_EQ(module->launches[0].grid, (std::array<int64_t, 3>{6, 1, 1}));
      }
    }
  }
}

TEST(CodegenCudaCrossThreadTest, ThreadCountsThatAreNoPowerOfTwoFoldTheirTail) {
  // A reduction loop of 77 bound whole to threadIdx.x: 64 + a tail of 13.
  auto base = LowerText(kRowSum, {{"K", 77}});
  ASSERT_TRUE(base.ok());
  auto f = CrossThread(kRowSum, {{"K", 77}}, 77);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto lowered = cuda::LowerForCuda(*f);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  EXPECT_EQ(SharedShapes(*lowered), (std::vector<std::vector<int64_t>>{{77}}));
  EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false));
}

TEST(CodegenCudaCrossThreadTest, RowsOnThreadIdxYKeepARowOfPartialsEach) {
  auto base = LowerText(kRowSum, {{"K", 1000}});
  ASSERT_TRUE(base.ok());
  auto f = CrossThread(kRowSum, {{"K", 1000}}, 64, 3);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto lowered = cuda::LowerForCuda(*f);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  EXPECT_EQ(SharedShapes(*lowered), (std::vector<std::vector<int64_t>>{{3, 64}})) << ir::ToString(*lowered);
  EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false));
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->launches[0].block, (std::array<int64_t, 3>{64, 3, 1}));
}

TEST(CodegenCudaCrossThreadTest, RowsOnASerialLoopReuseOneRowOfPartials) {
  // Three rows per block, one after the other: the partials of the next row
  // overwrite the buffer the last row's result was read from.
  auto base = LowerText(kRowMax, {{"K", 77}});
  ASSERT_TRUE(base.ok());
  Schedule sch(*base, 1);
  auto b = sch.GetBlock("S");
  auto l = sch.GetLoops(*b);
  auto r = sch.Split((*l)[1], {-1, 32});
  auto s = sch.Split((*l)[0], {-1, 3});
  ASSERT_TRUE(r.ok() && s.ok());
  ASSERT_TRUE(sch.Reorder({(*s)[0], (*s)[1], (*r)[1], (*r)[0]}).ok());
  ASSERT_TRUE(sch.Bind((*s)[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind((*r)[1], "threadIdx.x").ok());
  auto lowered = cuda::LowerForCuda(sch.func());
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  EXPECT_EQ(SharedShapes(*lowered), (std::vector<std::vector<int64_t>>{{32}}));
  EXPECT_TRUE(SameResults(*base, *lowered, /*jit=*/false));
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  TF_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(CompilesForGpus(*module));
}

TEST(CodegenCudaCrossThreadTest, CompilesForSm80AndSm90) {
  TF_SKIP_WITHOUT_NVRTC();
  for (int64_t threads : {32, 128, 512}) {
    SCOPED_TRACE(threads);
    auto f = CrossThread(kRowMax, {{"K", 1000}}, threads, threads == 32 ? 2 : 1);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto module = LowerAndGenerate(*f);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    EXPECT_TRUE(CompilesForGpus(*module));
  }
}

TEST(CodegenCudaCrossThreadTest, MoreThreadsThanABlockHoldsNameTheLoop) {
  auto f = CrossThread(kRowSum, {{"K", 3000}}, 2048);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto lowered = cuda::LowerForCuda(*f);
  // Named by the loops bound to threadIdx.x, which keep the reduction loop's name.
  EXPECT_TRUE(IsInvalid(lowered.status(), {"2048 threads per block", "threadIdx.x 2048 (loop k_1"}))
      << lowered.status().ToString();
}

// A barrier moved into the first tree step's `if (tx < 64)`: only some
// threads reach it.
class BarrierIntoBranch : public ir::IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  ir::Stmt MutateIfThenElse(const ir::IfThenElse* op, const ir::Stmt& self) override {
    const ir::Store* store = op->then_case.as<ir::Store>();
    if (done_ || store == nullptr || store->buffer->scope != ir::MemoryScope::kShared) {
      return IRMutator::MutateIfThenElse(op, self);
    }
    done_ = true;
    return ir::IfThenElse::Make(op->condition, ir::SeqStmt::Make({op->then_case, ir::Barrier::Make()}), op->else_case);
  }

 private:
  bool done_ = false;
};

TEST(CodegenCudaCrossThreadTest, ABarrierUnderAThreadDependentBranchNamesIt) {
  auto f = CrossThread(kRowSum, {{"K", 1000}}, 128);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto lowered = cuda::LowerForCuda(*f);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  ir::PrimFunc broken = *lowered;
  broken.body = BarrierIntoBranch().Mutate(broken.body);
  ASSERT_FALSE(broken.body.same_as(lowered->body));
  Status st = VerifyGpuBindings(broken, GpuLimits{});
  EXPECT_TRUE(IsInvalid(st, {"barrier", "threadIdx", "< 64"})) << st.ToString() << "\n" << ir::ToString(broken);
}

TEST(CodegenCudaCrossThreadTest, UnsupportedFormsAreInvalidArgumentsNamingTheLoop) {
  // The reduction on threadIdx.y.
  auto base = LowerText(kRowSum, {{"K", 100}});
  ASSERT_TRUE(base.ok());
  {
    Schedule sch(*base, 1);
    auto b = sch.GetBlock("S");
    auto l = sch.GetLoops(*b);
    ASSERT_TRUE(sch.Bind((*l)[0], "blockIdx.x").ok());
    ASSERT_TRUE(sch.Bind((*l)[1], "threadIdx.y").ok());
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(IsInvalid(lowered.status(), {"cross-thread", (*sch.LoopVar((*l)[1])).name(), "threadIdx.y"}))
        << lowered.status().ToString();
  }
  // The reduction across threads under a vthread loop.
  {
    Schedule sch(*base, 1);
    auto b = sch.GetBlock("S");
    auto l = sch.GetLoops(*b);
    auto s = sch.Split((*l)[0], {-1, 2});
    ASSERT_TRUE(sch.Bind((*s)[0], "blockIdx.x").ok());
    ASSERT_TRUE(sch.Bind((*s)[1], "vthread").ok());
    ASSERT_TRUE(sch.Bind((*l)[1], "threadIdx.x").ok());
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(IsInvalid(lowered.status(), {"cross-thread", (*sch.LoopVar((*l)[1])).name(), "vthread"}))
        << lowered.status().ToString();
  }
  // Directly: a reduction loop bound outside every blockIdx loop.
  {
    Schedule sch(*base, 1);
    auto b = sch.GetBlock("S");
    auto l = sch.GetLoops(*b);
    ASSERT_TRUE(sch.Bind((*l)[1], "threadIdx.x").ok());
    auto body = LowerCrossThreadReductions(sch.func().body);
    EXPECT_TRUE(IsInvalid(body.status(), {(*sch.LoopVar((*l)[1])).name(), "blockIdx"})) << body.status().ToString();
  }
}

}  // namespace
}  // namespace tunefarm::testing
