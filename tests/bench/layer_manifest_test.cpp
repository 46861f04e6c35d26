// The layer benchmark's inputs: the manifest reader (its checks and the
// selection by model and name) and the oneDNN op each layer and each suite
// workload is compared with (op class, activation, strides and padding).
#include <gtest/gtest.h>

#include <string>

#include "layers/layer_manifest.h"
#include "tune/onednn_spec.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::bench {
namespace {

const std::string kHeader = "# a comment\nname\tmodels\top\tact\tuses\tlayers\n";

TEST(LayerManifestTest, ReadsRows) {
  auto entries = ParseLayerManifest(kHeader +
                                        "a_conv\tresnet50\tconv2d\tnone\t2\tresnet50:layer1.0.conv2,resnet50:layer1.1.conv2\n"
                                        "# between rows\n"
                                        "b_dense\tbert\tdense\tgelu_erf\t1\tbert:intermediate.dense\n",
                                    "m.tsv");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 2u);
  const LayerEntry& a = (*entries)[0];
  EXPECT_EQ(a.name, "a_conv");
  EXPECT_EQ(a.models, std::vector<std::string>{"resnet50"});
  EXPECT_EQ(a.op, "conv2d");
  EXPECT_EQ(a.act, "none");
  EXPECT_EQ(a.uses, 2);
  EXPECT_EQ(a.layers, (std::vector<std::string>{"resnet50:layer1.0.conv2", "resnet50:layer1.1.conv2"}));
  EXPECT_EQ((*entries)[1].act, "gelu_erf");
}

TEST(LayerManifestTest, RejectsMalformedRowsNamingTheLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x\tresnet50\tconv2d\tnone\t1\n", "6 tab-separated columns"},
      {"x\tvgg\tconv2d\tnone\t1\tvgg:conv1\n", "unknown model 'vgg'"},
      {"x\tresnet50\tconv3d\tnone\t1\tresnet50:conv1\n", "unknown op class 'conv3d'"},
      {"x\tresnet50\tconv2d\trelu\t1\tresnet50:conv1\n", "only dense layers have an activation"},
      {"x\tresnet50\tdense\tswish\t1\tresnet50:fc\n", "unknown activation 'swish'"},
      {"x\tresnet50\tconv2d\tnone\t2\tresnet50:conv1\n", "uses is 2 but 1 layers are listed"},
      {"x\tresnet50\tconv2d\tnone\tone\tresnet50:conv1\n", "is not a number"},
      {"x\tresnet50\tconv2d\tnone\t1\tbert:conv1\n", "is not model:module of one of its models"},
      {"x\tresnet50\tconv2d\tnone\t1\tresnet50:conv1\nx\tresnet50\tconv2d\tnone\t1\tresnet50:conv1\n",
       "repeated name 'x'"},
  };
  for (const auto& [rows, message] : cases) {
    auto entries = ParseLayerManifest(kHeader + rows, "m.tsv");
    ASSERT_FALSE(entries.ok()) << rows;
    EXPECT_NE(entries.status().message().find(message), std::string::npos) << entries.status().message();
    EXPECT_NE(entries.status().message().find("m.tsv:"), std::string::npos) << entries.status().message();
  }
  EXPECT_FALSE(ParseLayerManifest("name\tmodels\top\n", "m.tsv").ok());
  EXPECT_FALSE(ParseLayerManifest("# only comments\n", "m.tsv").ok());
}

