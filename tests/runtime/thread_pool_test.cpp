// The runtime that generated kernels call: parallel_for coverage and chunking,
// nesting, error propagation, thread-count control, aligned allocation.
// (Lives with the compiler tests because that binary links tunefarm_runtime.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tunefarm/runtime/runtime.h"

namespace {

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::mutex mu;
  std::set<std::thread::id> threads;
  explicit Coverage(int64_t n) : hits(static_cast<size_t>(n)) {}
};

int32_t CountBody(int64_t begin, int64_t end, void* closure) {
  auto* c = static_cast<Coverage*>(closure);
  for (int64_t i = begin; i < end; ++i) c->hits[static_cast<size_t>(i)].fetch_add(1);
  std::lock_guard<std::mutex> lock(c->mu);
  c->threads.insert(std::this_thread::get_id());
  return 0;
}

class RuntimeTest : public ::testing::Test {
 protected:
  void TearDown() override { tunefarm_set_num_threads(0); }
};

TEST_F(RuntimeTest, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    tunefarm_set_num_threads(threads);
    EXPECT_EQ(tunefarm_get_num_threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 7, 8, 63, 64, 65, 1000, 100003}) {
      Coverage c(n);
      ASSERT_EQ(tunefarm_parallel_for(n, CountBody, &c), 0);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c.hits[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
      if (n > 0) EXPECT_LE(c.threads.size(), size_t(std::min<int64_t>(threads, n)));
    }
  }
}

TEST_F(RuntimeTest, UsesSeveralThreadsAndTheCaller) {
  tunefarm_set_num_threads(4);
  Coverage c(4000);
  ASSERT_EQ(tunefarm_parallel_for(4000, CountBody, &c), 0);
  EXPECT_EQ(c.threads.size(), 4u);
  EXPECT_EQ(c.threads.count(std::this_thread::get_id()), 1u);
}

TEST_F(RuntimeTest, RepeatedCallsAreStable) {
  tunefarm_set_num_threads(3);
  for (int rep = 0; rep < 2000; ++rep) {
    Coverage c(17);
    ASSERT_EQ(tunefarm_parallel_for(17, CountBody, &c), 0);
    for (int i = 0; i < 17; ++i) ASSERT_EQ(c.hits[size_t(i)].load(), 1) << rep;
  }
}

struct Nested {
  std::atomic<int64_t> inner_total{0};
  std::atomic<int> inner_threads_mismatch{0};
};

int32_t InnerBody(int64_t begin, int64_t end, void* closure) {
  static_cast<Nested*>(closure)->inner_total.fetch_add(end - begin);
  return 0;
}

int32_t OuterBody(int64_t begin, int64_t end, void* closure) {
  auto* n = static_cast<Nested*>(closure);
  for (int64_t i = begin; i < end; ++i) {
    std::thread::id me = std::this_thread::get_id();
    // A nested call runs serially, in this very thread.
    struct Probe {
      std::thread::id expected;
      Nested* n;
    } probe{me, n};
    auto body = [](int64_t b, int64_t e, void* p) -> int32_t {
      auto* pr = static_cast<Probe*>(p);
      if (std::this_thread::get_id() != pr->expected || b != 0 || e != 10) pr->n->inner_threads_mismatch++;
      return InnerBody(b, e, pr->n);
    };
    if (tunefarm_parallel_for(10, body, &probe) != 0) return 1;
  }
  return 0;
}

TEST_F(RuntimeTest, NestedCallsRunSerially) {
  tunefarm_set_num_threads(4);
  Nested n;
  ASSERT_EQ(tunefarm_parallel_for(50, OuterBody, &n), 0);
  EXPECT_EQ(n.inner_total.load(), 500);
  EXPECT_EQ(n.inner_threads_mismatch.load(), 0);
}

int32_t FailAbove(int64_t begin, int64_t end, void* closure) {
  int64_t limit = *static_cast<int64_t*>(closure);
  return end > limit ? 42 : 0;
}

TEST_F(RuntimeTest, ReturnsTheBodysErrorCode) {
  tunefarm_set_num_threads(4);
  int64_t limit = 90;
  EXPECT_EQ(tunefarm_parallel_for(100, FailAbove, &limit), 42);
  limit = 1000;
  EXPECT_EQ(tunefarm_parallel_for(100, FailAbove, &limit), 0);
}

TEST_F(RuntimeTest, ConcurrentCallersFromSeveralThreads) {
  tunefarm_set_num_threads(2);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 200; ++rep) {
        Coverage c(33);
        if (tunefarm_parallel_for(33, CountBody, &c) != 0) bad++;
        for (int i = 0; i < 33; ++i) {
          if (c.hits[size_t(i)].load() != 1) bad++;
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(RuntimeTest, ZeroRestoresTheDefault) {
  tunefarm_set_num_threads(0);
  int32_t def = tunefarm_get_num_threads();
  EXPECT_GE(def, 1);
  tunefarm_set_num_threads(5);
  EXPECT_EQ(tunefarm_get_num_threads(), 5);
  tunefarm_set_num_threads(0);
  EXPECT_EQ(tunefarm_get_num_threads(), def);
}

TEST_F(RuntimeTest, AlignedAllocation) {
  for (int64_t align : {1, 8, 64, 128, 4096}) {
    void* p = tunefarm_alloc(1000, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % uintptr_t(std::max<int64_t>(align, 1)), 0u);
    static_cast<char*>(p)[999] = 1;
    tunefarm_free(p);
  }
  void* p = tunefarm_alloc(0, 64);
  EXPECT_NE(p, nullptr);
  tunefarm_free(p);
  tunefarm_free(nullptr);
}

}  // namespace
