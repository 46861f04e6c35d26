// The tuning loop for a `cuda` target: the GPU sketch rules draw the
// candidates, every one reaches the measurer as a program bound to blocks
// and threads that replays from its trace, and the log keeps them under the
// cuda target -- here on the synthetic test device, which needs no GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>

#include "tuning_loop_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm::tuner {
namespace {

// The test device, remembering every trace it was sent.
class RecordingDevice : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    for (const MeasureInput& in : inputs) {
      traces.push_back(in.trace_text);
      targets.push_back(in.target);
    }
    return device_.Measure(inputs, options);
  }
  std::vector<std::string> traces, targets;

 private:
  TestDeviceMeasurer device_;
};

class CudaTuningLoopTest : public testing::TuningLogTest {
 protected:
  CudaTuningLoopTest() : TuningLogTest("tunefarm_cuda_loop_") {}
};

TEST_F(CudaTuningLoopTest, TunesAMatmulWithGpuProgramsUnderTheCudaTarget) {
  TuneOptions options = testing::LoopOptions(24);
  auto target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  options.target = *target;
  RecordingDevice device;
  TuningLoop loop(options, db_.get(), &device, nullptr);
  std::atomic<bool> stop{false};
  const Workload w = testing::SmallMatmul();
  ASSERT_TRUE(loop.Run({*MakeTuneTask(w)}, stop, nullptr).ok());

  ASSERT_GE(device.traces.size(), 16u);
  auto f = LowerToPrimFunc(w);
  ASSERT_TRUE(f.ok());
  int bound = 0;
  for (size_t i = 0; i < device.traces.size(); ++i) {
    EXPECT_EQ(device.targets[i], target->ToString());
    auto trace = Trace::Parse(device.traces[i]);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    Schedule sch(*f, 1);
    ASSERT_TRUE(trace->ApplyTo(sch).ok()) << device.traces[i];
    const std::string program = ir::ToString(sch.func());
    bound += program.find("threadIdx.x") != std::string::npos && program.find("blockIdx.x") != std::string::npos;
  }
  // Every candidate but the untuned default (which is not bound) is a GPU program.
  EXPECT_GE(bound, int(device.traces.size()) - 1);
  for (const database::TuningRecord& r : Records()) EXPECT_EQ(r.target.target, target->ToString());
}

}  // namespace
}  // namespace tunefarm::tuner
