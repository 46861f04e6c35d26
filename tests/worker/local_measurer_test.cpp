// LocalMeasurer with a real tunefarm-runner: good candidates are timed, bad
// ones get the right error kind, and a crash or hang costs one candidate.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

using Clock = std::chrono::steady_clock;

class LocalMeasurerTest : public ::testing::Test {
 protected:
  LocalMeasurer measurer_{TestMeasurerOptions()};
  const std::string matmul_ = MatmulText(32, 64, 32);
};

TEST_F(LocalMeasurerTest, DefaultScheduleIsTimedWithEveryRepeat) {
  auto results = measurer_.Measure({Candidate("default", matmul_)}, FastOptions());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].candidate_id, "default");
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_TRUE(std::isfinite(results[0].MeanSeconds()));
}

TEST_F(LocalMeasurerTest, ScheduledTraceIsTimed) {
  std::string trace = VectorizedMatmulTrace(matmul_);
  ASSERT_NE(trace.find("vectorize"), std::string::npos) << trace;
  MeasureOptions o = FastOptions();
  o.repeat = 5;
  auto results = measurer_.Measure({Candidate("vec", matmul_, trace)}, o);
  EXPECT_TRUE(Measured(results[0], 5));
}

TEST_F(LocalMeasurerTest, FixedNumberAndCacheFlush) {
  MeasureOptions o = FastOptions();
  o.number = 4;
  o.min_repeat_ms = 0;
  o.flush_cache = true;
  o.num_threads = 1;
  auto results = measurer_.Measure({Candidate("flush", matmul_)}, o);
  EXPECT_TRUE(Measured(results[0]));
}

TEST_F(LocalMeasurerTest, TraceThatDoesNotFitIsInvalidCandidate) {
  auto results = measurer_.Measure(
      {Candidate("nosuchblock", matmul_, "tunefarm-trace 1\nb0 = get_block(\"Z\")\n"),
       Candidate("garbage", matmul_, "this is not a trace\n"),
       Candidate("badsplit", matmul_,
                 "tunefarm-trace 1\nb0 = get_block(\"C\")\nl1, l2, l3 = get_loops(b0)\nl4, l5 = split(l9, [2, 16])\n")},
      FastOptions());
  for (const auto& r : results) {
    EXPECT_EQ(r.error, MeasureErrorKind::kInvalidCandidate) << r.candidate_id << ": " << r.error_message;
    EXPECT_NE(r.error_message.find("trace"), std::string::npos) << r.error_message;
    EXPECT_TRUE(std::isinf(r.MeanSeconds()));
  }
  EXPECT_NE(results[0].error_message.find("Z"), std::string::npos) << results[0].error_message;
}

