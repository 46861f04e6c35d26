// compute_at of GPU memory scopes: a kShared copy placed under threadIdx
// loops covers the tile of the whole thread block (every thread reads it), is
// allocated once around the thread loops, and the program still matches the
// default one; a kLocal copy keeps one thread's region.
#include "../schedule_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"

namespace tunefarm::testing {
namespace {

// The text from the first line containing `header` on.
std::string From(const std::string& text, const std::string& header) {
  size_t at = text.find(header);
  return at == std::string::npos ? std::string() : text.substr(at);
}

// The shape a program allocates `buffer` with ("f32[16, 4]"), or "".
std::string AllocatedShape(const std::string& text, const std::string& buffer) {
  std::string key = "allocate " + buffer + ": ";
  size_t at = text.find(key);
  if (at == std::string::npos) return "";
  size_t end = text.find(']', at);
  return text.substr(at + key.size(), end - at - key.size() + 1);
}

// C[32, 32] in 4 blocks of 16 x 16 (blockIdx.x), one thread per element of
// a block's tile (threadIdx.x, 256), k split 4 x 4. Returns the loops
// bx, tx, k0, k1. With `vthreads` > 1 the block's elements are split
// vthread x threadIdx.x (the vthread loop outside).
Result<std::vector<LoopRV>> TileMatmulForGpu(Schedule& sch, int64_t vthreads = 1) {
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));  // i j k
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {2, 16}));
  TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {2, 16}));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {4, 4}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1]}));
  TF_ASSIGN_OR_RETURN(LoopRV bx, sch.Fuse({i[0], j[0]}));
  TF_ASSIGN_OR_RETURN(LoopRV tx, sch.Fuse({i[1], j[1]}));
  TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
  if (vthreads > 1) {
    TF_ASSIGN_OR_RETURN(auto split, sch.Split(tx, {vthreads, -1}));
    TF_RETURN_IF_ERROR(sch.Bind(split[0], "vthread"));
    tx = split[1];
  }
  TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
  return std::vector<LoopRV>{bx, tx, k[0], k[1]};
}

const Overrides kShape = {{"M", 32}, {"N", 32}, {"K", 16}};

TEST(ScheduleGpuComputeAtTest, SharedCopiesCoverTheBlockTile) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, kShape, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
    TF_RETURN_IF_ERROR(sch.ComputeAt(a, loops[2]));
    return sch.ComputeAt(b, loops[2]);
  }, &out, /*jit=*/false));
  std::string text = ir::ToString(out.scheduled);
  // 16 rows of A by the k tile of 4, 4 by 16 columns of B: the block's tile,
  // not one thread's ([1, 4] and [4, 1]).
  EXPECT_EQ(AllocatedShape(text, "A_shared"), "f32[16, 4]") << text;
  EXPECT_EQ(AllocatedShape(text, "B_shared"), "f32[4, 16]") << text;
  // Allocated once per block: inside the blockIdx loop, around the threadIdx loop.
  std::string in_block = From(text, "blockIdx.x");
  ASSERT_FALSE(in_block.empty()) << text;
  size_t alloc = in_block.find("allocate A_shared");
  size_t thread_loop = in_block.find("threadIdx.x");
  EXPECT_LT(alloc, thread_loop) << text;
  EXPECT_NE(thread_loop, std::string::npos) << text;
}

TEST(ScheduleGpuComputeAtTest, SharedCopyAtTheThreadLoopItselfCoversTheBlock) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, kShape, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    return sch.ComputeAt(a, loops[1]);
  }, &out, /*jit=*/false));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_EQ(AllocatedShape(text, "A_shared"), "f32[16, 16]") << text;
}

TEST(ScheduleGpuComputeAtTest, SharedCopyUnderAVirtualThreadCoversItToo) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, kShape, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch, /*vthreads=*/2));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    return sch.ComputeAt(a, loops[2]);
  }, &out, /*jit=*/false));
  std::string text = ir::ToString(out.scheduled);
  // The rows of both virtual threads, 16; allocated outside the vthread loop.
  EXPECT_EQ(AllocatedShape(text, "A_shared"), "f32[16, 4]") << text;
  size_t alloc = text.find("allocate A_shared"), vthread = text.find("\"vthread\"");
  EXPECT_LT(alloc, vthread) << text;
}

TEST(ScheduleGpuComputeAtTest, LocalCopyKeepsOneThreadsRegion) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, kShape, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kLocal));
    return sch.ComputeAt(a, loops[2]);
  }, &out, /*jit=*/false));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_EQ(AllocatedShape(text, "A_local"), "f32[1, 4]") << text;
  // One per thread: allocated inside the threadIdx loop.
  std::string in_thread = From(text, "threadIdx.x");
  EXPECT_NE(in_thread.find("allocate A_local"), std::string::npos) << text;
}

TEST(ScheduleGpuComputeAtTest, SharedCopyWithALocalAccumulatorMatches) {
  ScheduleOutcome out;
  EXPECT_TRUE(ScheduleIsCorrect(kMatmul, kShape, [](Schedule& sch) -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, loops[1]));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
    TF_RETURN_IF_ERROR(sch.ComputeAt(a, loops[2]));
    return sch.ComputeAt(b, loops[2]);
  }, &out, /*jit=*/false));
  std::string text = ir::ToString(out.scheduled);
  EXPECT_EQ(AllocatedShape(text, "A_shared"), "f32[16, 4]") << text;
  EXPECT_EQ(AllocatedShape(text, "B_shared"), "f32[4, 16]") << text;
}

// The shared copies fetched cooperatively (each copy's loops fused, split by
// the block size and the inner loop bound to the thread's own threadIdx.x),
// lowered for CUDA (barriers inserted, bindings verified) and run with the
// interpreter's GPU threads: the block-wide region is what makes it correct.
TEST(ScheduleGpuComputeAtTest, CooperativeFetchLoweredForCudaMatches) {
  auto base = LowerText(kMatmul, kShape);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base, 1);
  Status s = [&]() -> Status {
    TF_ASSIGN_OR_RETURN(auto loops, TileMatmulForGpu(sch));
    TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
    TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
    TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, loops[1]));
    TF_ASSIGN_OR_RETURN(BlockRV a, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
    TF_ASSIGN_OR_RETURN(BlockRV b, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
    for (BlockRV copy : {a, b}) {
      TF_RETURN_IF_ERROR(sch.ComputeAt(copy, loops[2]));
      TF_ASSIGN_OR_RETURN(auto copy_loops, sch.GetLoops(copy));  // bx tx k0 v0 v1
      TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({copy_loops[3], copy_loops[4]}));
      TF_ASSIGN_OR_RETURN(auto split, sch.Split(fused, {-1, 256}));
      TF_RETURN_IF_ERROR(sch.Bind(split[1], "threadIdx.x"));
    }
    return Status::OK();
  }();
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << ir::ToString(sch.func());
  std::string text = ir::ToString(sch.func());
  EXPECT_EQ(AllocatedShape(text, "A_shared"), "f32[16, 4]") << text;
  auto lowered = cuda::LowerForCuda(sch.func());
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << text;
  std::string lowered_text = ir::ToString(*lowered);
  EXPECT_NE(lowered_text.find("barrier"), std::string::npos) << lowered_text;
  auto ref = MakeReference(*base);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_TRUE(MatchesReference(*ref, *lowered, /*jit=*/false));
  EXPECT_TRUE(ReplaysIdentically(*base, sch));
}

}  // namespace
}  // namespace tunefarm::testing
