// InsertGpuBarriers on programs the schedule primitives make: a matmul whose
// A and B tiles are fetched into shared memory cooperatively (compute_at the
// serial k0 loop, the copy's fused loop split by the block size and bound to
// threadIdx.x), lowered as for CUDA. With the barriers the program matches
// the default one through the interpreter; without them it does not.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/simplify.h"
#include "tunefarm/compiler/lower/insert_gpu_barriers.h"
#include "tunefarm/compiler/lower/lower_blocks.h"
#include "tunefarm/compiler/lower/verify_gpu.h"

namespace tunefarm::testing {
namespace {

// C in tiles of tm x tn (blockIdx.x), one thread per element (threadIdx.x),
// k by tk; a kLocal accumulator; A and B tiles in shared memory.
Result<ir::PrimFunc> CooperativeMatmul(const ir::PrimFunc& base, int64_t tm, int64_t tn, int64_t tk) {
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, tm}));
  TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, tn}));
  TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, tk}));
  TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], j[1], k[0], k[1]}));
  TF_ASSIGN_OR_RETURN(LoopRV bx, sch.Fuse({i[0], j[0]}));
  TF_ASSIGN_OR_RETURN(LoopRV tx, sch.Fuse({i[1], j[1]}));
  TF_RETURN_IF_ERROR(sch.Bind(bx, "blockIdx.x"));
  TF_RETURN_IF_ERROR(sch.Bind(tx, "threadIdx.x"));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, tx));
  TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kShared));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kShared));
  for (BlockRV copy : {a_copy, b_copy}) {
    TF_RETURN_IF_ERROR(sch.ComputeAt(copy, k[0]));
    TF_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(copy));  // bx tx k0 ax0 ax1
    TF_ASSIGN_OR_RETURN(LoopRV fused, sch.Fuse({loops[3], loops[4]}));
    TF_ASSIGN_OR_RETURN(auto parts, sch.Split(fused, {-1, tm * tn}));
    TF_RETURN_IF_ERROR(sch.Bind(parts[1], "threadIdx.x"));
  }
  ir::PrimFunc out = sch.func();
  out.body = ir::Simplify(ir::LowerBlocks(out.body));
  return out;
}

int CountBarriers(const ir::Stmt& s) {
  int n = 0;
  ir::PostOrderVisit(s, [&](const ir::IRNode* node) { n += node->kind == ir::IRNodeKind::kBarrier; });
  return n;
}

TEST(InsertGpuBarriersScheduleTest, CooperativeFetchMatmulNeedsItsBarriers) {
  struct Case {
    int64_t m, n, k, tm, tn, tk;
  };
  for (const Case& c : {Case{7, 17, 33, 4, 8, 5}, Case{16, 16, 16, 4, 4, 8}, Case{9, 5, 12, 2, 4, 3}}) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    auto base = LowerText(kMatmul, {{"M", c.m}, {"N", c.n}, {"K", c.k}});
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    auto bare = CooperativeMatmul(*base, c.tm, c.tn, c.tk);
    ASSERT_TRUE(bare.ok()) << bare.status().ToString();
    ir::PrimFunc synced = *bare;
    synced.body = InsertGpuBarriers(bare->body);
    // One after the fetches, one at the end of the k0 body.
    EXPECT_EQ(CountBarriers(synced.body), 2) << ir::ToString(synced);
    EXPECT_TRUE(InsertGpuBarriers(synced.body).same_as(synced.body));
    Status verified = VerifyGpuBindings(synced);
    EXPECT_TRUE(verified.ok()) << verified.ToString() << "\n" << ir::ToString(synced);
    EXPECT_TRUE(SameResults(*base, synced, /*jit=*/false));
    EXPECT_FALSE(SameResults(*base, *bare, /*jit=*/false)) << "the program without barriers went unnoticed";
  }
}

}  // namespace
}  // namespace tunefarm::testing
