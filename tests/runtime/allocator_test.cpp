// The runtime's allocation of kernel-local buffers: alignment, and large
// blocks kept for the next call of the same size (runtime/allocator.cpp).
// (Lives with the compiler tests because that binary links tunefarm_runtime.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tunefarm/runtime/runtime.h"

namespace {

constexpr int64_t kLarge = int64_t(1) << 20;  // a padded input of a few hundred KiB and up

bool Aligned(const void* p, int64_t alignment) { return reinterpret_cast<uintptr_t>(p) % uintptr_t(alignment) == 0; }

TEST(RuntimeAllocatorTest, EveryBlockIsAlignedAndWritable) {
  for (int64_t size : {int64_t(1), int64_t(1000), kLarge + 3}) {
    for (int64_t align : {1, 8, 64, 128, 4096}) {
      char* p = static_cast<char*>(tunefarm_alloc(size, align));
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(Aligned(p, align)) << size << " bytes at alignment " << align;
      std::memset(p, 0x5a, size_t(size));
      tunefarm_free(p);
    }
  }
}

TEST(RuntimeAllocatorTest, ALargeBlockIsKeptForTheNextCallOfTheSameSize) {
  void* first = tunefarm_alloc(kLarge, 64);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, size_t(kLarge));
  tunefarm_free(first);
  // The kernel's next call: the same block, its pages already in place.
  void* again = tunefarm_alloc(kLarge, 64);
  EXPECT_EQ(again, first);
  tunefarm_free(again);
  // The block is cached again: another size or alignment must not get it.
  void* other_size = tunefarm_alloc(kLarge + 64, 64);
  void* other_alignment = tunefarm_alloc(kLarge, 4096);
  EXPECT_NE(other_size, first);
  EXPECT_NE(other_alignment, first);
  EXPECT_TRUE(Aligned(other_alignment, 4096));
  void* back = tunefarm_alloc(kLarge, 64);
  EXPECT_EQ(back, first) << "still there for its own size";
  tunefarm_free(back);
  tunefarm_free(other_alignment);
  tunefarm_free(other_size);
}

TEST(RuntimeAllocatorTest, LiveBlocksNeverShareMemory) {
  // Small blocks (from the heap) and large ones (cached or not) alike.
  for (int64_t size : {int64_t(4096), kLarge}) {
    char* a = static_cast<char*>(tunefarm_alloc(size, 64));
    char* b = static_cast<char*>(tunefarm_alloc(size, 64));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(a + size <= b || b + size <= a) << size;
    tunefarm_free(a);
    tunefarm_free(b);
  }
}

TEST(RuntimeAllocatorTest, AnAlignmentBeyondAGibibyteIsRefused) {
  EXPECT_EQ(tunefarm_alloc(kLarge, int64_t(1) << 40), nullptr);
  EXPECT_EQ(tunefarm_alloc(kLarge, INT64_MAX), nullptr);
}

TEST(RuntimeAllocatorTest, TheNewestBlocksOfManySizesAreKept) {
  // More sizes than the cache holds (16 blocks): the most recently freed come back.
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(tunefarm_alloc(kLarge + i * 4096, 64));
  for (void* p : blocks) tunefarm_free(p);
  for (int i = 4; i < 20; ++i) {
    void* p = tunefarm_alloc(kLarge + i * 4096, 64);
    EXPECT_EQ(p, blocks[size_t(i)]) << "size #" << i;
    tunefarm_free(p);
  }
}

struct Slots {
  std::vector<char*> blocks;
};

int32_t AllocateAndFill(int64_t begin, int64_t end, void* closure) {
  auto* slots = static_cast<Slots*>(closure);
  for (int64_t i = begin; i < end; ++i) {
    char* p = static_cast<char*>(tunefarm_alloc(kLarge, 64));
    if (p == nullptr) return 1;
    std::memset(p, int(i + 1), size_t(kLarge));
    slots->blocks[size_t(i)] = p;
  }
  return 0;
}

// As a kernel does: a block per iteration, allocated and freed inside the
// parallel body, on every thread of the pool at once.
int32_t AllocateUseAndFree(int64_t begin, int64_t end, void*) {
  for (int64_t i = begin; i < end; ++i) {
    char* p = static_cast<char*>(tunefarm_alloc(kLarge, 64));
    if (p == nullptr) return 1;
    std::memset(p, int(i), size_t(kLarge));
    const bool intact = p[0] == char(i) && p[kLarge - 1] == char(i);
    tunefarm_free(p);
    if (!intact) return 2;
  }
  return 0;
}

TEST(RuntimeAllocatorTest, BlocksFreedInsideParallelBodies) {
  // A free inside a body must not wait on the pool, whose caller holds its
  // dispatch lock until the bodies return (this hung once).
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(tunefarm_parallel_for(64, &AllocateUseAndFree, nullptr), 0) << "round " << round;
  }
}

TEST(RuntimeAllocatorTest, ThreadsAllocatingAtOnceGetTheirOwnBlocks) {
  constexpr int64_t kChunks = 8;
  for (int round = 0; round < 3; ++round) {  // the later rounds take cached blocks
    Slots slots{std::vector<char*>(kChunks, nullptr)};
    ASSERT_EQ(tunefarm_parallel_for(kChunks, &AllocateAndFill, &slots), 0);
    for (int64_t i = 0; i < kChunks; ++i) {
      const char* p = slots.blocks[size_t(i)];
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p[0], char(i + 1)) << "block " << i << " was written by another chunk";
      EXPECT_EQ(p[kLarge - 1], char(i + 1)) << "block " << i;
    }
    for (char* p : slots.blocks) tunefarm_free(p);
  }
}

}  // namespace
