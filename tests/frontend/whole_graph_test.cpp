// The whole-graph check: a small model's output computed by tunefarm's
// kernels (each task's default program, compiled with LLVM) in graph order,
// against the output the test-model script computed with its own numpy
// evaluator of the ONNX operators.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

std::string ModelsDir() { return TUNEFARM_TEST_MODELS_DIR; }

// A serialized onnx.TensorProto of f32 (raw or typed data), or of int64 token
// ids: their bytes, two floats' worth per element, as the kernel reads them.
std::vector<float> ReadTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(bytes.str())) << path;
  if (t.data_type() == onnx::TensorProto::INT64) {
    std::vector<int64_t> ids(t.int64_data().begin(), t.int64_data().end());
    if (t.has_raw_data()) {
      ids.resize(t.raw_data().size() / 8);
      std::memcpy(ids.data(), t.raw_data().data(), ids.size() * 8);
    }
    std::vector<float> v(ids.size() * 2);
    std::memcpy(v.data(), ids.data(), ids.size() * 8);
    return v;
  }
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT) << path;
  if (t.has_raw_data()) {
    std::vector<float> v(t.raw_data().size() / 4);
    std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
    return v;
  }
  return std::vector<float>(t.float_data().begin(), t.float_data().end());
}

// Runs every call of `m` in graph order on buffers keyed by storage tensor.
void RunModel(const Model& m, std::map<std::string, std::vector<float>>* memory) {
  for (const auto& [name, t] : m.tensors) {
    if (t.storage != name || memory->count(name)) continue;
    int64_t n = t.dtype.bytes() / 4;  // floats per element: 2 for int64
    for (int64_t d : t.shape) n *= d;
    (*memory)[name].assign(size_t(n), std::nanf(""));  // a read of an unwritten tensor shows
  }
  std::map<size_t, std::unique_ptr<JitKernel>> kernels;
  for (const auto& [task, call] : m.order) {
    const ModelTask& t = m.tasks[task];
    if (!kernels.count(task)) {
      auto f = LowerToPrimFunc(t.workload);
      ASSERT_TRUE(f.ok()) << t.workload.name << ": " << f.status().ToString();
      auto jit = JitCompile(*f, Target::Host());
      ASSERT_TRUE(jit.ok()) << t.workload.name << ": " << jit.status().ToString();
      kernels[task] = std::move(jit).value();
    }
    const TaskCall& c = t.calls[call];
    std::vector<void*> args;
    for (const std::string& in : c.inputs) args.push_back(memory->at(m.Tensor(in)->storage).data());
    args.push_back(memory->at(m.Tensor(c.output)->storage).data());
    ASSERT_TRUE(kernels[task]->Run(args).ok()) << t.workload.name;
  }
}

void ExpectModelMatchesReference(const std::string& name) {
  ImportOptions options;
  options.read_weights = true;
  auto m = ImportOnnx(ModelsDir() + "/" + name + ".onnx", options);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::map<std::string, std::vector<float>> memory = m->weights;
  for (const std::string& in : m->inputs) memory[in] = ReadTensorFile(ModelsDir() + "/" + name + "." + in + ".pb");
  RunModel(*m, &memory);
  for (const std::string& out : m->outputs) {
    std::vector<float> expected = ReadTensorFile(ModelsDir() + "/" + name + "." + out + ".pb");
    const std::vector<float>& actual = memory.at(m->Tensor(out)->storage);
    ASSERT_EQ(actual.size(), expected.size()) << out;
    double worst = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      double err = std::fabs(double(actual[i]) - expected[i]) / (1e-3 + std::fabs(expected[i]));
      worst = std::max(worst, std::isnan(actual[i]) ? INFINITY : err);
    }
    EXPECT_LT(worst, 1e-3) << name << " output " << out << ": worst relative error " << worst;
  }
}

TEST(WholeGraph, SmallCnnComputesWhatTheNumpyReferenceComputes) { ExpectModelMatchesReference("small_cnn"); }

TEST(WholeGraph, SmallTransformerComputesWhatTheNumpyReferenceComputes) {
  ExpectModelMatchesReference("small_transformer");
}

// Pad folded into a Conv and on its own (reflect, constant 0.5), Concat,
// Split, Slice with negative steps, nearest Resize, Expand, and the folded
// shape arithmetic of a view.
TEST(WholeGraph, SmallDetectorComputesWhatTheNumpyReferenceComputes) { ExpectModelMatchesReference("small_detector"); }

// Gather of token ids (int64, read at run time) from a constant table, folded
// position embeddings, a scalar and a 2-D constant Gather.
TEST(WholeGraph, SmallEmbedderComputesWhatTheNumpyReferenceComputes) { ExpectModelMatchesReference("small_embedder"); }

// Opset 9: Pad, Slice, Split and Unsqueeze with attributes, Upsample.
TEST(WholeGraph, SmallLegacyComputesWhatTheNumpyReferenceComputes) { ExpectModelMatchesReference("small_legacy"); }

// Range folded into the positions, run-time Less / Equal / Not / And / Or masks and a Where before the Softmax.
TEST(WholeGraph, SmallMaskedAttentionComputesWhatTheNumpyReferenceComputes) {
  ExpectModelMatchesReference("small_masked_attention");
}

// The check can fail: a weight changed after import changes the output.
TEST(WholeGraph, AChangedWeightChangesTheOutput) {
  ImportOptions options;
  options.read_weights = true;
  auto m = ImportOnnx(ModelsDir() + "/small_cnn.onnx", options);
  ASSERT_TRUE(m.ok());
  std::map<std::string, std::vector<float>> memory = m->weights;
  for (auto& [name, w] : memory) {
    if (w.size() > 100) w[0] += 1.0f;  // the first conv's weights, among others
  }
  for (const std::string& in : m->inputs) memory[in] = ReadTensorFile(ModelsDir() + "/small_cnn." + in + ".pb");
  RunModel(*m, &memory);
  std::vector<float> expected = ReadTensorFile(ModelsDir() + "/small_cnn." + m->outputs[0] + ".pb");
  const std::vector<float>& actual = memory.at(m->Tensor(m->outputs[0])->storage);
  double diff = 0;
  for (size_t i = 0; i < expected.size(); ++i) diff = std::max(diff, double(std::fabs(actual[i] - expected[i])));
  EXPECT_GT(diff, 1e-3);
}

}  // namespace
}  // namespace tunefarm::frontend
