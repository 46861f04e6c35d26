// small_masked_attention (scripts/testmodels/mask_ops.py): which tasks the
// masks of an exported attention graph become. Range and the view shape's
// Where fold at import; the run-time comparisons and logic are element-wise
// tasks whose booleans are stored as f32 0/1; the Where before the Softmax
// fuses into the scores' MatMul task; every task matches the interpreter.
#include <gtest/gtest.h>

#include "compiled_vs_interpreted.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

Model Import() {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/small_masked_attention.onnx");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : Model{};
}

// The index of the task that runs `node`; -1 if none does (folded or a view).
int TaskOfNode(const Model& m, const std::string& node) {
  for (size_t t = 0; t < m.tasks.size(); ++t) {
    for (const TaskCall& c : m.tasks[t].calls) {
      if (std::find(c.nodes.begin(), c.nodes.end(), node) != c.nodes.end()) return int(t);
    }
  }
  return -1;
}

std::string Names(const Model& m) {
  std::string s;
  for (const ModelTask& t : m.tasks) s += t.workload.name + "\n";
  return s;
}

TEST(MaskImport, RangeAndTheViewShapeFoldAtImport) {
  Model m = Import();
  for (const char* node : {"positions", "positions.cast", "view.greater", "view.where", "seq.gather"}) {
    EXPECT_EQ(TaskOfNode(m, node), -1) << node << " is in a task:\n" << Names(m);
  }
  EXPECT_EQ(m.Tensor("positions.cast_output")->kind, ModelTensor::Kind::kWeight);
}

TEST(MaskImport, TheMaskBeforeTheSoftmaxFusesIntoTheScoresTask) {
  Model m = Import();
  int scores = TaskOfNode(m, "attn.scores");
  ASSERT_GE(scores, 0) << Names(m);
  EXPECT_EQ(TaskOfNode(m, "attn.scale"), scores) << Names(m);
  EXPECT_EQ(TaskOfNode(m, "attn.mask"), scores) << Names(m);
  EXPECT_NE(m.tasks[size_t(scores)].workload.name.find("where"), std::string::npos) << Names(m);
  // Equal, Not, And and Or are one element-wise task on the [1, 6] mask.
  int mask = TaskOfNode(m, "mask.dropped");
  ASSERT_GE(mask, 0) << Names(m);
  for (const char* node : {"mask.kept", "mask.valid", "mask.any"}) EXPECT_EQ(TaskOfNode(m, node), mask) << node;
  EXPECT_EQ(m.tasks[size_t(mask)].op_class, "elementwise");
  // A boolean written by one task and read by another is stored as f32 0/1.
  EXPECT_EQ(m.Tensor("mask.any_output")->dtype, ir::DataType::Float(32));
  EXPECT_EQ(m.Tensor("mask.in_length_output")->dtype, ir::DataType::Float(32));
}

TEST(MaskImport, RangeOfARunTimeLimitNamesTheNodeAndOnlyThatInput) {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/malformed/range_dynamic.onnx");
  ASSERT_FALSE(m.ok());
  const std::string& message = m.status().message();
  EXPECT_NE(message.find("node 'range_dynamic' (Range)"), std::string::npos) << message;
  EXPECT_NE(message.find("depends on 'range_limit', which is computed at run time"), std::string::npos) << message;
  EXPECT_EQ(message.find("range_start"), std::string::npos) << message;
}

TEST(MaskImport, EveryTaskMatchesTheInterpreter) {
  Model m = Import();
  ASSERT_FALSE(m.tasks.empty());
  for (const ModelTask& t : m.tasks) testing::ExpectCompiledEqualsInterpreted(t.workload);
}

}  // namespace
}  // namespace tunefarm::frontend