TEST(LayerManifestTest, SelectsByModelAndName) {
  auto entries = ParseLayerManifest(kHeader +
                                        "r1\tresnet50\tconv2d\tnone\t1\tresnet50:conv1\n"
                                        "m1\tmobilenet_v2\tdepthwise_conv2d\tnone\t1\tmobilenet_v2:features.1.conv.0.0\n"
                                        "r2\tresnet50\tdense\tnone\t1\tresnet50:fc\n",
                                    "m.tsv");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  auto names = [](const Result<std::vector<LayerEntry>>& r) {
    std::vector<std::string> out;
    for (const auto& e : *r) out.push_back(e.name);
    return out;
  };
  EXPECT_EQ(names(SelectLayers(*entries, "", {})), (std::vector<std::string>{"r1", "m1", "r2"}));
  EXPECT_EQ(names(SelectLayers(*entries, "resnet50", {})), (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(names(SelectLayers(*entries, "", {"r2", "m1"})), (std::vector<std::string>{"m1", "r2"}));
  EXPECT_TRUE(SelectLayers(*entries, "bert", {})->empty());
  EXPECT_FALSE(SelectLayers(*entries, "vgg", {}).ok());
  EXPECT_FALSE(SelectLayers(*entries, "", {"r3"}).ok());
}

// Every layer of configs/layers maps to oneDNN, a convolution with the
// strides and padding of its file.
TEST(LayerOneDnnSpecTest, EveryLayerOfTheSuiteMaps) {
  auto entries = ReadLayerManifest(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/layers.tsv");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::map<OneDnnOpClass, int> per_class;
  for (const LayerEntry& e : *entries) {
    auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/" + e.name + ".tf");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto spec = LayerOneDnnSpec(e.op, e.act, w->params);
    ASSERT_TRUE(spec.ok()) << e.name << ": " << spec.status().ToString();
    per_class[spec->op] += 1;
    std::map<std::string, int64_t> p(w->params.begin(), w->params.end());
    if (spec->op == OneDnnOpClass::kConv2d || spec->op == OneDnnOpClass::kDepthwiseConv2d) {
      EXPECT_EQ(spec->strides, (std::array<int64_t, 2>{p["SH"], p["SW"]})) << e.name;
      EXPECT_EQ(spec->padding, (std::array<int64_t, 2>{p["PH"], p["PW"]})) << e.name;
    }
    EXPECT_EQ(spec->activation == OneDnnActivation::kGeluErf, e.act == "gelu_erf") << e.name;
  }
  EXPECT_EQ(per_class[OneDnnOpClass::kConv2d], 66);
  EXPECT_EQ(per_class[OneDnnOpClass::kDepthwiseConv2d], 10);
  EXPECT_EQ(per_class[OneDnnOpClass::kDense], 6);
  EXPECT_EQ(per_class[OneDnnOpClass::kBatchMatmulNT], 1);
  EXPECT_EQ(per_class[OneDnnOpClass::kBatchMatmulNN], 1);
}

TEST(LayerOneDnnSpecTest, RejectsWhatTheConventionsDoNotHave) {
  EXPECT_FALSE(LayerOneDnnSpec("conv2d", "none", {{"SH", 2}, {"SW", 2}, {"PH", 1}}).ok());  // no PW
  EXPECT_FALSE(LayerOneDnnSpec("conv2d", "relu", {{"SH", 1}, {"SW", 1}, {"PH", 0}, {"PW", 0}}).ok());
  EXPECT_FALSE(LayerOneDnnSpec("pool", "none", {}).ok());
  EXPECT_FALSE(LayerOneDnnSpec("dense", "tanh", {}).ok());
  auto relu = LayerOneDnnSpec("dense", "relu", {});
  ASSERT_TRUE(relu.ok());
  EXPECT_EQ(relu->activation, OneDnnActivation::kRelu);
}

TEST(SuiteOneDnnSpecTest, TheSixWorkloads) {
  EXPECT_EQ(SuiteOneDnnSpec("gmm_1024")->op, OneDnnOpClass::kMatmul);
  EXPECT_EQ(SuiteOneDnnSpec("gmm_512")->op, OneDnnOpClass::kMatmul);
  EXPECT_EQ(SuiteOneDnnSpec("dense_bias_relu")->activation, OneDnnActivation::kRelu);
  EXPECT_EQ(SuiteOneDnnSpec("c2d_resnet_3x3")->padding, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(SuiteOneDnnSpec("dep_3x3_c256_28")->op, OneDnnOpClass::kDepthwiseConv2d);
  EXPECT_EQ(SuiteOneDnnSpec("t2d")->strides, (std::array<int64_t, 2>{2, 2}));
  EXPECT_FALSE(SuiteOneDnnSpec("softmax").ok());
}

}  // namespace
}  // namespace tunefarm::bench
