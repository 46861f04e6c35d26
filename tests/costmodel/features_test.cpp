// Feature extraction on hand-checkable programs: loop annotations, FLOP
// counts against Workload::Flops, strides and reuse, and schedule sensitivity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel {
namespace {

constexpr const char* kGmm = R"(workload gmm(M = 64, N = 32, K = 16) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
})";

ir::PrimFunc Lowered(const ir::PrimFunc& f) {
  auto l = LowerForCodegen(f);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return *l;
}

ir::PrimFunc DefaultOf(const char* text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

// The row of the store into `name` that has the most loops (the update, not the init).
StoreRow RowOf(const std::vector<StoreRow>& rows, const std::string& name) {
  StoreRow best;
  for (const StoreRow& r : rows) {
    if (r.buffer->name == name && (!best.buffer || r.values[kNumLoops] > best.values[kNumLoops])) best = r;
  }
  EXPECT_NE(best.buffer, nullptr) << "no store into " << name;
  return best;
}

// The buffer block describing `buffer` in a row, found by its unique bytes.
int SlotWithBytes(const StoreRow& r, float bytes) {
  for (int s = 0; s < kMaxBuffers; ++s) {
    if (r.values[BufferFeatureIndex(s, kBytes)] == bytes) return s;
  }
  return -1;
}

TEST(FeaturesTest, LayoutAndNames) {
  EXPECT_EQ(kStoreFeatures, 165);
  EXPECT_EQ(kNumFeatures, 3 * 165 + kProgramFeatures + kNestFeatures + kGpuFeatures);
  std::set<std::string> names;
  for (int i = 0; i < kNumFeatures; ++i) names.insert(FeatureName(i));
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumFeatures)) << "feature names must be unique";
  EXPECT_EQ(FeatureName(kVecLen), "sum.vec_len");
  EXPECT_EQ(FeatureName(kStoreFeatures + BufferFeatureIndex(1, kStride)), "max.buf1.stride");
  EXPECT_EQ(FeatureName(2 * kStoreFeatures + kOuterProd), "main.outer_prod");
  EXPECT_EQ(FeatureName(3 * kStoreFeatures + kNumStores), "prog.num_stores");
  EXPECT_EQ(FeatureName(kGpuOffset + kBankConflictMax), "gpu.bank_conflict_max");
}

TEST(FeaturesTest, DefaultGmmCountsStridesAndReuse) {
  ir::PrimFunc f = Lowered(DefaultOf(kGmm));
  std::vector<StoreRow> rows = ExtractStoreFeatures(f);
  ASSERT_EQ(rows.size(), 2u);  // init and update
  StoreRow u = RowOf(rows, "C");
  const float trip = 64.f * 32 * 16;
  EXPECT_EQ(u.values[kFloatMul], trip);
  EXPECT_EQ(u.values[kFloatAddSub], trip);
  EXPECT_EQ(u.values[kFloatMad], trip);  // C + A * B is an FMA candidate
  EXPECT_EQ(u.values[kOuterProd], trip);
  EXPECT_EQ(u.values[kNumLoops], 3.f);
  EXPECT_EQ(u.values[kVecNum], 0.f);
  EXPECT_EQ(u.values[kVecPos + static_cast<int>(LoopPosition::kNone)], 1.f);

  // C is read and written once per iteration: 2 accesses x 4 bytes x trip.
  int c = SlotWithBytes(u, 2 * 4 * trip);
  ASSERT_GE(c, 0);
  EXPECT_EQ(u.values[BufferFeatureIndex(c, kAccessReadWrite)], 1.f);
  EXPECT_EQ(u.values[BufferFeatureIndex(c, kUniqueBytes)], 64.f * 32 * 4);
  // k (innermost) does not index C: reused K times, stride from j (1 element).
  EXPECT_EQ(u.values[BufferFeatureIndex(c, kReuseLoopRead)], 1.f);
  EXPECT_EQ(u.values[BufferFeatureIndex(c, kReuseCount)], 16.f);
  EXPECT_EQ(u.values[BufferFeatureIndex(c, kStride)], 1.f);

  // A[i, k] and B[k, j]: one access each, 4 bytes x trip; the larger unique
  // region sorts first among equals only by order, so find them by stride.
  bool saw_a = false, saw_b = false;
  for (int s = 0; s < kMaxBuffers; ++s) {
    if (s == c || u.values[BufferFeatureIndex(s, kBytes)] != 4 * trip) continue;
    float stride = u.values[BufferFeatureIndex(s, kStride)];
    float unique = u.values[BufferFeatureIndex(s, kUniqueBytes)];
    if (stride == 1.f && unique == 64.f * 16 * 4) {
      saw_a = true;  // A: k moves it by one element; reused across j (extent 32)
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kReuseCount)], 32.f);
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kAccessRead)], 1.f);
    } else if (stride == 32.f && unique == 16.f * 32 * 4) {
      saw_b = true;  // B: k moves it by a row of N = 32; reused across i (extent 64)
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kReuseCount)], 64.f);
    }
  }
  EXPECT_TRUE(saw_a) << "no block for A";
  EXPECT_TRUE(saw_b) << "no block for B";
}

