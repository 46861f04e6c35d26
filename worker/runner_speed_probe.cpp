// The speed probe (runner.h, TimeSpeedProbe): a fixed arithmetic loop timed
// on the kernel's threads right after the kernel, so that a tuning run can
// tell a slower kernel from a slower machine. On a shared host the machine's
// speed drifts by 10-30 % for minutes at a time (another tenant on a core's
// sibling, the clock): a kernel timed in such a stretch looks slower than
// one timed outside it, and nothing in its own times says so.
//
// Why this loop: independent multiply-add chains, enough of them to keep the
// floating-point pipes busy rather than wait on latency, so that a co-tenant
// competing for those pipes, or a lower clock, lengthens it. It touches no
// memory beyond registers: the probe must not depend on what the kernel left
// in the caches. Its absolute time means nothing; only its ratio to the same
// probe timed elsewhere in the same run (same binary, same threads) does.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include "runner.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::runner {
namespace {

using Clock = std::chrono::steady_clock;

// Four-lane vectors: one SSE register each on any x86-64, a NEON register on
// aarch64; the compiler's baseline ISA, whatever the kernel was built for.
typedef float Lanes __attribute__((vector_size(16)));

constexpr int kChains = 12;              // independent chains per thread: fills the pipes, fits the registers
constexpr int64_t kIterations = 200000;  // about 0.5-1 ms per call on a 3-5 GHz core
constexpr int kCalls = 3;                // the probe's time: the median of these
constexpr double kSettleSeconds = 0.05;  // a new pool's threads spread over their cores

// The loop's constants, read through volatile so that the compiler cannot
// fold the loop; multipliers below one and a small addend keep every lane
// finite and away from denormals, whose slow path would time something else.
volatile float g_probe_scale = 0.999f;
volatile float g_probe_shift = 0.01f;
// Where the chains' results go, so that the loop is not optimised away
// (every thread stores; relaxed: only the store matters, not its order).
std::atomic<float> g_probe_sink{0};

int32_t ProbeBody(int64_t begin, int64_t end, void*) {
  const float a = g_probe_scale, b = g_probe_shift;
  for (int64_t unit = begin; unit < end; ++unit) {
    Lanes acc[kChains];
    for (int k = 0; k < kChains; ++k) acc[k] = Lanes{1.0f, 1.5f, 2.0f, 2.5f} + float(k);
    const Lanes scale = {a, a - 0.001f, a - 0.002f, a - 0.003f};
    const Lanes shift = {b, 2 * b, 3 * b, 4 * b};
    for (int64_t i = 0; i < kIterations; ++i) {
      for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * scale + shift;
    }
    float sum = 0;
    for (int k = 0; k < kChains; ++k) sum += acc[k][0] + acc[k][1] + acc[k][2] + acc[k][3];
    g_probe_sink.store(sum, std::memory_order_relaxed);
  }
  return 0;
}

double TimeOnce() {
  // One unit per thread: every thread of the pool runs the same loop, and the
  // call lasts as long as the slowest one, as a statically split kernel does.
  const int64_t units = std::max<int32_t>(1, tunefarm_get_num_threads());
  auto start = Clock::now();
  tunefarm_parallel_for(units, &ProbeBody, nullptr);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

double TimeSpeedProbe() {
  // The first probe on more threads than before starts new pool threads
  // (the untuned default runs serially), and a new thread shares its
  // parent's core until the scheduler moves it, for some milliseconds: the
  // probe after the default ran a third slower on a quiet machine. So the
  // first one keeps the pool busy for a while, untimed; after that one call
  // wakes a pool that went idle.
  static int settled_threads = 1;
  const int threads = tunefarm_get_num_threads();
  if (threads > settled_threads) {
    auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < kSettleSeconds) TimeOnce();
    settled_threads = threads;
  }
  TimeOnce();
  std::vector<double> calls;
  for (int i = 0; i < kCalls; ++i) calls.push_back(TimeOnce());
  std::sort(calls.begin(), calls.end());
  return calls[calls.size() / 2];
}

}  // namespace tunefarm::runner
