// The machine's speed during a run: batch speeds from the probes the results
// carry, per worker, and the tuning loop's report of a slow stretch.
#include "tunefarm/tuner/machine_speed.h"

#include <gtest/gtest.h>

#include "tuning_loop_test_util.h"

namespace tunefarm::tuner::testing {
namespace {

MeasureResult Probed(double probe_seconds, std::string worker = "") {
  MeasureResult r;
  r.repeat_seconds = {1e-3, 1e-3, 1e-3};
  r.speed_probe_seconds = probe_seconds;
  r.worker = std::move(worker);
  return r;
}

MeasureResult Failed() {
  MeasureResult r;
  r.error = MeasureErrorKind::kRuntimeError;
  r.error_message = "crashed";
  return r;
}

TEST(MachineSpeedTest, BatchesWithoutProbesHaveNoSpeed) {
  MachineSpeed speed;
  EXPECT_FALSE(speed.AddBatch({}).has_value());
  MeasureResult unprobed = Probed(0);  // a synthetic device, an older worker
  EXPECT_FALSE(speed.AddBatch({unprobed, Failed()}).has_value());
  MachineSpeed::Summary s = speed.Summarize();
  EXPECT_EQ(s.batches, 0);
  EXPECT_EQ(s.slow_batches, 0);
  EXPECT_EQ(s.slowest, 1);
}

TEST(MachineSpeedTest, ABatchIsAsFastAsItsMedianProbe) {
  MachineSpeed speed;
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(1e-3), Probed(1e-3), Failed()}), 1.0);
  // One probe that met a hiccup does not make its batch slow...
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(1e-3), Probed(4e-3), Probed(1e-3)}), 1.0);
  // ...a stretch that lasts the batch does.
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(1.25e-3), Probed(1.25e-3), Probed(1e-3)}), 0.8);
  MachineSpeed::Summary s = speed.Summarize();
  EXPECT_EQ(s.batches, 3);
  EXPECT_EQ(s.slow_batches, 1);
  EXPECT_EQ(s.slow_results, 3);
  EXPECT_DOUBLE_EQ(s.slowest, 0.8);
}

TEST(MachineSpeedTest, AFasterStretchLaterMakesTheEarlierBatchesSlow) {
  MachineSpeed speed;
  // The run starts in a slow stretch: against itself, it looks steady.
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(2e-3), Probed(2e-3)}), 1.0);
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(1e-3), Probed(1e-3)}), 1.0);
  MachineSpeed::Summary s = speed.Summarize();
  EXPECT_EQ(s.slow_batches, 1) << "the first batch ran at half the speed the run reached later";
  EXPECT_DOUBLE_EQ(s.slowest, 0.5);
}

TEST(MachineSpeedTest, SlowTrialsArePerTaskAndMerged) {
  MachineSpeed speed;
  speed.AddBatch({Probed(1e-3)}, {0, 0, 1});
  speed.AddBatch({Probed(2e-3), Probed(2e-3)}, {0, 1, 3});
  speed.AddBatch({Probed(2e-3), Probed(2e-3)}, {1, 0, 2});  // another task, same stretch
  speed.AddBatch({Probed(2e-3), Probed(2e-3)}, {0, 3, 5});  // adjacent: merged
  speed.AddBatch({Probed(1e-3), Probed(1e-3)}, {0, 5, 7});
  speed.AddBatch({Probed(2e-3)}, {0, 7, 8});
  EXPECT_EQ(speed.SlowTrials(0), (std::vector<std::pair<int, int>>{{1, 5}, {7, 8}}));
  EXPECT_EQ(speed.SlowTrials(1), (std::vector<std::pair<int, int>>{{0, 2}}));
  EXPECT_TRUE(speed.SlowTrials(2).empty());
}