// The matmul with i parallel, j split by 8 (j_1 vectorized, innermost) and k
// unrolled between j_0 and j_1, lowered; the schedule of the next two tests.
void ParallelVectorUnrolledGmm(ir::PrimFunc* out) {
  ir::PrimFunc base = DefaultOf(kGmm);
  Schedule sch(base);
  auto c = sch.GetBlock("C");
  ASSERT_TRUE(c.ok());
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  auto js = sch.Split((*loops)[1], {-1, 8});
  ASSERT_TRUE(js.ok());
  ASSERT_TRUE(sch.Reorder({(*loops)[0], (*js)[0], (*loops)[2], (*js)[1]}).ok());
  ASSERT_TRUE(sch.Parallel((*loops)[0]).ok());
  ASSERT_TRUE(sch.Vectorize((*js)[1]).ok());
  ASSERT_TRUE(sch.Unroll((*loops)[2]).ok());
  ir::PrimFunc f = Lowered(sch.func());
  *out = f;
}

TEST(FeaturesTest, VectorizedParallelAndUnrolledLoops) {
  ir::PrimFunc f;
  ASSERT_NO_FATAL_FAILURE(ParallelVectorUnrolledGmm(&f));
  StoreRow u = RowOf(ExtractStoreFeatures(f), "C");
  EXPECT_EQ(u.values[kVecNum], 1.f);
  EXPECT_EQ(u.values[kVecLen], 8.f);
  EXPECT_EQ(u.values[kVecProd], 8.f);
  EXPECT_EQ(u.values[kVecPos + static_cast<int>(LoopPosition::kInnerSpatial)], 1.f) << ir::ToString(f);
  EXPECT_EQ(u.values[kParallelNum], 1.f);
  EXPECT_EQ(u.values[kParallelLen], 64.f);
  EXPECT_EQ(u.values[kParallelPos + static_cast<int>(LoopPosition::kOuterSpatial)], 1.f);
  EXPECT_EQ(u.values[kUnrollLen], 16.f);
  EXPECT_EQ(u.values[kUnrollPos + static_cast<int>(LoopPosition::kInnerReduce)], 1.f);
  // B[k, j_0 * 8 + j_1] under the vectorized j_1: unit stride.
  bool found = false;
  for (int s = 0; s < kMaxBuffers; ++s) {
    if (u.values[BufferFeatureIndex(s, kUniqueBytes)] == 16.f * 32 * 4) {
      found = true;
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kStride)], 1.f);
    }
  }
  EXPECT_TRUE(found);
  // The pooled vector carries it too (log2(1 + 8) in the max block; the
  // pooling's log2 is a cubic approximation, good to 0.001).
  FeatureVector v = ExtractFeatures(f);
  ASSERT_EQ(v.size(), static_cast<size_t>(kNumFeatures));
  EXPECT_NEAR(v[kStoreFeatures + kVecLen], std::log2(9.f), 1e-3);
  EXPECT_NEAR(v[2 * kStoreFeatures + kVecLen], std::log2(9.f), 1e-3);  // the update is the main store
}

