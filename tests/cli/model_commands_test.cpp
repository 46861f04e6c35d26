// `tunefarm import` and `tunefarm tune MODEL.onnx`: the task list, the
// workload files, a weighted tuning job, and models that never reach the log.
#include <gtest/gtest.h>

#include "cli_test_util.h"

namespace tunefarm::cli_test {
namespace {

std::string Model(const std::string& name) { return std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name; }

class ModelCommandsTest : public CliFolderTest {
 protected:
  ModelCommandsTest() : CliFolderTest("tf_model_cli_", 8, 8, 8) {}
};

TEST_F(ModelCommandsTest, ImportListsTasksWithCallsAndWritesWorkloadsThatParse) {
  Output out = RunTunefarm("import " + Model("resnet50.onnx") + " -o " + P("tasks"));
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("56 calls of 30 distinct tasks"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("resnet50_conv3x3_c256_k256_h14_s1_relu"), std::string::npos) << out.text;
  ASSERT_TRUE(fs::exists(dir_ / "tasks" / "tasks.tsv"));
  // A written task is a workload like any other.
  Output shown = RunTunefarm("show " + P("tasks/resnet50_conv3x3_c256_k256_h14_s1_relu.tf"));
  EXPECT_EQ(shown.code, 0) << shown.text;
}

TEST_F(ModelCommandsTest, TuneAModelTunesEveryTaskAndReportsTheModelLatency) {
  Output out = RunTunefarm("tune " + Model("small_cnn.onnx") + " --trials 12 --batch-size 4 --db " + P("m.db") +
                           " --curve '' --configs " + std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("model " + Model("small_cnn.onnx") + ": 7 tasks for its 7 calls"), std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("estimated model"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("small_cnn_maxpool3x3_c8_h9_w10_s2"), std::string::npos) << out.text;
  Output stats = RunTunefarm("db stats --db " + P("m.db"));
  EXPECT_NE(stats.text.find("workloads  7"), std::string::npos) << stats.text;
}

TEST_F(ModelCommandsTest, AMalformedModelIsRefusedBeforeTheLogIsTouched) {
  for (const char* bad : {"malformed/unknown_op.onnx", "malformed/truncated.onnx", "malformed/symbolic_dim.onnx"}) {
    Output out = RunTunefarm(std::string("tune ") + Model(bad) + " --trials 4 --db " + P("bad.db"));
    EXPECT_EQ(out.code, 1) << bad << ": " << out.text;
    EXPECT_NE(out.text.find("error: "), std::string::npos) << out.text;
    EXPECT_FALSE(fs::exists(dir_ / "bad.db")) << bad << " created the log";
    Output listed = RunTunefarm(std::string("import ") + Model(bad));
    EXPECT_EQ(listed.code, 1) << listed.text;
  }
}

}  // namespace
}  // namespace tunefarm::cli_test
