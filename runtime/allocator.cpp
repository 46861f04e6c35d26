// Aligned allocation for kernel-local buffers (tunefarm_alloc / tunefarm_free).
//
// A kernel allocates its local buffers (a padded copy of an input, a packed
// tile) on every call and frees them before it returns. Through malloc
// alone, a buffer of a few hundred KiB comes either from the heap or from a
// fresh mmap, depending on the allocator's history in the process (glibc's
// dynamic mmap and trim thresholds): on the mmap path, and when the heap is
// trimmed after each free, every call faults its pages in afresh. With the
// allocator forced onto that path, a tuned DEP kernel ran at half its speed
// and a C2D kernel with a padded input at two thirds; which path a user's
// process takes depends on what else it allocated.
//
// So a large block freed by a kernel is kept for the next request of the same
// size and alignment: a small cache, most recently freed first, bounded in
// blocks (16, or 4 per CPU) and bytes. Small blocks go straight to
// malloc; the heap keeps them.
//
// Layout: every block has a header in front of the pointer handed out (the
// base malloc returned and the requested size and alignment), so that
// tunefarm_free needs no lookup. The cache is shared by all threads behind
// one mutex, taken for large blocks only; like the thread pool it lives until
// process exit.
#include "tunefarm/runtime/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace {

// Blocks of at least this many bytes are cached: below it, glibc serves
// requests from its heap bins without faults.
constexpr size_t kCachedMinBytes = size_t(64) << 10;
// What the cache may hold once freed: enough for the buffers of a few
// kernels called in turn, little next to the tensors they work on. A kernel
// that allocates inside a parallel loop frees a block per thread per call,
// so the bound on blocks grows with the machine's CPUs (MaxBlocks).
constexpr size_t kCacheMinBlocks = 16;
constexpr size_t kCacheBlocksPerThread = 4;
constexpr size_t kCacheMaxBytes = size_t(256) << 20;
// Larger alignments are refused (a page of a huge page is the most a kernel asks).
constexpr int64_t kMaxAlignment = int64_t(1) << 30;

// From the machine's CPUs, once: not from tunefarm_get_num_threads, which
// takes the pool's dispatch lock, held by the thread that waits for the
// kernel's parallel bodies, which free their blocks here.
size_t MaxBlocks() {
  static const size_t max_blocks =
      std::max(kCacheMinBlocks, kCacheBlocksPerThread * size_t(std::max(1u, std::thread::hardware_concurrency())));
  return max_blocks;
}

struct Header {
  void* base;        // what malloc returned
  size_t size;       // bytes requested
  size_t alignment;  // alignment of the pointer handed out
};

class BlockCache {
 public:
  // A cached block of exactly this size and alignment, or nullptr.
  void* Take(size_t size, size_t alignment) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = free_.size(); i-- > 0;) {
      const Header* h = HeaderOf(free_[i]);
      if (h->size == size && h->alignment == alignment) {
        void* p = free_[i];
        free_.erase(free_.begin() + std::ptrdiff_t(i));
        cached_bytes_ -= size;
        return p;
      }
    }
    return nullptr;
  }

  // Keeps `p` for a later Take; evicts the oldest blocks beyond the bounds.
  void Put(void* p) {
    std::vector<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(p);
      cached_bytes_ += HeaderOf(p)->size;
      const size_t max_blocks = MaxBlocks();
      while (!free_.empty() && (free_.size() > max_blocks || cached_bytes_ > kCacheMaxBytes)) {
        cached_bytes_ -= HeaderOf(free_.front())->size;
        evicted.push_back(free_.front());
        free_.erase(free_.begin());
      }
    }
    for (void* e : evicted) std::free(HeaderOf(e)->base);
  }

  static Header* HeaderOf(void* p) { return static_cast<Header*>(p) - 1; }

 private:
  std::mutex mu_;
  std::vector<void*> free_;  // GUARDED_BY(mu_): oldest first
  size_t cached_bytes_ = 0;  // GUARDED_BY(mu_)
};

BlockCache& Cache() {
  // Leaked on purpose: a kernel running during static destruction still frees.
  static BlockCache* cache = new BlockCache();
  return *cache;
}

}  // namespace

extern "C" {

void* tunefarm_alloc(int64_t size_bytes, int64_t alignment) {
  const size_t size = size_bytes > 0 ? size_t(size_bytes) : 1;
  if (alignment > kMaxAlignment) return nullptr;
  size_t align = alignof(Header);
  while (static_cast<int64_t>(align) < alignment) align <<= 1;  // power of two, >= the header's
  if (size >= kCachedMinBytes) {
    if (void* p = Cache().Take(size, align)) return p;
  }
  // Room for the header before an aligned address: at most align - 1 bytes
  // of slack plus the header itself.
  const size_t total = size + align - 1 + sizeof(Header);
  if (total < size) return nullptr;  // overflow
  void* base = std::malloc(total);
  if (base == nullptr) return nullptr;
  uintptr_t first = reinterpret_cast<uintptr_t>(base) + sizeof(Header);
  uintptr_t aligned = (first + align - 1) & ~uintptr_t(align - 1);
  void* p = reinterpret_cast<void*>(aligned);
  *BlockCache::HeaderOf(p) = Header{base, size, align};
  return p;
}

void tunefarm_free(void* ptr) {
  if (ptr == nullptr) return;
  Header* h = BlockCache::HeaderOf(ptr);
  if (h->size >= kCachedMinBytes && h->size <= kCacheMaxBytes) {
    Cache().Put(ptr);
    return;
  }
  std::free(h->base);
}

}  // extern "C"
