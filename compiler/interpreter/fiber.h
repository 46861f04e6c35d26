// Fiber: a function run on its own stack, which can pause itself (Yield) and
// be continued later (Resume) by the thread that resumed it.
//
// The interpreter runs the threads of one GPU block as fibers on the calling
// thread: each runs until it reaches a barrier and yields, and once every
// thread has arrived the next phase begins. One OS thread, so a program is
// run deterministically, and a race that a missing barrier leaves shows up
// the same way on every run.
//
// A Fiber owns its stack (mapped once, with a guard page below it, reused by
// every Reset). The function must not let an exception escape; a fiber that
// is dropped while paused leaks what its stack holds, so callers resume a
// paused fiber until it finishes (the interpreter throws at the pause point
// to unwind it). Not thread-safe; a fiber is resumed from one thread only.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <functional>

namespace tunefarm::interp {

class Fiber {
 public:
  explicit Fiber(size_t stack_bytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares fn to run from its start at the next Resume. Only when the
  // fiber is not paused inside a previous function.
  void Reset(std::function<void()> fn);
  // Runs the fiber until it yields or its function returns.
  void Resume();
  // From inside the fiber: back to the caller of Resume.
  void Yield();

  bool started() const { return started_; }
  bool finished() const { return finished_; }

 private:
  static void Trampoline(unsigned int hi, unsigned int lo);

  ucontext_t context_{};
  ucontext_t caller_{};
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  std::function<void()> fn_;
  bool started_ = false;
  bool finished_ = true;
};

}  // namespace tunefarm::interp
