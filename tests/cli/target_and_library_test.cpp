// `tunefarm tune` and `tunefarm compile` refuse a target nothing can compile
// with the message every entry gives (ParseTargetField), before touching the
// log or writing anything; --embed-weights on a workload file is refused;
// and a library from `compile --shared` names no folder of the machine that
// built it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../elf_dynamic.h"
#include "cli_test_util.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::RunTunefarm;

class TargetAndLibraryTest : public cli_test::CliFolderTest {
 protected:
  TargetAndLibraryTest() : CliFolderTest("tunefarm_cli_target_", 32, 16, 8) {}
};

TEST_F(TargetAndLibraryTest, TuneAndCompileRefuseAnUnknownTripleAsTheServicesDo) {
  auto expected = ParseTargetField("--target", "llvm -mtriple=banana");
  ASSERT_FALSE(expected.ok());
  const std::string message = "error: " + expected.status().message();
  EXPECT_NE(message.find("--target: unknown triple 'banana' in 'llvm -mtriple=banana'"), std::string::npos) << message;

  auto tune = RunTunefarm("tune " + P("mm.tf") + " --target 'llvm -mtriple=banana' --trials 4 --db " + P("log.db"));
  EXPECT_EQ(tune.code, 1) << tune.text;
  EXPECT_NE(tune.text.find(message), std::string::npos) << tune.text;
  EXPECT_FALSE(fs::exists(P("log.db"))) << "tune opened a log for a target it cannot tune";

  auto compile = RunTunefarm("compile " + P("mm.tf") + " --target 'llvm -mtriple=banana' -o " + P("mm.o"));
  EXPECT_EQ(compile.code, 1) << compile.text;
  EXPECT_NE(compile.text.find(message), std::string::npos) << compile.text;
  EXPECT_FALSE(fs::exists(P("mm.o")));

}

// A CUDA target is tuned on this machine's GPU: where there is none (no
// driver here), tune says so before it opens a log.
TEST_F(TargetAndLibraryTest, TuningForCudaWithoutAGpuSaysSo) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  auto tune = RunTunefarm("tune " + P("mm.tf") + " --target 'cuda -arch=sm_90' --trials 4 --db " + P("gpu.db"));
  EXPECT_EQ(tune.code, 1) << tune.text;
  EXPECT_NE(tune.text.find("error: target 'cuda -arch=sm_90' is tuned on this machine's GPU 0, and there is none"),
            std::string::npos)
      << tune.text;
  EXPECT_FALSE(fs::exists(P("gpu.db"))) << "tune opened a log for a GPU it does not have";
}

// `run` with a cuda target runs on this machine's GPU, as `tune` does: where
// there is none, it says so and exits 1.
TEST_F(TargetAndLibraryTest, RunningForCudaWithoutAGpuSaysSo) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  auto run = RunTunefarm("run " + P("mm.tf") + " --target 'cuda -arch=sm_90' --gpu 1");
  EXPECT_EQ(run.code, 1) << run.text;
  EXPECT_NE(run.text.find("error: target 'cuda -arch=sm_90' runs on this machine's GPU 1, and there is none"),
            std::string::npos)
      << run.text;
}

// A workload file has shapes, no weight values: --embed-weights on one is
// refused, naming the file, and writes nothing.
TEST_F(TargetAndLibraryTest, EmbeddingWeightsOfAWorkloadFileIsRefused) {
  auto compile = RunTunefarm("compile " + P("mm.tf") + " --embed-weights -o " + P("mm.o"));
  EXPECT_EQ(compile.code, 1) << compile.text;
  EXPECT_NE(compile.text.find("error: --embed-weights: " + P("mm.tf") +
                              " is a workload file, which holds no weight values to embed; the option is for ONNX "
                              "models (.onnx)"),
            std::string::npos)
      << compile.text;
  EXPECT_FALSE(fs::exists(P("mm.o")));
  EXPECT_FALSE(fs::exists(P("mm.h")));
}

TEST_F(TargetAndLibraryTest, ASharedLibraryNamesNoBuildOrSourceFolder) {
  auto out = RunTunefarm("compile " + P("mm.tf") + " --shared -o " + P("mm.so"));
  ASSERT_EQ(out.code, 0) << out.text;
  elf_test::DynamicSection dynamic = elf_test::ReadDynamicSection(P("mm.so"));
  ASSERT_TRUE(dynamic.error.empty()) << dynamic.error;
  EXPECT_TRUE(dynamic.rpath.empty()) << dynamic.rpath.front();
  for (const std::string& path : dynamic.runpath) {
    EXPECT_EQ(path.find(TUNEFARM_BINARY_DIR), std::string::npos) << "RUNPATH " << path;
    EXPECT_EQ(path.find(TUNEFARM_SOURCE_DIR), std::string::npos) << "RUNPATH " << path;
    EXPECT_EQ(path, "$ORIGIN");
  }
  // What `readelf -d` shows a user: no folder of this machine either.
  auto readelf = testing_support::RunCommand("readelf -d " + P("mm.so"));
  if (readelf.code == 0) {
    EXPECT_EQ(readelf.text.find(TUNEFARM_BINARY_DIR), std::string::npos) << readelf.text;
    EXPECT_EQ(readelf.text.find(TUNEFARM_SOURCE_DIR), std::string::npos) << readelf.text;
  }
}

}  // namespace
}  // namespace tunefarm
