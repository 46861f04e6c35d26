// The static shared-memory bank-conflict and load-width estimate
// (costmodel/shared_bank_conflicts.h) on hand-built accesses whose answers
// follow from the bank model: 32 banks of 4-byte words, broadcast of one
// word, 16-byte accesses served a quarter-warp at a time.
#include <gtest/gtest.h>

#include <vector>

#include "../../costmodel/shared_bank_conflicts.h"

namespace tunefarm::costmodel::detail {
namespace {

using ir::DataType;
using ir::Expr;
using ir::ForKind;
using ir::MemoryScope;
using ir::Var;

// Byte addresses lane * stride_bytes for 32 lanes.
std::vector<int64_t> Strided(int64_t stride_bytes) {
  std::vector<int64_t> a;
  for (int64_t lane = 0; lane < 32; ++lane) a.push_back(lane * stride_bytes);
  return a;
}

TEST(BankConflictWaysTest, ScalarStrides) {
  EXPECT_EQ(BankConflictWays(Strided(4), 4), 1);     // stride-1 floats
  EXPECT_EQ(BankConflictWays(Strided(8), 4), 2);     // stride-2 floats
  EXPECT_EQ(BankConflictWays(Strided(12), 4), 1);    // stride 3: odd strides visit every bank once
  EXPECT_EQ(BankConflictWays(Strided(16), 4), 4);    // stride 4
  EXPECT_EQ(BankConflictWays(Strided(128), 4), 32);  // stride-32 floats: one bank
  EXPECT_EQ(BankConflictWays(Strided(0), 4), 1);     // broadcast: one word for every lane
  EXPECT_EQ(BankConflictWays({}, 4), 0);
}

TEST(BankConflictWaysTest, LanesReadingTheSameWordShareIt) {
  // Pairs of lanes read the same word, 16 words in consecutive banks.
  std::vector<int64_t> a;
  for (int64_t lane = 0; lane < 32; ++lane) a.push_back(lane / 2 * 4);
  EXPECT_EQ(BankConflictWays(a, 4), 1);
  // 16 lanes on word 0, 16 on word 32: both in bank 0.
  for (int64_t lane = 0; lane < 32; ++lane) a[static_cast<size_t>(lane)] = lane < 16 ? 0 : 128;
  EXPECT_EQ(BankConflictWays(a, 4), 2);
}

TEST(BankConflictWaysTest, WideAccessesGoByPhases) {
  EXPECT_EQ(BankConflictWays(Strided(16), 16), 1);   // consecutive float4: 4 quarter-warps, no conflict
  EXPECT_EQ(BankConflictWays(Strided(8), 8), 1);     // consecutive float2: 2 half-warps
  EXPECT_EQ(BankConflictWays(Strided(32), 16), 2);   // float4 every 8 floats: 8 lanes over 64 words
  EXPECT_EQ(BankConflictWays(Strided(128), 16), 8);  // float4 every 32 floats: the same 4 banks
  EXPECT_EQ(BankConflictWays(Strided(0), 16), 1);    // one float4 for every lane
}

// Loops around a hand-built access, outermost first.
class SharedAccessTest : public ::testing::Test {
 protected:
  Var Loop(const std::string& name, int64_t extent, ForKind kind = ForKind::kSerial, Binding binding = Binding::kNone) {
    vars_.emplace_back(name);
    LoopInfo l;
    l.var = vars_.back().get();
    l.extent = extent;
    l.kind = binding == Binding::kNone ? kind : ForKind::kThreadBinding;
    l.binding = binding;
    loops_.Push(l);
    return vars_.back();
  }
  SharedAccessEstimate Analyze(const std::vector<Expr>& indices, std::vector<int64_t> shape = {4096}) {
    ir::Buffer b = ir::MakeBuffer("S", DataType::Float(32), std::move(shape), MemoryScope::kShared);
    auto est = AnalyzeSharedAccess(*b, indices, loops_);
    EXPECT_TRUE(est.has_value());
    return est.value_or(SharedAccessEstimate{});
  }

