// The tunefarm runtime's thread pool, behind tunefarm_parallel_for (the
// allocation of kernel-local buffers is in allocator.cpp).
//
// Scheduling: a parallel_for over [0, n) is cut into T = min(threads, n)
// contiguous chunks of nearly equal size (static schedule, like OpenMP's
// schedule(static)); the calling thread runs chunk 0 and worker w runs chunk w.
// Static chunks keep a thread on the same rows across repeated calls, which is
// what cache-tiled kernels want.
//
// Waiting: workers and the caller spin briefly (a kernel often issues parallel
// loops back to back, and a futex wake-up costs microseconds) and then block on
// a condition variable, so an idle pool costs no CPU.
//
// Nesting: a thread that is already inside a parallel body runs a nested
// parallel_for serially (thread-local flag). Concurrent top-level calls from
// different threads are serialised on the dispatch mutex.
//
// Lifetime: the pool is created on first use and deliberately leaked, so that
// a kernel running during static destruction never meets a destroyed pool.
#include "tunefarm/runtime/runtime.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

thread_local bool t_inside_parallel = false;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Iterations of the spin loop before blocking (a few microseconds), yielding the
// CPU now and then: with more threads than free cores, a spinner must not keep
// the thread it waits for off the CPU.
constexpr int kSpinIterations = 4000;
constexpr int kYieldEvery = 256;

inline void SpinPause(int i) {
  if (i % kYieldEvery == kYieldEvery - 1) {
    std::this_thread::yield();
  } else {
    CpuRelax();
  }
}

int DefaultNumThreads() {
  if (const char* env = std::getenv("TUNEFARM_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

class ThreadPool {
 public:
  ThreadPool() : default_threads_(DefaultNumThreads()), num_threads_(default_threads_) {}

  int32_t ParallelFor(int64_t n, tunefarm_parallel_body body, void* closure) {
    if (n <= 0) return 0;
    if (t_inside_parallel) return body(0, n, closure);
    std::lock_guard<std::mutex> dispatch(dispatch_mu_);
    int64_t participants = std::min<int64_t>(num_threads_, n);
    if (participants <= 1) return RunSerial(n, body, closure);
    EnsureWorkers(static_cast<int>(participants) - 1);

    // Publish the job; the generation bump is what workers wait for.
    body_ = body;
    closure_ = closure;
    n_ = n;
    participants_ = participants;
    first_error_.store(0, std::memory_order_relaxed);
    // Every worker acknowledges every generation, participating or not, so that
    // no worker can still be reading this job's fields when the next is published.
    pending_.store(static_cast<int64_t>(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    work_cv_.notify_all();

    RunChunk(0);
    WaitForWorkers();
    return first_error_.load(std::memory_order_acquire);
  }

  void SetNumThreads(int32_t n) {
    std::lock_guard<std::mutex> dispatch(dispatch_mu_);
    num_threads_ = n > 0 ? n : default_threads_;
  }
  int32_t GetNumThreads() {
    std::lock_guard<std::mutex> dispatch(dispatch_mu_);
    return num_threads_;
  }

 private:
  static int32_t RunSerial(int64_t n, tunefarm_parallel_body body, void* closure) {
    t_inside_parallel = true;
    int32_t rc = body(0, n, closure);
    t_inside_parallel = false;
    return rc;
  }

  void RunChunk(int64_t index) {
    int64_t begin = n_ * index / participants_;
    int64_t end = n_ * (index + 1) / participants_;
    if (begin >= end) return;
    t_inside_parallel = true;
    int32_t rc = body_(begin, end, closure_);
    t_inside_parallel = false;
    if (rc != 0) {
      int32_t expected = 0;
      first_error_.compare_exchange_strong(expected, rc, std::memory_order_acq_rel);
    }
  }

  void WaitForWorkers() {
    for (int i = 0; i < kSpinIterations; ++i) {
      if (pending_.load(std::memory_order_acquire) == 0) return;
      SpinPause(i);
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }

  // Called with dispatch_mu_ held; workers are only ever added.
  void EnsureWorkers(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      int index = static_cast<int>(workers_.size()) + 1;
      uint64_t seen = generation_.load(std::memory_order_acquire);
      workers_.emplace_back([this, index, seen] { WorkerLoop(index, seen); });
      workers_.back().detach();
    }
  }

  void WorkerLoop(int index, uint64_t seen) {
    for (;;) {
      uint64_t gen = WaitForGeneration(seen);
      seen = gen;
      if (index < participants_) RunChunk(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_one();
      }
    }
  }

  uint64_t WaitForGeneration(uint64_t seen) {
    for (int i = 0; i < kSpinIterations; ++i) {
      uint64_t gen = generation_.load(std::memory_order_acquire);
      if (gen != seen) return gen;
      SpinPause(i);
    }
    std::unique_lock<std::mutex> lock(mu_);
    work_cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    return generation_.load(std::memory_order_acquire);
  }

  const int default_threads_;
  int num_threads_;                  // guarded by dispatch_mu_
  std::mutex dispatch_mu_;           // one job at a time
  std::mutex mu_;                    // pairs with the condition variables
  std::condition_variable work_cv_;  // a new generation was published
  std::condition_variable done_cv_;  // pending_ reached 0
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> pending_{0};
  std::atomic<int32_t> first_error_{0};
  std::vector<std::thread> workers_;

  // The current job; written before the generation bump (release), read after
  // observing it (acquire), and stable until pending_ drops to 0.
  tunefarm_parallel_body body_ = nullptr;
  void* closure_ = nullptr;
  int64_t n_ = 0;
  int64_t participants_ = 0;
};

ThreadPool& Pool() {
  static ThreadPool* pool = new ThreadPool();  // leaked on purpose, see file comment
  return *pool;
}

}  // namespace

extern "C" {

int32_t tunefarm_parallel_for(int64_t n, tunefarm_parallel_body body, void* closure) {
  return Pool().ParallelFor(n, body, closure);
}

void tunefarm_set_num_threads(int32_t n) { Pool().SetNumThreads(n); }

int32_t tunefarm_get_num_threads(void) { return Pool().GetNumThreads(); }

}  // extern "C"
