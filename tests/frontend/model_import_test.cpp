// The test models' tasks: counts, fusion, bindings and graph order, and each
// small task's default program against the reference interpreter.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "compiled_vs_interpreted.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

Model Import(const std::string& name) {
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : Model{};
}

std::map<std::string, int> CallsByClass(const Model& m) {
  std::map<std::string, int> calls;
  for (const ModelTask& t : m.tasks) calls[t.op_class] += int(t.calls.size());
  return calls;
}

const ModelTask* FindTask(const Model& m, const std::string& name) {
  for (const ModelTask& t : m.tasks) {
    if (t.workload.name == name) return &t;
  }
  return nullptr;
}

// Every call reads only graph inputs, weights, or tensors an earlier call wrote.
void ExpectGraphOrder(const Model& m) {
  std::set<std::string> written;
  for (const auto& [task, call] : m.order) {
    const TaskCall& c = m.tasks[task].calls[call];
    for (const std::string& in : c.inputs) {
      const ModelTensor* t = m.Tensor(in);
      ASSERT_NE(t, nullptr) << in;
      if (t->kind == ModelTensor::Kind::kIntermediate) {
        EXPECT_TRUE(written.count(t->storage)) << m.tasks[task].workload.name << " reads " << in << " before it is written";
      }
    }
    written.insert(m.Tensor(c.output)->storage);
  }
  for (const std::string& out : m.outputs) EXPECT_TRUE(written.count(m.Tensor(out)->storage)) << out;
}

TEST(ModelImport, ResNet50HasItsConvolutionsWithBiasReluAndResidualFused) {
  Model m = Import("resnet50");
  EXPECT_EQ(m.node_count, 122);
  // 53 convolutions, the stem's max pool, the global average pool and the classifier.
  EXPECT_EQ(m.CallCount(), 56);
  EXPECT_EQ(m.tasks.size(), 30u);
  std::map<std::string, int> expected = {{"conv2d", 53}, {"pool", 2}, {"dense", 1}};
  EXPECT_EQ(CallsByClass(m), expected);
  // The 3x3 of stage 3's five identity blocks: one task, five calls, ReLU fused.
  const ModelTask* conv = FindTask(m, "resnet50_conv3x3_c256_k256_h14_s1_relu");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->calls.size(), 5u);
  // Each block's last 1x1 takes the residual add and the ReLU after it.
  const ModelTask* last = FindTask(m, "resnet50_conv1x1_c256_k1024_h14_s1_add_relu");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->calls[0].nodes.size(), 3u);
  EXPECT_EQ(last->workload.inputs.size(), 4u);  // X, W, B, the residual
  ExpectGraphOrder(m);
}

TEST(ModelImport, MobileNetV2HasDepthwiseTasksWithRelu6) {
  Model m = Import("mobilenet_v2");
  EXPECT_EQ(m.CallCount(), 54);
  EXPECT_EQ(m.tasks.size(), 32u);
  std::map<std::string, int> expected = {{"conv2d", 35}, {"depthwise_conv2d", 17}, {"pool", 1}, {"dense", 1}};
  EXPECT_EQ(CallsByClass(m), expected);
  const ModelTask* dw = FindTask(m, "mobilenet_v2_dw3x3_c384_h14_s1_relu6");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->calls.size(), 4u);
  ExpectGraphOrder(m);
}

TEST(ModelImport, BertLayerFusesBiasGeluScalingAndMask) {
  Model m = Import("bert_layer");
  EXPECT_EQ(m.CallCount(), 15);
  EXPECT_EQ(m.tasks.size(), 11u);
  std::map<std::string, int> expected = {
      {"dense", 6}, {"batch_matmul", 2}, {"transpose", 4}, {"softmax", 1}, {"layer_norm", 2}};
  EXPECT_EQ(CallsByClass(m), expected);
  const ModelTask* qkv = FindTask(m, "bert_layer_dense_m128_n768_k768_bias");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->calls.size(), 3u);
  // [1, 128, 768] x [768, 768]: the batch-1 dense layer is a 2-D matmul.
  EXPECT_EQ(qkv->workload.inputs[0]->shape, (std::vector<int64_t>{128, 768}));
  const ModelTask* gelu = FindTask(m, "bert_layer_dense_m128_n3072_k768_bias_gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->calls[0].nodes.size(), 7u);  // MatMul, Add, Div, Erf, Add, Mul, Mul
  EXPECT_EQ(gelu->workload.stages.size(), 2u);  // the matmul and one fused epilogue
  ASSERT_NE(FindTask(m, "bert_layer_bmm_b12_m128_n128_k64_div_add"), nullptr);
  ExpectGraphOrder(m);
}

TEST(ModelImport, InputsBoundToViewsHaveTheTensorsElementCount) {
  for (const char* name : {"resnet50", "bert_layer", "small_transformer", "small_detector", "small_embedder",
                           "small_legacy"}) {
    Model m = Import(name);
    for (const ModelTask& t : m.tasks) {
      for (const TaskCall& c : t.calls) {
        ASSERT_EQ(c.inputs.size(), t.workload.inputs.size());
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          const ModelTensor* storage = m.Tensor(m.Tensor(c.inputs[i])->storage);
          int64_t n = 1;
          for (int64_t d : storage->shape) n *= d;
          EXPECT_EQ(t.workload.inputs[i]->num_elements(), n) << t.workload.name << " input " << i;
          EXPECT_EQ(t.workload.inputs[i]->constant, storage->kind == ModelTensor::Kind::kWeight);
        }
      }
    }
  }
}

// Each task small enough for the interpreter at full size, compiled with its
// default schedule, computes what the interpreter computes.
TEST(ModelImport, SmallTasksDefaultProgramsMatchTheInterpreter) {
  constexpr double kFlopBudget = 3e6;
  int checked = 0;
  for (const char* name : {"resnet50", "mobilenet_v2", "bert_layer", "small_cnn", "small_transformer"}) {
    Model m = Import(name);
    for (const ModelTask& t : m.tasks) {
      if (t.workload.Flops() > kFlopBudget) continue;
      testing::ExpectCompiledEqualsInterpreted(t.workload);
      ++checked;
    }
  }
  EXPECT_GE(checked, 25);
}

TEST(ModelImport, SymbolicBatchTakesTheGivenValue) {
  std::string path = std::string(TUNEFARM_TEST_MODELS_DIR) + "/malformed/symbolic_dim.onnx";
  auto without = ImportOnnx(path);
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.status().message().find("--set batch="), std::string::npos) << without.status().message();
  ImportOptions options;
  options.dim_values["batch"] = 2;
  auto with = ImportOnnx(path, options);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ(with->Tensor(with->inputs[0])->shape[0], 2);
}

}  // namespace
}  // namespace tunefarm::frontend
