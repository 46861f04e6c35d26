// oneDNN's peer of a model task as the model benchmark reads it (bench/models/
// task_peer.h): the test models' tasks each have one, with the geometry and
// the fused operators of the layer they stand for; the importer's forms of
// GELU, LeakyRelu, HardSwish, HardSigmoid, scales and broadcasts become
// post-ops; what oneDNN cannot express is no peer, with the reason.
#include <gtest/gtest.h>

#include "task_peer.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::bench {
namespace {

frontend::Model Import(const std::string& name) {
  auto m = frontend::ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : frontend::Model{};
}

TaskPeer PeerOfTask(const frontend::Model& m, const std::string& task) {
  for (const frontend::ModelTask& t : m.tasks) {
    if (t.workload.name == task) return PeerOf(m, t);
  }
  ADD_FAILURE() << "no task " << task;
  return {};
}

TaskPeer PeerOfText(const std::string& text, const std::string& op_class) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? PeerOf(*w, op_class) : TaskPeer{};
}

std::vector<std::string> Described(const TaskPeer& p) {
  std::vector<std::string> ops;
  for (const PostOp& op : p.post_ops) ops.push_back(op.Describe());
  return ops;
}

TEST(TaskPeerTest, EveryTaskOfTheTestModelsHasAPeer) {
  for (const char* name : {"small_cnn", "small_transformer", "resnet50", "mobilenet_v2", "bert_layer"}) {
    frontend::Model m = Import(name);
    EXPECT_FALSE(m.tasks.empty()) << name;
    for (const frontend::ModelTask& t : m.tasks) {
      TaskPeer p = PeerOf(m, t);
      EXPECT_NE(p.kind, PeerKind::kNone) << t.workload.name << ": " << p.no_peer;
    }
  }
}

