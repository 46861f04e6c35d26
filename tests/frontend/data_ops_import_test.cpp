// The data-moving operators (Concat, Pad, Slice, Split, Gather, Expand,
// Resize) and the shape arithmetic of exported graphs, on small_detector and
// small_embedder (scripts/testmodels/data_ops.py): which tasks they become,
// what folds at import, and that every task survives the workload text that
// `tunefarm import -o` writes and workers read.
#include <gtest/gtest.h>

#include <set>

#include "compiled_vs_interpreted.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

Model Import(const std::string& name) {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : Model{};
}

const ModelTask* TaskOfNode(const Model& m, const std::string& node) {
  for (const ModelTask& t : m.tasks) {
    for (const TaskCall& c : t.calls) {
      for (const std::string& n : c.nodes) {
        if (n == node) return &t;
      }
    }
  }
  return nullptr;
}

std::string Names(const Model& m) {
  std::string s;
  for (const ModelTask& t : m.tasks) s += t.workload.name + "\n";
  return s;
}

TEST(DataOpsImport, DetectorHasOneTaskPerDataMoverWithTheShapeArithmeticFolded) {
  Model m = Import("small_detector");
  EXPECT_EQ(m.node_count, 32);
  // 3 convs, concat, 2 split parts, slice, reflect pad, conv, resize, reduce, expand, softmax, channel pad.
  EXPECT_EQ(m.CallCount(), 14) << Names(m);
  EXPECT_EQ(m.tasks.size(), 14u);  // no two of its layers compute the same thing
  std::map<std::string, int> calls;
  for (const ModelTask& t : m.tasks) calls[t.op_class] += int(t.calls.size());
  std::map<std::string, int> expected = {{"conv2d", 4}, {"concat", 1}, {"slice", 3}, {"pad", 2},
                                         {"resize", 1}, {"reduce", 1}, {"expand", 1}, {"softmax", 1}};
  EXPECT_EQ(calls, expected) << Names(m);
  // The zero Pad before the stem folded into the convolution's padding: the
  // convolution reads the graph input, and the padded tensor does not exist.
  const ModelTask* stem = TaskOfNode(m, "stem.conv");
  ASSERT_NE(stem, nullptr);
  EXPECT_EQ(stem->workload.name, "small_detector_conv3x3_c3_k8_h13_w15_s1_relu");
  EXPECT_EQ(stem->calls[0].inputs[0], "input");
  EXPECT_EQ(TaskOfNode(m, "stem.pad"), nullptr);
  EXPECT_EQ(m.Tensor("stem.pad_output"), nullptr);
  // The residual Add fuses into the Concat, the ReLU into the Split's first part.
  const ModelTask* concat = TaskOfNode(m, "neck.concat");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->calls[0].nodes, (std::vector<std::string>{"neck.concat", "neck.add"}));
  EXPECT_EQ(concat->workload.inputs.size(), 3u);  // both branches and the residual
  const ModelTask* part0 = TaskOfNode(m, "head0.relu");
  ASSERT_NE(part0, nullptr);
  EXPECT_EQ(part0->calls[0].nodes, (std::vector<std::string>{"neck.split", "head0.relu"}));
  EXPECT_EQ(part0->workload.outputs[0]->shape, (std::vector<int64_t>{1, 3, 13, 15}));
  // Width reversed with step -2, height from 1 with step 2.
  const ModelTask* slice = TaskOfNode(m, "head1.slice");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->workload.outputs[0]->shape, (std::vector<int64_t>{1, 5, 6, 8}));
  // Shape, its Gathers, Unsqueezes and Concat, and ConstantOfShape are constants now.
  for (const char* folded : {"head1.gap_shape", "head1.up_shape", "head1.ones", "head1.view.gather0",
                             "head1.view.unsqueeze1", "head1.view.concat"}) {
    EXPECT_EQ(TaskOfNode(m, folded), nullptr) << folded;
  }
  const ModelTensor* view_shape = m.Tensor("head1.view.concat_output");
  ASSERT_NE(view_shape, nullptr);
  EXPECT_EQ(view_shape->kind, ModelTensor::Kind::kWeight);
  EXPECT_EQ(m.Tensor("head1.view_output")->shape, (std::vector<int64_t>{1, 4, 252}));
  const ModelTask* gate = TaskOfNode(m, "head1.gate");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->calls[0].nodes, (std::vector<std::string>{"head1.gap", "head1.gap_plus_one", "head1.gate"}));
}