  std::vector<Var> vars_;
  LoopStack loops_;
};

TEST_F(SharedAccessTest, StridedThreadsConflict) {
  Var tx = Loop("tx", 64, ForKind::kSerial, Binding::kThreadX);
  for (int64_t stride : {1, 2, 32}) {
    SCOPED_TRACE(stride);
    const SharedAccessEstimate est = Analyze({Expr(tx) * stride});
    EXPECT_EQ(est.warp_lanes, 32);
    EXPECT_EQ(est.lanes, 1);
    EXPECT_EQ(est.ways, stride);
  }
  EXPECT_EQ(Analyze({Expr(5)}).ways, 1);  // broadcast
}

TEST_F(SharedAccessTest, WarpNumbersThreadIdxXFastest) {
  Var ty = Loop("ty", 8, ForKind::kSerial, Binding::kThreadY);
  Var tx = Loop("tx", 4, ForKind::kSerial, Binding::kThreadX);
  // S[ty][tx] in a [8, 32] buffer: the warp's lanes are 4 x-threads by 8 y-rows, 32 words apart.
  EXPECT_EQ(Analyze({Expr(ty), Expr(tx)}, {8, 32}).ways, 8);
  // S[tx][ty] in a [4, 8] buffer: 32 consecutive words.
  EXPECT_EQ(Analyze({Expr(tx), Expr(ty)}, {4, 8}).ways, 1);
}

TEST_F(SharedAccessTest, FewerThreadsThanAWarp) {
  Var tx = Loop("tx", 8, ForKind::kSerial, Binding::kThreadX);
  const SharedAccessEstimate est = Analyze({Expr(tx) * 32});
  EXPECT_EQ(est.warp_lanes, 8);
  EXPECT_EQ(est.ways, 8);
}

TEST_F(SharedAccessTest, Float4Loads) {
  Var tx = Loop("tx", 32, ForKind::kSerial, Binding::kThreadX);
  Var k = Loop("k", 16);
  Var v = Loop("v", 4, ForKind::kVectorized);
  // Each lane reads 4 consecutive floats: one float4, the warp conflict-free.
  SharedAccessEstimate est = Analyze({Expr(tx) * 4 + v});
  EXPECT_EQ(est.lanes, 4);
  EXPECT_EQ(est.ways, 1);
  EXPECT_EQ(est.scalar_ways, 4);  // one float at a time: stride 4
  // A packed operand: lane tx's run of 4 at [tx][k][0..4) of a [32, 16, 4] buffer,
  // rows 64 floats apart: every quarter-warp on the same 4 banks.
  est = Analyze({Expr(tx), Expr(k), Expr(v)}, {32, 16, 4});
  EXPECT_EQ(est.lanes, 4);
  EXPECT_EQ(est.ways, 8);
  // Misaligned by one element: stays scalar.
  est = Analyze({Expr(tx) * 4 + v + 1});
  EXPECT_EQ(est.lanes, 1);
}

TEST_F(SharedAccessTest, UnrolledRunsGiveNarrowerVectorsOnlyWhenAligned) {
  Var tx = Loop("tx", 32, ForKind::kSerial, Binding::kThreadX);
  Var u = Loop("u", 2, ForKind::kUnrolled);
  EXPECT_EQ(Analyze({Expr(tx) * 2 + u}).lanes, 2);
  EXPECT_EQ(Analyze({Expr(tx) * 2 + u}).ways, 1);
  EXPECT_EQ(Analyze({Expr(tx) * 3 + u}).lanes, 1);  // odd rows: not 8-byte aligned
  EXPECT_EQ(Analyze({Expr(tx) + Expr(u) * 32}).lanes, 1);  // the unrolled loop strides
}

TEST_F(SharedAccessTest, SerialInnerLoopIsNotAVector) {
  Var tx = Loop("tx", 32, ForKind::kSerial, Binding::kThreadX);
  Var s = Loop("s", 4);
  EXPECT_EQ(Analyze({Expr(tx) * 4 + s}).lanes, 1);
  EXPECT_EQ(Analyze({Expr(tx) * 4 + s}).ways, 4);
}

TEST_F(SharedAccessTest, FusedIndicesEvaluate) {
  Var tx = Loop("tx", 128, ForKind::kSerial, Binding::kThreadX);
  // A fused index: row tx / 8, column tx % 8. Rows of 8 floats are
  // consecutive words; rows of 32 put the warp's 4 rows on the same 8 banks.
  EXPECT_EQ(Analyze({Expr(tx) / 8, Expr(tx) % 8}, {16, 8}).ways, 1);
  EXPECT_EQ(Analyze({Expr(tx) / 8, Expr(tx) % 8}, {16, 32}).ways, 4);
}

TEST_F(SharedAccessTest, NoThreadLoopNoEstimate) {
  Var i = Loop("i", 32);
  ir::Buffer b = ir::MakeBuffer("S", DataType::Float(32), {32}, MemoryScope::kShared);
  EXPECT_FALSE(AnalyzeSharedAccess(*b, {Expr(i)}, loops_).has_value());
}

}  // namespace
}  // namespace tunefarm::costmodel::detail
