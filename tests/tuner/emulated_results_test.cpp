// A measurement the fleet says was taken under emulation (MeasureResult::
// emulated, set by a board worker under qemu and by the daemon) becomes an
// emulated record, even on a fingerprint that does not say so; a measurer
// that does not say so writes real records.
#include <gtest/gtest.h>

#include <atomic>

#include "tunefarm/tuner/tuning_loop.h"
#include "tuning_loop_test_util.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner {
namespace {

// The test device's times, marked as an emulated worker's results are.
class EmulatedMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    std::vector<MeasureResult> results = device_.Measure(inputs, options);
    for (MeasureResult& r : results) r.emulated = true;
    return results;
  }

 private:
  TestDeviceMeasurer device_;
};

class EmulatedResultsTest : public testing::TuningLogTest {
 protected:
  EmulatedResultsTest() : TuningLogTest("tunefarm_emulated_results_") {}
  void Tune(Measurer* measurer, int trials) {
    TuningLoop loop(testing::LoopOptions(trials), db_.get(), measurer, nullptr);
    std::atomic<bool> stop{false};
    ASSERT_TRUE(loop.Run({*MakeTuneTask(testing::SmallMatmul())}, stop, nullptr).ok());
  }
};

TEST_F(EmulatedResultsTest, AnEmulatedResultIsAnEmulatedRecord) {
  EmulatedMeasurer emulated;
  Tune(&emulated, 8);
  std::vector<database::TuningRecord> records = Records();
  ASSERT_GE(records.size(), 8u);
  for (const database::TuningRecord& r : records) {
    EXPECT_TRUE(r.emulated) << r.uid;
    EXPECT_FALSE(IsEmulatedFingerprint(r.target.fingerprint)) << "marked by the result, not the fingerprint";
  }
}

TEST_F(EmulatedResultsTest, AResultThatDoesNotSaySoIsARealRecord) {
  TestDeviceMeasurer real;
  Tune(&real, 8);
  std::vector<database::TuningRecord> records = Records();
  ASSERT_GE(records.size(), 8u);
  for (const database::TuningRecord& r : records) EXPECT_FALSE(r.emulated) << r.uid;
}

}  // namespace
}  // namespace tunefarm::tuner