TEST(TaskPeerTest, SmallCnnConvolutionsPoolsAndDense) {
  frontend::Model m = Import("small_cnn");
  TaskPeer stem = PeerOfTask(m, "small_cnn_conv3x3_c3_k8_h17_w19_s2_relu");
  EXPECT_EQ(stem.kind, PeerKind::kConvolution);
  EXPECT_EQ(stem.groups, 1);
  EXPECT_EQ(stem.strides, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(stem.pad_begin, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(stem.pad_end, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(stem.kernel, (std::array<int64_t, 2>{3, 3}));
  EXPECT_EQ(stem.bias, "B");
  EXPECT_EQ(Described(stem), std::vector<std::string>{"eltwise_relu"});
  EXPECT_EQ(stem.What(), "convolution 3x3 s2 p1 + bias, eltwise_relu");

  TaskPeer dw = PeerOfTask(m, "small_cnn_dw3x3_c8_h9_w10_s1_relu6");
  EXPECT_EQ(dw.kind, PeerKind::kConvolution);
  EXPECT_EQ(dw.groups, 8);
  EXPECT_EQ(Described(dw), std::vector<std::string>{"eltwise_clip(0, 6)"});

  // The residual is an activation of the output's shape: oneDNN's sum onto the output, then relu.
  TaskPeer res = PeerOfTask(m, "small_cnn_conv1x1_c8_k8_h9_w10_s1_add_relu");
  EXPECT_EQ(res.bias, "B");
  EXPECT_EQ(Described(res), (std::vector<std::string>{"sum(x)", "eltwise_relu"}));
  EXPECT_EQ(res.pad_end, (std::array<int64_t, 2>{0, 0}));

  TaskPeer pool = PeerOfTask(m, "small_cnn_maxpool3x3_c8_h9_w10_s2");
  EXPECT_EQ(pool.kind, PeerKind::kPooling);
  EXPECT_EQ(pool.algorithm, "max");
  EXPECT_EQ(pool.strides, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(pool.pad_begin, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(pool.dst_dims, (std::vector<int64_t>{1, 8, 5, 5}));

  TaskPeer gap = PeerOfTask(m, "small_cnn_global_avgpool_c16_h5");
  EXPECT_EQ(gap.kind, PeerKind::kPooling);
  EXPECT_EQ(gap.kernel, (std::array<int64_t, 2>{5, 5}));
  EXPECT_TRUE(gap.post_ops.empty());

  TaskPeer fc = PeerOfTask(m, "small_cnn_dense_m1_n10_k16");
  EXPECT_EQ(fc.kind, PeerKind::kMatmul);
  EXPECT_TRUE(fc.weights_constant);
  EXPECT_TRUE(fc.weights_transposed);  // Gemm's transB: W[N, K]
  EXPECT_EQ(fc.What(), "matmul (weights packed) (B read as [N, K]) + bias");
  EXPECT_EQ(fc.bias, "p");
  EXPECT_EQ(fc.dst_dims, (std::vector<int64_t>{1, 10}));
}

TEST(TaskPeerTest, SmallTransformerAttentionAndNorms) {
  frontend::Model m = Import("small_transformer");
  TaskPeer scores = PeerOfTask(m, "small_transformer_bmm_b2_m7_n7_k8_div_add");
  EXPECT_EQ(scores.kind, PeerKind::kMatmul);
  EXPECT_FALSE(scores.weights_constant);
  EXPECT_TRUE(scores.bias.empty());  // the mask is an activation
  EXPECT_EQ(Described(scores), (std::vector<std::string>{"eltwise_linear(0.353553, 0)", "binary_add(x 1x1x7)"}));

  TaskPeer gelu = PeerOfTask(m, "small_transformer_dense_m7_n24_k16_bias_gelu");
  EXPECT_EQ(gelu.bias, "p");
  EXPECT_FALSE(gelu.weights_transposed);
  EXPECT_EQ(Described(gelu), std::vector<std::string>{"eltwise_gelu_erf"});

  TaskPeer residual = PeerOfTask(m, "small_transformer_dense_m7_n16_k24_bias_add");
  EXPECT_EQ(Described(residual), std::vector<std::string>{"binary_add(x 7x16)"});

  TaskPeer norm = PeerOfTask(m, "small_transformer_layer_norm_r7_n16");
  EXPECT_EQ(norm.kind, PeerKind::kLayerNorm);
  EXPECT_EQ(norm.scale, "p");
  EXPECT_EQ(norm.shift, "p2");
  EXPECT_NEAR(norm.epsilon, 1e-12, 1e-15);

  TaskPeer soft = PeerOfTask(m, "small_transformer_softmax_r14_n7");
  EXPECT_EQ(soft.kind, PeerKind::kSoftmax);
  EXPECT_EQ(soft.src_dims, (std::vector<int64_t>{2, 7, 7}));

  TaskPeer key = PeerOfTask(m, "small_transformer_transpose_1x7x2x8_p0231");
  EXPECT_EQ(key.kind, PeerKind::kReorder);
  EXPECT_EQ(key.perm, (std::vector<int64_t>{0, 2, 3, 1}));
}

TEST(TaskPeerTest, ActivationsInTheImportersFormsArePostOps) {
  const std::string head =
      "workload t() {\n  A = input f32[4, 8]\n  W = input const f32[8, 6]\n  p = input const f32[6]\n"
      "  acc[i: 4, j: 6] = sum(k: 8) A[i, k] * W[k, j]\n  out[o0: 4, o1: 6] = ";
  const std::string tail = "\n  output out\n}\n";
  auto ops = [&](const std::string& body) { return Described(PeerOfText(head + body + tail, "dense")); };
  EXPECT_EQ(ops("select(acc[o0, o1] > 0.0, acc[o0, o1], acc[o0, o1] * 0.1)"),
            std::vector<std::string>{"eltwise_relu(0.1)"});
  EXPECT_EQ(ops("acc[o0, o1] * max(0.0, min(1.0, acc[o0, o1] * 0.16666666666666666 + 0.5))"),
            std::vector<std::string>{"eltwise_hardswish"});
  // HardSigmoid: x * 0.2 + 0.5 folds into one linear, then the clip.
  EXPECT_EQ(ops("max(0.0, min(1.0, acc[o0, o1] * 0.2 + 0.5))"),
            (std::vector<std::string>{"eltwise_linear(0.2, 0.5)", "eltwise_clip(0, 1)"}));
  EXPECT_EQ(ops("sigmoid(acc[o0, o1] + p[o1])"), std::vector<std::string>{"eltwise_logistic"});
  EXPECT_EQ(ops("(acc[o0, o1] + p[o1]) * (acc[o0, o1] + p[o1])"), std::vector<std::string>{"eltwise_square"});
  // A scale before the bias: the bias stays a binary post-op after it.
  EXPECT_EQ(ops("acc[o0, o1] * 0.5 + p[o1]"), (std::vector<std::string>{"eltwise_linear(0.5, 0)", "binary_add(p 1x6)"}));
  EXPECT_EQ(PeerOfText(head + "acc[o0, o1] * 0.5 + p[o1]" + tail, "dense").bias, "");
  EXPECT_EQ(PeerOfText(head + "acc[o0, o1] + p[o1]" + tail, "dense").bias, "p");
}

TEST(TaskPeerTest, WhatOneDnnCannotExpressIsNoPeerWithTheReason) {
  TaskPeer erf = PeerOfText(
      "workload t() {\n  A = input f32[4, 8]\n  W = input const f32[8, 6]\n"
      "  acc[i: 4, j: 6] = sum(k: 8) A[i, k] * W[k, j]\n  out[o0: 4, o1: 6] = erf(acc[o0, o1])\n  output out\n}\n",
      "dense");
  EXPECT_EQ(erf.kind, PeerKind::kNone);
  EXPECT_NE(erf.no_peer.find("erf"), std::string::npos) << erf.no_peer;

  // Batch normalization not folded into the weights: rsqrt of a tensor is no operand oneDNN reads.
  TaskPeer bn = PeerOfText(
      "workload t() {\n  X = input f32[1, 4, 5, 5]\n  W = input const f32[8, 4, 1, 1]\n  p = input const f32[8]\n"
      "  p2 = input const f32[8]\n"
      "  acc[n: 1, k: 8, h: 5, w: 5] = sum(c: 4, r: 1, s: 1) X[n, c, h + r, w + s] * W[k, c, r, s]\n"
      "  out[o0: 1, o1: 8, o2: 5, o3: 5] = (acc[0, o1, o2, o3] - p[o1]) * rsqrt(p2[o1] + 1e-05)\n  output out\n}\n",
      "conv2d");
  EXPECT_EQ(bn.kind, PeerKind::kNone);
  EXPECT_NE(bn.no_peer.find("not a tensor oneDNN can read"), std::string::npos) << bn.no_peer;

  TaskPeer transpose_relu = PeerOfText(
      "workload t() {\n  X = input f32[2, 3, 4]\n  out[o0: 2, o1: 4, o2: 3] = max(X[o0, o2, o1], 0.0)\n  output out\n}\n",
      "transpose");
  EXPECT_EQ(transpose_relu.kind, PeerKind::kNone);
  EXPECT_NE(transpose_relu.no_peer.find("reorder"), std::string::npos) << transpose_relu.no_peer;

  TaskPeer unknown = PeerOfText("workload t() {\n  X = input f32[4]\n  out[i: 4] = X[i]\n  output out\n}\n", "gather");
  EXPECT_EQ(unknown.kind, PeerKind::kNone);
  EXPECT_EQ(unknown.What(), "none: oneDNN has no primitive for a task of op class gather");
}

TEST(TaskPeerTest, ReductionsAndElementwiseChains) {
  TaskPeer mean = PeerOfText(
      "workload t() {\n  X = input f32[2, 8, 6]\n  acc[o0: 2, o1: 8, o2: 1] = sum(r2: 6) X[o0, o1, r2]\n"
      "  out[o0: 2, o1: 8, o2: 1] = acc[o0, o1, o2] * 0.16666666666666666\n  output out\n}\n",
      "reduce");
  EXPECT_EQ(mean.kind, PeerKind::kReduction);
  EXPECT_EQ(mean.algorithm, "mean");
  EXPECT_EQ(mean.dst_dims, (std::vector<int64_t>{2, 8, 1}));

  TaskPeer add_relu = PeerOfText(
      "workload t() {\n  x = input f32[1, 8, 5, 5]\n  x2 = input f32[1, 8, 5, 5]\n"
      "  out[o0: 1, o1: 8, o2: 5, o3: 5] = max(x[0, o1, o2, o3] + x2[0, o1, o2, o3], 0.0)\n  output out\n}\n",
      "elementwise");
  EXPECT_EQ(add_relu.kind, PeerKind::kBinary);
  EXPECT_EQ(add_relu.src1, "x2");
  EXPECT_EQ(add_relu.What(), "binary add, eltwise_relu");

  TaskPeer scaled_sigmoid = PeerOfText(
      "workload t() {\n  x = input f32[3, 5]\n  out[o0: 3, o1: 5] = sigmoid(x[o0, o1]) * 2.0\n  output out\n}\n",
      "elementwise");
  EXPECT_EQ(scaled_sigmoid.kind, PeerKind::kEltwise);
  EXPECT_EQ(scaled_sigmoid.algorithm, "logistic");
  EXPECT_EQ(Described(scaled_sigmoid), std::vector<std::string>{"eltwise_linear(2, 0)"});
}

}  // namespace
}  // namespace tunefarm::bench
