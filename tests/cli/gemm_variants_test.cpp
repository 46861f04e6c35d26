// The GEMM variant records the GPU check runs (bench/cuda/gemm_variants/):
// each imports into a log, replays with this build and, through `tunefarm
// show --asm`, becomes CUDA C that NVRTC compiles for sm_90 without
// spilling; the packed variants read A from a three-dimensional shared
// buffer, the double-buffered ones take twice the plain kernel's shared
// memory. A rule or primitive change that breaks them shows here, not on
// the next lent GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cli_test_util.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::Output;
using cli_test::RunTunefarm;

class GemmVariantsTest : public cli_test::CliFolderTest {
 protected:
  GemmVariantsTest() : CliFolderTest("tunefarm_cli_gemm_variants_", 8, 8, 8) {}

  // `show --asm` of variant `name`'s record; the static shared bytes ptxas
  // reports (-1 where it reports none).
  int64_t SharedBytes(const std::string& name, std::string* text) {
    const std::string jsonl = std::string(TUNEFARM_SOURCE_DIR) + "/bench/cuda/gemm_variants/" + name + ".jsonl";
    Output imported = RunTunefarm("db import " + jsonl + " --db " + P(name + ".db"));
    EXPECT_EQ(imported.code, 0) << imported.text;
    const std::string sets = name.rfind("gmm4096", 0) == 0 ? " --set M=4096 --set N=4096 --set K=4096" : "";
    Output shown = RunTunefarm("show " + std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_1024.tf" + sets +
                               " --target 'cuda -arch=sm_90' --db " + P(name + ".db") + " --asm");
    EXPECT_EQ(shown.code, 0) << shown.text;
    *text = shown.text;
    EXPECT_NE(shown.text.find("# tuned schedule: record #"), std::string::npos) << shown.text;
    std::smatch m;
    if (!std::regex_search(shown.text, m, std::regex(" 0 bytes spilled, (\\d+) bytes of static shared memory"))) {
      ADD_FAILURE() << name << ": no spill-free ptxas report\n" << shown.text;
      return -1;
    }
    return std::stoll(m[1]);
  }
};

TEST_F(GemmVariantsTest, EveryVariantReplaysAndCompilesAsItsNameSays) {
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) GTEST_SKIP() << "no NVRTC here: " << why_not;
  for (const char* size : {"gmm1024", "gmm4096"}) {
    SCOPED_TRACE(size);
    std::string plain, pack, dbuf, both;
    const int64_t plain_bytes = SharedBytes(std::string(size) + "_plain", &plain);
    const int64_t pack_bytes = SharedBytes(std::string(size) + "_pack", &pack);
    const int64_t dbuf_bytes = SharedBytes(std::string(size) + "_dbuf", &dbuf);
    const int64_t both_bytes = SharedBytes(std::string(size) + "_both", &both);
    ASSERT_GT(plain_bytes, 0);
    EXPECT_EQ(pack_bytes, plain_bytes);
    EXPECT_EQ(dbuf_bytes, 2 * plain_bytes);
    EXPECT_EQ(both_bytes, 2 * plain_bytes);
    // A_shared: [rows, k] plain; [rows / 4, k, 4] packed (and [2, ...] doubled).
    const std::regex packed("allocate A_shared: f32\\[(2, )?\\d+, \\d+, 4\\] shared");
    EXPECT_FALSE(std::regex_search(plain, packed)) << plain;
    EXPECT_TRUE(std::regex_search(pack, packed)) << pack;
    EXPECT_TRUE(std::regex_search(both, packed)) << both;
    EXPECT_EQ(plain.find("software_pipeline_double_buffer"), std::string::npos);
    EXPECT_NE(dbuf.find("software_pipeline_double_buffer"), std::string::npos);
  }
}

}  // namespace
}  // namespace tunefarm
