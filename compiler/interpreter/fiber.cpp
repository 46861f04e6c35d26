#include "interpreter/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <utility>

namespace tunefarm::interp {

Fiber::Fiber(size_t stack_bytes) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  mapping_bytes_ = (stack_bytes + page - 1) / page * page + page;
  // MAP_NORESERVE: a block of a thousand threads maps a thousand stacks, of
  // which the interpreter touches a few pages each.
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping_ == MAP_FAILED) std::abort();
  // The lowest page stays inaccessible: an overflow faults instead of
  // writing into a neighbour.
  mprotect(mapping_, page, PROT_NONE);
}

Fiber::~Fiber() { munmap(mapping_, mapping_bytes_); }

void Fiber::Reset(std::function<void()> fn) {
  fn_ = std::move(fn);
  started_ = false;
  finished_ = false;
  getcontext(&context_);
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  context_.uc_stack.ss_sp = static_cast<char*>(mapping_) + page;
  context_.uc_stack.ss_size = mapping_bytes_ - page;
  context_.uc_link = &caller_;  // where the function's return goes
  // makecontext passes int arguments only: the pointer travels in two halves.
  auto bits = reinterpret_cast<uintptr_t>(this);
  makecontext(&context_, reinterpret_cast<void (*)()>(&Fiber::Trampoline), 2, unsigned(bits >> 32),
              unsigned(bits & 0xffffffffu));
}

void Fiber::Trampoline(unsigned int hi, unsigned int lo) {
  auto* self = reinterpret_cast<Fiber*>((uintptr_t(hi) << 32) | uintptr_t(lo));
  self->fn_();
  self->finished_ = true;
}  // returns to uc_link: the caller of the last Resume

void Fiber::Resume() {
  if (finished_) return;
  started_ = true;
  swapcontext(&caller_, &context_);
}

void Fiber::Yield() { swapcontext(&context_, &caller_); }

}  // namespace tunefarm::interp
