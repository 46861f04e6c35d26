// The CPU sketch rules on the layer suite (configs/layers/): on the shrunk
// copy of every layer, the first programs a search samples are valid and
// compute what the default schedule computes (the reference interpreter).
// The JIT runs one of them, with its constant inputs prepacked as measured,
// on the first layer of each kind (op class, activation, kernel, stride):
// the JIT compilation of a sampled convolution costs up to a second. The
// layers' shapes are the ones users bring (extents that are no multiple of
// 16, stride 2, 1x1 and depthwise kernels, batch 8).
#include <gtest/gtest.h>

#include <set>

#include "../../bench/layers/layer_manifest.h"
#include "sketch_test_util.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::ExpectSameAsDefault;
using testing::ShrunkDefault;

// Few enough to keep the whole suite's check within seconds.
constexpr int kSamples = 3;

struct LayerCase {
  std::string name;
  bool jit = false;  // the first layer of its kind
};

std::string LayerPath(const std::string& name) {
  return std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/" + name + ".tf";
}

std::vector<LayerCase> LayerCases() {
  auto entries = bench::ReadLayerManifest(std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/layers.tsv");
  if (!entries.ok()) {
    ADD_FAILURE() << entries.status().ToString();
    return {};
  }
  std::set<std::string> kinds;
  std::vector<LayerCase> cases;
  for (const auto& e : *entries) {
    auto w = ParseWorkloadFile(LayerPath(e.name));
    if (!w.ok()) {
      ADD_FAILURE() << w.status().ToString();
      continue;
    }
    std::string kind = e.op + " " + e.act;
    for (const auto& [param, value] : w->params) {
      bool conv = e.op == "conv2d" || e.op == "depthwise_conv2d";
      if (conv && (param == "R" || param == "SH")) kind += " " + param + "=" + std::to_string(value);
    }
    cases.push_back({e.name, kinds.insert(kind).second});
  }
  return cases;
}

class SketchLayerSuiteTest : public ::testing::TestWithParam<LayerCase> {};

TEST_P(SketchLayerSuiteTest, SampledProgramsComputeTheLayer) {
  ir::PrimFunc f = ShrunkDefault(LayerPath(GetParam().name));
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 23);
  int valid = 0;
  std::string last_error;
  for (int i = 0; i < kSamples + 2 && valid < kSamples; ++i) {
    auto c = search.Sample();
    if (!c.ok()) {
      last_error = c.status().ToString();
      continue;
    }
    ExpectSameAsDefault(f, c->func, /*jit=*/GetParam().jit && valid == 0);
    ++valid;
  }
  EXPECT_EQ(valid, kSamples) << "too few valid samples; last error: " << last_error;
}

TEST(SketchLayerSuiteKindsTest, EveryKindIsCompiledOnce) {
  std::vector<LayerCase> cases = LayerCases();
  std::string jitted_names;
  int jitted = 0;
  for (const LayerCase& c : cases) {
    if (!c.jit) continue;
    ++jitted;
    jitted_names += " " + c.name;
  }
  EXPECT_EQ(cases.size(), 84u);
  // conv2d 7x7 s2, 3x3 s1 and s2, 1x1 s1 and s2 (MobileNet-V2's 3x3 s2 stem is of ResNet-50's kind);
  // depthwise 3x3 s1 and s2; dense without activation and with GELU; the two batch matmuls.
  EXPECT_EQ(jitted, 11) << jitted_names;
}

std::string Name(const ::testing::TestParamInfo<LayerCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Layers, SketchLayerSuiteTest, ::testing::ValuesIn(LayerCases()), Name);

}  // namespace
}  // namespace tunefarm::tuner