TEST_F(LocalMeasurerTest, MalformedWorkloadAndForeignTargetAreInvalid) {
  MeasureInput foreign = Candidate("arm", matmul_);
  foreign.target = "llvm -mtriple=aarch64-linux-gnu";
  MeasureInput unknown = Candidate("unknown", matmul_);
  unknown.target = "fpga";
  auto results = measurer_.Measure(
      {Candidate("bad", "workload w(N = 4) {\n  A = input f32[N]\n  B[i] = A[i] +\n  output B\n}\n"), foreign,
       unknown, Candidate("good", matmul_)},
      FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[0].error_message.find("workload:"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[1].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[1].error_message.find("cannot run on this machine"), std::string::npos) << results[1].error_message;
  EXPECT_EQ(results[2].error, MeasureErrorKind::kInvalidCandidate) << results[2].error_message;
  EXPECT_TRUE(Measured(results[3]));
}

TEST_F(LocalMeasurerTest, SegfaultCostsOneCandidateAndTheRunnerRestarts) {
  auto results = measurer_.Measure({Candidate("before", matmul_), Candidate("crash", matmul_, FaultTrace("segfault")),
                                    Candidate("after", matmul_)},
                                   FastOptions());
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_EQ(results[1].error, MeasureErrorKind::kRuntimeError);
  EXPECT_NE(results[1].error_message.find("SIGSEGV"), std::string::npos) << results[1].error_message;
  EXPECT_TRUE(Measured(results[2]));
  EXPECT_EQ(measurer_.runner_starts(), 2);
}

TEST_F(LocalMeasurerTest, AbortReportsSignalAndRunnerOutput) {
  auto results = measurer_.Measure({Candidate("abort", matmul_, FaultTrace("abort")), Candidate("next", matmul_)},
                                   FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kRuntimeError);
  EXPECT_NE(results[0].error_message.find("SIGABRT"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("test fault: aborting"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(Measured(results[1]));
}

TEST_F(LocalMeasurerTest, HangingRunTimesOutAndTheNextCandidateMeasures) {
  MeasureOptions o = FastOptions();
  o.run_timeout_s = 1;
  auto start = Clock::now();
  auto results = measurer_.Measure({Candidate("hang", matmul_, FaultTrace("hang")), Candidate("next", matmul_)}, o);
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(results[0].error, MeasureErrorKind::kTimeout);
  EXPECT_NE(results[0].error_message.find("run_timeout_s"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(Measured(results[1]));
  // One run deadline, plus two builds and a runner start: well under 10 s.
  EXPECT_LT(elapsed, 10.0);
}

TEST_F(LocalMeasurerTest, HangingBuildTimesOut) {
  MeasureOptions o = FastOptions();
  o.build_timeout_s = 1;
  auto start = Clock::now();
  auto results = measurer_.Measure({Candidate("hangbuild", matmul_, FaultTrace("hang_build")), Candidate("next", matmul_)}, o);
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(results[0].error, MeasureErrorKind::kTimeout);
  EXPECT_NE(results[0].error_message.find("build_timeout_s"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(Measured(results[1]));
  EXPECT_LT(elapsed, 10.0);
}

TEST_F(LocalMeasurerTest, CrashAmongParallelBuildsIsPinnedOnItsCandidate) {
  auto results = measurer_.Measure({Candidate("a", matmul_), Candidate("crashbuild", matmul_, FaultTrace("crash_build")),
                                    Candidate("b", matmul_), Candidate("c", matmul_)},
                                   FastOptions());
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_EQ(results[1].error, MeasureErrorKind::kCompileError) << results[1].error_message;
  EXPECT_NE(results[1].error_message.find("SIGSEGV"), std::string::npos) << results[1].error_message;
  EXPECT_TRUE(Measured(results[2]));
  EXPECT_TRUE(Measured(results[3]));
}

TEST_F(LocalMeasurerTest, WrongResultIsAnErrorNotAFastKernel) {
  auto results = measurer_.Measure({Candidate("wrong", matmul_, FaultTrace("wrong"))}, FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kWrongResult);
  EXPECT_NE(results[0].error_message.find("output 'C'"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("interpreter"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(results[0].repeat_seconds.empty());
  EXPECT_EQ(results[0].speed_probe_seconds, 0) << "a failed candidate carries no probe";
}

TEST_F(LocalMeasurerTest, LargeWorkloadChecksAgainstCompiledDefaultSchedule) {
  std::string big = MatmulText(256, 256, 256);  // 33.5 Mflop: above the interpreter limit
  std::string trace = VectorizedMatmulTrace(big);
  auto results = measurer_.Measure({Candidate("big", big, trace), Candidate("bigwrong", big, FaultTrace("wrong"))},
                                   FastOptions());
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_EQ(results[1].error, MeasureErrorKind::kWrongResult);
  EXPECT_NE(results[1].error_message.find("compiled default schedule"), std::string::npos) << results[1].error_message;
}

TEST_F(LocalMeasurerTest, CodegenRejectionIsCompileError) {
  auto w = ParseWorkload(matmul_);
  auto f = LowerToPrimFunc(*w);
  Schedule sch(*f);
  auto loops = sch.GetLoops(*sch.GetBlock("C"));
  ASSERT_TRUE(sch.Bind((*loops)[0], "threadIdx.x").ok());
  auto results = measurer_.Measure({Candidate("gpu-on-cpu", matmul_, sch.trace().ToText())}, FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kCompileError) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("threadIdx.x"), std::string::npos) << results[0].error_message;
}

TEST_F(LocalMeasurerTest, ParallelScheduleOnTwoThreads) {
  auto w = ParseWorkload(matmul_);
  auto f = LowerToPrimFunc(*w);
  Schedule sch(*f);
  auto loops = sch.GetLoops(*sch.GetBlock("C"));
  ASSERT_TRUE(sch.Parallel((*loops)[0]).ok());
  MeasureOptions o = FastOptions();
  o.num_threads = 2;
  auto results = measurer_.Measure({Candidate("par", matmul_, sch.trace().ToText())}, o);
  EXPECT_TRUE(Measured(results[0]));
}

TEST_F(LocalMeasurerTest, UncheckedCandidatesAreTimedEvenIfWrong) {
  MeasureOptions o = FastOptions();
  o.check_correctness = false;
  auto results = measurer_.Measure({Candidate("unchecked", matmul_, FaultTrace("wrong"))}, o);
  EXPECT_TRUE(Measured(results[0]));
}

TEST(LocalMeasurerFaultsTest, FaultLinesAreInertWithoutTheTestOption) {
  LocalMeasurer measurer(TestMeasurerOptions(/*faults=*/false));
  auto results = measurer.Measure({Candidate("inert", MatmulText(8, 8, 8), FaultTrace("segfault"))}, FastOptions());
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_EQ(measurer.runner_starts(), 1);
}

}  // namespace
}  // namespace tunefarm::testing
