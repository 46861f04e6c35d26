// The lean worker's runner and device table: a candidate without an object
// is a compile error that says the daemon must build for this device key; a
// bad object is a compile error from the loader; a cuda target cannot run;
// the device table has the board's CPU and the test device only. Objects
// that measure are checked by the full build's PrebuiltObjectTest run
// against this runner (scripts/lean-worker-build.sh): making one needs LLVM.
#include <gtest/gtest.h>

#include "measure/measure_test_util.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/worker/device_backend.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::testing {
namespace {

LocalMeasurerOptions LeanOptions() {
  LocalMeasurerOptions o;
  o.runner_path = std::string(TUNEFARM_BINARY_DIR) + "/worker/tunefarm-runner";
  o.build_threads = 1;
  return o;
}

MeasureOptions Quick() {
  MeasureOptions o;
  o.repeat = 1;
  o.min_repeat_ms = 1;
  o.run_timeout_s = 10;
  return o;
}

TEST(LeanRunnerTest, CandidatesWithoutAnObjectAreCompileErrorsNamingTheFix) {
  LocalMeasurer measurer(LeanOptions());
  const std::string matmul = MatmulText(8, 8, 8);
  MeasureInput garbage = Candidate("garbage", matmul);
  garbage.object = std::string(512, '\x5a');
  MeasureInput gpu = Candidate("gpu", matmul);
  gpu.target = "cuda -arch=sm_90";
  auto results = measurer.Measure({Candidate("source", matmul), garbage, gpu}, Quick());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kCompileError) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("this worker builds no code: the daemon must build candidates for its "
                                          "device key (fleet.toml [builders] tuner_built)"),
            std::string::npos)
      << results[0].error_message;
  EXPECT_EQ(results[1].error, MeasureErrorKind::kCompileError) << results[1].error_message;
  EXPECT_EQ(results[1].error_message.rfind("loading the prebuilt object: ", 0), 0u) << results[1].error_message;
  EXPECT_EQ(results[2].error, MeasureErrorKind::kInvalidCandidate) << results[2].error_message;
  EXPECT_NE(results[2].error_message.find("no CUDA"), std::string::npos) << results[2].error_message;
  // Refused, not crashed: one runner served the whole batch.
  EXPECT_EQ(measurer.runner_starts(), 1);
}

TEST(LeanDeviceTest, TheBoardsCpuAndTheTestDeviceOnly) {
  std::vector<std::string> names;
  for (const DeviceBackend& b : DeviceBackends()) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "test"}));
  auto cuda = FindDeviceBackend("cuda:0");
  ASSERT_FALSE(cuda.ok());
  EXPECT_NE(cuda.status().message().find("unknown device 'cuda:0'"), std::string::npos) << cuda.status().message();
  auto cpu = FindDeviceBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  // The target it registers parses and is this machine; its key names a CPU.
  std::vector<std::string> targets = (*cpu)->targets("cpu");
  ASSERT_EQ(targets.size(), 1u);
  auto target = Target::Parse(targets[0]);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  EXPECT_TRUE(target->is_host()) << targets[0];
  EXPECT_EQ((*cpu)->default_key("cpu").rfind("cpu-", 0), 0u);
  HardwareFingerprint f = (*cpu)->fingerprint("cpu");
  EXPECT_EQ(f.isa, target->triple.substr(0, target->triple.find('-')));
  EXPECT_EQ(f.toolchain.rfind("tuner-built lowering-r", 0), 0u) << f.toolchain;
}

}  // namespace
}  // namespace tunefarm::testing
