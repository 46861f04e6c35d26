// What isolation costs: the same tiny candidates measured in-process and
// through the runner. Prints figures and asserts nothing about time (timing
// belongs in benchmarks); disabled by default, run it by hand:
//   tunefarm_worker_tests --gtest_also_run_disabled_tests --gtest_filter='*Overhead*'
#include <chrono>
#include <cstdio>
#include <random>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The in-process equivalent of one candidate: parse, lower, compile, run once,
// compare with a (precomputed) reference.
double InProcessCandidate(const std::string& text, const std::vector<HostBuffer>& expected) {
  auto start = Clock::now();
  auto w = ParseWorkload(text);
  auto f = LowerToPrimFunc(*w);
  auto k = JitCompile(*f, Target::Host());
  std::mt19937_64 rng(42);
  std::vector<HostBuffer> args;
  std::vector<void*> ptrs;
  for (const auto& p : f->params) {
    args.push_back(HostBuffer::Like(p));
    args.back().FillRandom(rng);
    ptrs.push_back(args.back().data());
  }
  EXPECT_TRUE((*k)->Run(ptrs).ok());
  EXPECT_TRUE(CompareBuffers(args.back(), expected.back()).equal);
  return Since(start);
}

TEST(MeasureOverheadTest, DISABLED_RunnerRoundTripVersusInProcess) {
  const std::string text = MatmulText(8, 8, 8);
  auto w = ParseWorkload(text);
  auto f = LowerToPrimFunc(*w);
  std::mt19937_64 rng(42);
  std::vector<HostBuffer> ref;
  for (const auto& p : f->params) {
    ref.push_back(HostBuffer::Like(p));
    ref.back().FillRandom(rng);
  }
  std::vector<HostBuffer*> ref_ptrs;
  for (auto& b : ref) ref_ptrs.push_back(&b);
  ASSERT_TRUE(Interpret(*f, ref_ptrs).ok());

  // One kernel call, in process.
  auto k = JitCompile(*f, Target::Host());
  std::vector<void*> ptrs;
  for (auto& b : ref) ptrs.push_back(b.data());
  auto start = Clock::now();
  constexpr int kCalls = 100000;
  for (int i = 0; i < kCalls; ++i) (void)(*k)->Run(ptrs);
  double call = Since(start) / kCalls;

  constexpr int kCandidates = 32;
  double inproc = 0;
  for (int i = 0; i < kCandidates; ++i) inproc += InProcessCandidate(text, ref);
  inproc /= kCandidates;

  MeasureOptions o;
  o.repeat = 1;
  o.number = 1;
  o.min_repeat_ms = 0;
  LocalMeasurerOptions mo = TestMeasurerOptions(false);
  mo.build_threads = 1;  // compare like with like: one compile at a time
  LocalMeasurer measurer(mo);
  start = Clock::now();
  ASSERT_TRUE(Measured(measurer.Measure({Candidate("warm", text)}, o)[0], 1));
  double first = Since(start);
  start = Clock::now();
  double single_builds = 0;
  for (int i = 0; i < kCandidates; ++i) {
    MeasureResult r = measurer.Measure({Candidate("one", text)}, o)[0];
    ASSERT_TRUE(Measured(r, 1));
    single_builds += r.build_seconds;
  }
  double single = Since(start) / kCandidates;
  single_builds /= kCandidates;
  // A candidate rejected before compiling: the bare protocol round trip.
  start = Clock::now();
  for (int i = 0; i < kCandidates; ++i) {
    ASSERT_EQ(measurer.Measure({Candidate("bad", text, "garbage")}, o)[0].error, MeasureErrorKind::kInvalidCandidate);
  }
  double bare = Since(start) / kCandidates;
  std::vector<MeasureInput> batch;
  for (int i = 0; i < kCandidates; ++i) batch.push_back(Candidate("c" + std::to_string(i), text));
  start = Clock::now();
  for (const auto& r : measurer.Measure(batch, o)) ASSERT_TRUE(Measured(r, 1));
  double batched = Since(start) / kCandidates;
  mo.build_threads = 0;
  LocalMeasurer parallel(mo);
  (void)parallel.Measure({Candidate("warm", text)}, o);
  start = Clock::now();
  for (const auto& r : parallel.Measure(batch, o)) ASSERT_TRUE(Measured(r, 1));
  double batched_parallel = Since(start) / kCandidates;

  std::printf("tiny kernel (matmul 8x8x8), per candidate:\n");
  std::printf("  kernel call in process:               %10.2f us\n", call * 1e6);
  std::printf("  in process: parse+lower+JIT+run+check %10.2f ms\n", inproc * 1e3);
  std::printf("  runner, first call (process start):   %10.2f ms\n", first * 1e3);
  std::printf("  runner, one-candidate batches:        %10.2f ms  (%.2fx in-process)\n", single * 1e3, single / inproc);
  std::printf("  runner, one-candidate batches less their build: %.2f ms\n", (single - single_builds) * 1e3);
  std::printf("  runner, bare round trip (rejected candidate): %.3f ms\n", bare * 1e3);
  std::printf("  runner, batch of %d, 1 build thread:  %10.2f ms  (%.2fx in-process)\n", kCandidates, batched * 1e3,
              batched / inproc);
  std::printf("  runner, batch of %d, all CPUs:        %10.2f ms  (%.2fx in-process)\n", kCandidates,
              batched_parallel * 1e3, batched_parallel / inproc);
}

}  // namespace
}  // namespace tunefarm::testing