TEST(DataOpsImport, EmbedderGathersTokensFromTheTableAndFoldsPositions) {
  Model m = Import("small_embedder");
  const ModelTask* words = TaskOfNode(m, "embeddings.word");
  ASSERT_NE(words, nullptr) << Names(m);
  EXPECT_EQ(words->op_class, "gather");
  // The token ids are read at run time; the position embeddings are one constant.
  EXPECT_EQ(words->calls[0].nodes, (std::vector<std::string>{"embeddings.word", "embeddings.add"}));
  std::set<std::string> inputs(words->calls[0].inputs.begin(), words->calls[0].inputs.end());
  EXPECT_TRUE(inputs.count("input_ids"));
  EXPECT_TRUE(inputs.count("word_table"));
  EXPECT_TRUE(inputs.count("embeddings.position_output"));
  EXPECT_EQ(TaskOfNode(m, "embeddings.position"), nullptr);
  EXPECT_EQ(m.Tensor("embeddings.position_output")->kind, ModelTensor::Kind::kWeight);
  const ModelTask* first = TaskOfNode(m, "pooler.first");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->workload.outputs[0]->shape, (std::vector<int64_t>{1, 16}));
  const ModelTask* picker = TaskOfNode(m, "picker");
  ASSERT_NE(picker, nullptr);
  EXPECT_EQ(picker->workload.inputs.size(), 1u);  // constant indices are written into the index expression
  EXPECT_EQ(m.CallCount(), 5) << Names(m);
}

// Opset 9 keeps in attributes what later opsets pass as inputs.
TEST(DataOpsImport, Opset9AttributesGiveTheSameTasks) {
  Model m = Import("small_legacy");
  EXPECT_EQ(m.opset, 9);
  const ModelTask* stem = TaskOfNode(m, "stem.conv");
  ASSERT_NE(stem, nullptr) << Names(m);
  EXPECT_EQ(stem->calls[0].inputs[0], "input");  // the attribute-form Pad folded too
  EXPECT_EQ(TaskOfNode(m, "stem.pad"), nullptr);
  const ModelTask* crop = TaskOfNode(m, "crop");
  ASSERT_NE(crop, nullptr);
  EXPECT_EQ(crop->workload.outputs[0]->shape, (std::vector<int64_t>{1, 4, 10, 4}));  // ends 100 clamped
  const ModelTask* up = TaskOfNode(m, "up1");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->op_class, "resize");
  EXPECT_EQ(up->workload.outputs[0]->shape, (std::vector<int64_t>{1, 3, 20, 8}));
  EXPECT_EQ(TaskOfNode(m, "view.unsqueeze"), nullptr);  // folded
  const ModelTask* odd = TaskOfNode(m, "odd_columns");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->workload.inputs.size(), 1u);  // 1, 3, 5, 7: an arithmetic progression in the index
  // A zero pad that is also a graph output is written, and its Conv reads it.
  const ModelTask* side = TaskOfNode(m, "side.conv");
  ASSERT_NE(side, nullptr);
  EXPECT_EQ(side->calls[0].inputs[0], "padded");
  EXPECT_EQ(side->workload.inputs[0]->shape, (std::vector<int64_t>{1, 2, 11, 13}));
  ASSERT_NE(TaskOfNode(m, "side.pad"), nullptr);
  // 2 Pads (side, edge), 2 Convs, Slice, 2 Split parts, 2 Upsamples, Concat, Softmax, Gather.
  EXPECT_EQ(m.CallCount(), 12) << Names(m);
}

// `tunefarm import -o` writes each task as workload text; the worker that
// tunes it reads that text back. Data-dependent and guarded indices included.
TEST(DataOpsImport, EveryTaskSurvivesItsWorkloadText) {
  for (const char* name : {"small_detector", "small_embedder", "small_legacy"}) {
    Model m = Import(name);
    for (const ModelTask& t : m.tasks) {
      std::string text = PrintWorkload(t.workload);
      auto parsed = ParseWorkload(text);
      ASSERT_TRUE(parsed.ok()) << t.workload.name << ": " << parsed.status().ToString() << "\n" << text;
      EXPECT_TRUE(StructurallyEqual(*parsed, t.workload)) << t.workload.name << "\n" << text;
    }
  }
}

// Each task at full size (they are small), compiled with its default
// schedule, computes what the reference interpreter computes.
TEST(DataOpsImport, EveryTaskMatchesTheInterpreter) {
  for (const char* name : {"small_detector", "small_embedder", "small_legacy"}) {
    Model m = Import(name);
    for (const ModelTask& t : m.tasks) testing::ExpectCompiledEqualsInterpreted(t.workload);
  }
}

}  // namespace
}  // namespace tunefarm::frontend
