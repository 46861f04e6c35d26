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
  // Another size or alignment never gets a block it does not fit.
  void* other_size = tunefarm_alloc(kLarge + 64, 64);
  void* other_alignment = tunefarm_alloc(kLarge, 4096);
  EXPECT_NE(other_size, first);
  EXPECT_NE(other_alignment, first);
  EXPECT_TRUE(Aligned(other_alignment, 4096));
  tunefarm_free(other_alignment);
  tunefarm_free(other_size);
  tunefarm_free(again);
}

TEST(RuntimeAllocatorTest, SmallBlocksAreNotCached) {
  // Below 64 KiB the heap serves them; a freed small block may come back from
  // malloc, but two live ones never share memory.
  char* a = static_cast<char*>(tunefarm_alloc(4096, 64));
  char* b = static_cast<char*>(tunefarm_alloc(4096, 64));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(a + 4096 <= b || b + 4096 <= a);
  tunefarm_free(a);
  tunefarm_free(b);
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