// The loop-nest block of the same schedule: i (parallel), j_0, k (unrolled),
// j_1 (vectorized 8); the register tile is j_1 under the reduction loop k.
TEST(FeaturesTest, NestBlockDescribesTheInnermostLoops) {
  ir::PrimFunc f;
  ASSERT_NO_FATAL_FAILURE(ParallelVectorUnrolledGmm(&f));
  const auto& n = RowOf(ExtractStoreFeatures(f), "C").nest;
  auto level = [&](int i, LoopLevelFeature k) { return n[static_cast<size_t>(kLevels + i * kLevelFeatures + k)]; };
  // Innermost: j_1, vectorized; C and B move by one element, A (read buffer 0) not at all.
  EXPECT_EQ(level(0, kLevelExtent), 8.f);
  EXPECT_EQ(level(0, kLevelKind), 3.f);
  EXPECT_EQ(level(0, kLevelReduce), 0.f);
  EXPECT_EQ(level(0, kLevelStrideOut), 1.f);
  EXPECT_EQ(level(0, kLevelStrideIn0), 0.f) << ir::ToString(f);
  EXPECT_EQ(level(0, kLevelStrideIn1), 1.f);
  EXPECT_EQ(level(0, kLevelContiguous), 2.f);
  EXPECT_EQ(level(0, kLevelBroadcast), 1.f);
  // Then k, unrolled, a reduction: C does not move, B moves a row (32 elements).
  EXPECT_EQ(level(1, kLevelExtent), 16.f);
  EXPECT_EQ(level(1, kLevelKind), 2.f);
  EXPECT_EQ(level(1, kLevelReduce), 1.f);
  EXPECT_EQ(level(1, kLevelStrideOut), 0.f);
  EXPECT_EQ(level(1, kLevelStrideIn1), 32.f);
  EXPECT_EQ(level(3, kLevelKind), 4.f);  // i, parallel
  EXPECT_EQ(level(4, kLevelExtent), 0.f);  // no fifth loop
  EXPECT_EQ(n[kRegTileProd], 8.f);
  EXPECT_EQ(n[kRegTileFast], 1.f);
  EXPECT_EQ(n[kRegTileAccum], 8.f);
  EXPECT_EQ(n[kRegTileReduceExtent], 16.f);
  EXPECT_EQ(n[kAccumRegisters], 1.f);
  EXPECT_EQ(n[kVecLanes], 8.f);
  EXPECT_EQ(n[kVecNativeMultiple], 0.f);  // half an AVX-512 register
  EXPECT_EQ(n[kVecLanesMod], 8.f);
  EXPECT_EQ(n[kVecContiguous], 2.f);
  EXPECT_EQ(n[kVecBroadcast], 1.f);
  EXPECT_EQ(n[kVecGather], 0.f);
  EXPECT_EQ(n[kVecBlocked], 0.f);
  EXPECT_EQ(n[kStraightLineProd], 8.f * 16.f);  // j_1 and k
  EXPECT_EQ(n[kParallelTasks], 64.f);
  EXPECT_EQ(n[kBodyExecutions], 64.f * 32 * 16 / 8);
  // The pooled vector carries the main store's block.
  FeatureVector v = ExtractFeatures(f);
  EXPECT_EQ(v[kNestOffset + kRegTileProd], 8.f);
  EXPECT_EQ(FeatureName(kNestOffset + kRegTileProd), "nest.reg_tile_prod");
  EXPECT_EQ(FeatureName(kNestOffset + kLevels + kLevelFeatures + kLevelStrideOut), "nest.level1.stride_out");
}

TEST(FeaturesTest, FusedLoopsGiveBoundedRegions) {
  ir::PrimFunc base = DefaultOf(kGmm);
  Schedule sch(base);
  auto c = sch.GetBlock("C");
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  auto fused = sch.Fuse({(*loops)[0], (*loops)[1]});
  ASSERT_TRUE(fused.ok());
  ir::PrimFunc f = Lowered(sch.func());
  StoreRow u = RowOf(ExtractStoreFeatures(f), "C");
  // C[fused / 32, fused % 32]: the whole 64 x 32 output, no more.
  bool found = false;
  for (int s = 0; s < kMaxBuffers; ++s) {
    if (u.values[BufferFeatureIndex(s, kAccessReadWrite)] == 1.f) {
      found = true;
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kUniqueBytes)], 64.f * 32 * 4) << ir::ToString(f);
      EXPECT_EQ(u.values[BufferFeatureIndex(s, kStride)], 1.f);
    }
  }
  EXPECT_TRUE(found);
}

// The FLOPs the features count for the default schedule equal Workload::Flops
// for every suite workload (shrunk so lowering stays quick).
TEST(FeaturesTest, FlopsMatchWorkloadFlopsOnTheSuite) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tf") continue;
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto w = ShrinkWorkload(text, entry.path().string(), {}, 1e6);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto f = LowerToPrimFunc(*w);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    std::vector<StoreRow> rows = ExtractStoreFeatures(Lowered(*f));
    double flops = 0, int_ops = 0;
    for (const StoreRow& r : rows) {
      flops += RowFloatOps(r);
      for (int k : {kIntAddSub, kIntMul, kIntDivMod, kIntCmp, kIntMath, kIntOtherCall}) int_ops += r.values[k];
    }
    // Integer workloads (gmm_int8): Flops counts the value path's integer
    // arithmetic, which is all the integer arithmetic of a default schedule
    // whose indices are plain loop variables.
    if (flops == 0) flops = int_ops;
    EXPECT_NEAR(flops, w->Flops(), 1e-6 * w->Flops() + 0.5) << entry.path().filename();
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(FeaturesTest, TwoSchedulesOfOneWorkloadDiffer) {
  ir::PrimFunc base = DefaultOf(kGmm);
  Schedule sch(base);
  auto c = sch.GetBlock("C");
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  ASSERT_TRUE(sch.Reorder({(*loops)[0], (*loops)[2], (*loops)[1]}).ok());
  FeatureVector a = ExtractFeatures(Lowered(base));
  FeatureVector b = ExtractFeatures(Lowered(sch.func()));
  EXPECT_NE(a, b);
  // Same program twice: same vector (extraction keeps no state between calls).
  EXPECT_EQ(a, ExtractFeatures(Lowered(base)));
  FeatureMatrix m = ExtractFeatureMatrix({&base, &base});
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), kNumFeatures);
}

}  // namespace
}  // namespace tunefarm::costmodel
