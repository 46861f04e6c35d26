// PlanWorkspace: buffers alive at once never share a byte, every offset is
// aligned, and buffers that are never alive together reuse memory.
#include "tunefarm/tuner/workspace_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace tunefarm::tuner {
namespace {

int64_t AlignUp(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

// Every property a plan must have; `alignment` as planned.
void ExpectValid(const std::vector<BufferLifetime>& buffers, const WorkspacePlan& plan, int64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  EXPECT_EQ(plan.bytes % alignment, 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0) << "buffer " << i;
    EXPECT_GE(plan.offsets[i], 0) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + buffers[i].bytes, plan.bytes) << "buffer " << i;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!LifetimesOverlap(buffers[i], buffers[j]) || buffers[i].bytes == 0 || buffers[j].bytes == 0) continue;
      const bool disjoint = plan.offsets[i] + buffers[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + buffers[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " [" << plan.offsets[i] << ", +" << buffers[i].bytes << ") and " << j
                            << " [" << plan.offsets[j] << ", +" << buffers[j].bytes << ") are alive at once";
    }
  }
}

TEST(WorkspacePlanTest, AChainReusesTheBytesOfWhatIsNoLongerRead) {
  // a -> b -> c: a and c are never alive at once; b overlaps both.
  const std::vector<BufferLifetime> chain = {{100, 0, 1}, {200, 1, 2}, {100, 2, 3}};
  const WorkspacePlan plan = PlanWorkspace(chain);
  ExpectValid(chain, plan, 64);
  EXPECT_EQ(plan.offsets[1], 0);  // the largest first
  EXPECT_EQ(plan.offsets[0], 256);
  EXPECT_EQ(plan.offsets[2], 256);
  EXPECT_EQ(plan.bytes, 384);  // not 128 + 256 + 128

  // The same sizes all alive at once: nothing shared.
  const std::vector<BufferLifetime> together = {{100, 0, 3}, {200, 1, 2}, {100, 2, 3}};
  const WorkspacePlan apart = PlanWorkspace(together);
  ExpectValid(together, apart, 64);
  EXPECT_EQ(apart.bytes, 512);
}

TEST(WorkspacePlanTest, SmallBuffersFillTheGapALargeOneLeaves) {
  // A dies after step 0; C and D, born later, go into its bytes beside B.
  const std::vector<BufferLifetime> buffers = {{1024, 0, 0}, {256, 0, 9}, {192, 1, 9}, {128, 1, 9}};
  const WorkspacePlan plan = PlanWorkspace(buffers);
  ExpectValid(buffers, plan, 64);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 1024);
  EXPECT_EQ(plan.offsets[2], 0);
  EXPECT_EQ(plan.offsets[3], 192);
  EXPECT_EQ(plan.bytes, 1280);
}

TEST(WorkspacePlanTest, OddSizesAreRoundedToTheAlignment) {
  const std::vector<BufferLifetime> buffers = {{1, 0, 0}, {17, 0, 0}, {0, 0, 0}, {33, 0, 1}, {65, 1, 1}};
  const WorkspacePlan plan = PlanWorkspace(buffers, 16);
  ExpectValid(buffers, plan, 16);
  EXPECT_EQ(plan.offsets[2], 0);  // no bytes, no memory
  // Step 1 holds 80 + 48 bytes; step 0's 16 and 32 go where the 80 will be.
  EXPECT_EQ(plan.offsets[4], 0);
  EXPECT_EQ(plan.offsets[3], 80);
  EXPECT_EQ(plan.offsets[1], 0);
  EXPECT_EQ(plan.offsets[0], 32);
  EXPECT_EQ(plan.bytes, 128);
  const WorkspacePlan wide = PlanWorkspace(buffers, 64);
  ExpectValid(buffers, wide, 64);
  EXPECT_EQ(wide.bytes, 192);  // 128 + 64 at step 1; step 0's 64 + 64 + 64 in the same bytes
  EXPECT_EQ(PlanWorkspace({}).bytes, 0);
}

TEST(WorkspacePlanTest, RandomLifetimesNeverShareBytesWhileAlive) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferLifetime> buffers(1 + rng() % 60);
    for (BufferLifetime& b : buffers) {
      b.bytes = int64_t(rng() % 5000);
      b.first = rng() % 40;
      b.last = b.first + rng() % 10;
    }
    const int64_t alignment = int64_t(1) << (rng() % 8);
    const WorkspacePlan plan = PlanWorkspace(buffers, alignment);
    ExpectValid(buffers, plan, alignment);
    // No worse than a slot each, no better than the busiest step needs.
    int64_t each = 0, busiest = 0;
    for (const BufferLifetime& b : buffers) each += AlignUp(b.bytes, alignment);
    for (size_t step = 0; step < 50; ++step) {
      int64_t live = 0;
      for (const BufferLifetime& b : buffers) live += b.first <= step && step <= b.last ? AlignUp(b.bytes, alignment) : 0;
      busiest = std::max(busiest, live);
    }
    EXPECT_LE(plan.bytes, each);
    EXPECT_GE(plan.bytes, busiest);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace tunefarm::tuner
