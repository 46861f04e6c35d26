// LocalMeasurer: the embedded Measurer, measuring on this machine.
//
// Candidates are built, run, checked and timed in a long-lived child process,
// tunefarm-runner, that LocalMeasurer starts with posix_spawn and drives over a
// socket (protocol: docs/measurement.md). A candidate that crashes the runner
// or outlives its deadline costs that candidate only: the runner is killed,
// reaped, and a fresh one measures the rest of the batch. Within a batch, the
// runner compiles all candidates in parallel (build_threads), then times them
// one at a time with nothing else running.
//
// Thread safety: Measure may be called from any thread; concurrent calls run
// one after another (an internal mutex), each getting its results in input
// order. Lifetime: the runner lives as long as the LocalMeasurer (it is
// SIGKILLed and reaped by the destructor; it exits by itself within 250 ms if
// this process dies). A runner found dead between calls is replaced
// transparently by the next Measure.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

class RunnerProcess;

struct LocalMeasurerOptions {
  // The tunefarm-runner executable; empty: FindRunnerPath().
  std::string runner_path;
  // A command the runner is started through, its words in order (e.g.
  // {"qemu-aarch64", "-L", SYSROOT} for a worker that itself runs under
  // emulation on a machine that cannot execute the runner directly); empty:
  // the runner is executed itself.
  std::vector<std::string> runner_launcher;
  // Threads that compile a batch's candidates at once; 0: the number of CPUs.
  int build_threads = 0;
  // How long a runner may stay silent when it owes no build, reference or
  // run (its start-up, between phases) before it counts as stuck.
  double idle_timeout_s = 30;
  // Where cuda targets run: "cpu" (they are invalid_candidate, as any
  // target this host cannot run) or "cuda:N", GPU N of this machine, which
  // the runner opens at its first batch (the runner's environment carries
  // it, TUNEFARM_RUNNER_DEVICE). Host targets run on the CPU either way. A
  // GPU that cannot be opened makes its cuda candidates invalid_candidate
  // naming why; a CUDA error while running one (an illegal address) is that
  // candidate's runtime_error, and a fresh runner measures the rest.
  std::string device = "cpu";
  // TEST DEVICE ONLY: starts runners with TUNEFARM_RUNNER_TEST_FAULTS=1, which
  // makes them honour "# tunefarm-test-fault: <fault>" lines in traces
  // (crash, hang, wrong output on purpose). Never set outside tests.
  bool enable_test_faults = false;
};

// Where the runner is: $TUNEFARM_RUNNER if set; else "tunefarm-runner" in the
// directory of the running executable (installed layout: both in bin/); else
// the runner of the build tree this library was built in. NotFound names
// every place tried.
Result<std::string> FindRunnerPath();

class LocalMeasurer : public Measurer {
 public:
  explicit LocalMeasurer(LocalMeasurerOptions options = {});
  ~LocalMeasurer() override;

  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs,
                                     const MeasureOptions& options) override;

  // For tests and logs: runners started so far, and the current one's pid (-1: none).
  int runner_starts() const;
  int runner_pid() const;

 private:
  struct Round;
  friend class RunnerRound;  // one round's conversation with the runner (local_measurer.cpp)
  Status EnsureRunner();
  void RunRound(const std::vector<MeasureInput>& inputs, const MeasureOptions& options, Round& round);
  void DropRunner();

  const LocalMeasurerOptions options_;
  mutable std::mutex mutex_;              // serializes Measure calls
  std::unique_ptr<RunnerProcess> runner_;  // GUARDED_BY(mutex_); null until needed, and after a failure
  int runner_starts_ = 0;                  // GUARDED_BY(mutex_)
};

}  // namespace tunefarm