TEST(MachineSpeedTest, EachWorkerIsComparedWithItself) {
  MachineSpeed speed;
  // Two machines of a fleet whose probes differ by their hardware, not by a
  // slowdown: neither is slow.
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(1e-3, "fast-box"), Probed(3e-3, "slow-box")}), 1.0);
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(3e-3, "slow-box"), Probed(3e-3, "slow-box")}), 1.0);
  // The slow box slows down: its own earlier probe is the reference.
  EXPECT_DOUBLE_EQ(*speed.AddBatch({Probed(6e-3, "slow-box"), Probed(6e-3, "slow-box")}), 0.5);
  EXPECT_EQ(speed.Summarize().slow_batches, 1);
}

// The test device's synthetic times with a probe: 1 ms normally, 2 ms during
// the Measure calls listed in `slow_calls` (1-based: the stretch in which
// something else used the machine).
class StretchMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    ++calls;
    std::vector<MeasureResult> results = device_.Measure(inputs, options);
    for (MeasureResult& r : results) {
      if (r.error == MeasureErrorKind::kNone) r.speed_probe_seconds = slow_calls.count(calls) ? 2e-3 : 1e-3;
    }
    return results;
  }
  std::set<int> slow_calls;
  int calls = 0;

 private:
  TestDeviceMeasurer device_;
};

class MachineSpeedLoopTest : public TuningLogTest {
 protected:
  MachineSpeedLoopTest() : TuningLogTest("tunefarm_machine_speed_") {}
};

TEST_F(MachineSpeedLoopTest, ASlowStretchIsReportedWhileItLastsAndInTheSummary) {
  StretchMeasurer measurer;
  measurer.slow_calls = {3, 4};  // call 1 is the untuned default, then batches of 8
  // Five whole batches: no trial left for the closing confirmation.
  TuneOptions options = LoopOptions(41);
  options.confirm_best = false;
  TuningLoop loop(options, db_.get(), &measurer, nullptr);
  auto task = MakeTuneTask(SmallMatmul());
  ASSERT_TRUE(task.ok());
  std::vector<double> reported;
  std::atomic<bool> stop{false};
  Status st = loop.Run({*task}, stop, [&](const Progress& p) { reported.push_back(p.machine_speed); });
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(measurer.calls, 6);  // the default and five batches of 8
  // Progress after the default (not counted: its probe follows a long serial
  // run), then after each batch: the slow stretch shows while it lasts.
  EXPECT_EQ(reported, (std::vector<double>{0, 1.0, 0.5, 0.5, 1.0, 1.0}));
  MachineSpeed::Summary s = loop.machine_speed().Summarize();
  EXPECT_EQ(s.batches, 5);
  EXPECT_EQ(s.slow_batches, 2);
  EXPECT_EQ(s.slow_results, 16);
  EXPECT_DOUBLE_EQ(s.slowest, 0.5);
  // The task's trials 9-24 (after the default and the first batch), where the curve is shaded.
  EXPECT_EQ(loop.machine_speed().SlowTrials(0), (std::vector<std::pair<int, int>>{{9, 25}}));
  EXPECT_TRUE(loop.machine_speed().SlowTrials(1).empty()) << "no other task";
}

TEST_F(MachineSpeedLoopTest, AnUnprobedDeviceReportsNoSpeed) {
  TestDeviceMeasurer measurer;  // synthetic times, no probe
  TuningLoop loop(LoopOptions(17), db_.get(), &measurer, nullptr);
  auto task = MakeTuneTask(SmallMatmul());
  ASSERT_TRUE(task.ok());
  std::atomic<bool> stop{false};
  std::vector<double> reported;
  ASSERT_TRUE(loop.Run({*task}, stop, [&](const Progress& p) { reported.push_back(p.machine_speed); }).ok());
  for (double speed : reported) EXPECT_EQ(speed, 0) << "0: unknown, never a slow machine";
  EXPECT_EQ(loop.machine_speed().Summarize().batches, 0);
}

}  // namespace
}  // namespace tunefarm::tuner::testing
