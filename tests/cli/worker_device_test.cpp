// `tunefarm worker --device cuda:N` on a machine without that GPU stops at
// once, saying why, before dialing the tuner: it offers no cuda device key.
// TUNEFARM_LIBCUDA names a driver library that does not exist, so the test
// means the same on a machine with a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli_test_util.h"

namespace tunefarm {
namespace {

using cli_test::Output;
using cli_test::RunTunefarm;

TEST(WorkerDeviceCli, ACudaDeviceWithoutAGpuFailsFastSayingWhy) {
  const std::string no_driver = "TUNEFARM_LIBCUDA=/nonexistent/libcuda.so.1 " + std::string(TUNEFARM_BINARY_DIR) +
                                "/cli/tunefarm ";
  auto start = std::chrono::steady_clock::now();
  // 127.0.0.1:1 refuses connections: a worker that got as far as dialing
  // would retry forever instead of exiting.
  Output out = testing_support::RunCommand(no_driver + "worker --tuner 127.0.0.1:1 --insecure --device cuda:0");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("error: device cuda:0: no NVIDIA driver (/nonexistent/libcuda.so.1 not found: "),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("registered"), std::string::npos) << out.text;

  Output index = RunTunefarm("worker --tuner 127.0.0.1:1 --insecure --device cuda:x");
  EXPECT_EQ(index.code, 1) << index.text;
  EXPECT_NE(index.text.find("unknown device 'cuda:x'"), std::string::npos) << index.text;
}

#ifdef TUNEFARM_FAKE_LIBCUDA
// On a stand-in driver with one sm_90 GPU (tests/worker/fake_libcuda.cc) the
// worker starts, under the key of that architecture, and dials the tuner.
TEST(WorkerDeviceCli, ACudaDeviceRegistersUnderItsArchitecture) {
  Output out = testing_support::RunCommand("TUNEFARM_LIBCUDA=" + std::string(TUNEFARM_FAKE_LIBCUDA) +
                                           " timeout -s INT 3 " + std::string(TUNEFARM_BINARY_DIR) +
                                           "/cli/tunefarm worker --tuner 127.0.0.1:1 --insecure --device cuda:0");
  EXPECT_NE(out.text.find("device cuda:0 as 'cuda-sm_90'"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("dialling 127.0.0.1:1"), std::string::npos) << out.text;
}
#endif

}  // namespace
}  // namespace tunefarm
