// The layer suite (configs/layers/): the manifest and the files agree, every
// file is the layer its manifest row and its name say (op class, tensors,
// shapes, FLOP), the counts per model are those of the real architectures,
// no two files are the same computation, and the shrunk copy of each layer
// computes through the JIT what the reference interpreter computes.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "../../bench/layers/layer_manifest.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;
using bench::LayerEntry;

// Small enough for the interpreter to run every layer in a moment.
constexpr double kShrunkFlops = 6e4;

fs::path LayerDir() { return fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "layers"; }

std::vector<LayerEntry> Manifest() {
  auto entries = bench::ReadLayerManifest((LayerDir() / "layers.tsv").string());
  if (!entries.ok()) {
    ADD_FAILURE() << entries.status().ToString();
    return {};
  }
  return *entries;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int64_t Param(const Workload& w, const std::string& name) {
  for (const auto& [n, v] : w.params) {
    if (n == name) return v;
  }
  ADD_FAILURE() << w.name << " has no parameter " << name;
  return -1;
}

std::vector<std::string> ParamNames(const Workload& w) {
  std::vector<std::string> names;
  for (const auto& p : w.params) names.push_back(p.first);
  return names;
}

void ExpectTensor(const ir::Buffer& b, const std::string& name, std::vector<int64_t> shape, bool constant) {
  EXPECT_EQ(b->name, name);
  EXPECT_EQ(b->shape, shape) << name;
  EXPECT_EQ(b->constant, constant) << name;
  EXPECT_EQ(b->dtype, ir::DataType::Float(32)) << name;
}

// The tensors, parameters and FLOP the README's conventions give the op class.
void ExpectFollowsConventions(const LayerEntry& e, const Workload& w) {
  ASSERT_EQ(w.outputs.size(), 1u);
  const ir::Buffer& out = w.outputs[0];
  EXPECT_EQ(out->name, "out");
  if (e.op == "conv2d" || e.op == "depthwise_conv2d") {
    bool depthwise = e.op == "depthwise_conv2d";
    std::vector<std::string> names = {"N", "C", "H", "W", "K", "R", "S", "SH", "SW", "PH", "PW"};
    if (depthwise) names.erase(names.begin() + 4);
    ASSERT_EQ(ParamNames(w), names);
    int64_t n = Param(w, "N"), c = Param(w, "C"), h = Param(w, "H"), wd = Param(w, "W"), r = Param(w, "R"),
            s = Param(w, "S");
    int64_t k = depthwise ? c : Param(w, "K");
    int64_t oh = (h + 2 * Param(w, "PH") - r) / Param(w, "SH") + 1;
    int64_t ow = (wd + 2 * Param(w, "PW") - s) / Param(w, "SW") + 1;
    ASSERT_EQ(w.inputs.size(), 2u);
    ExpectTensor(w.inputs[0], "X", {n, c, h, wd}, false);
    ExpectTensor(w.inputs[1], "Wt", depthwise ? std::vector<int64_t>{c, r, s} : std::vector<int64_t>{k, c, r, s}, true);
    ExpectTensor(out, "out", {n, k, oh, ow}, false);
    EXPECT_DOUBLE_EQ(w.Flops(), 2.0 * n * k * (depthwise ? 1 : c) * r * s * oh * ow);
  } else if (e.op == "dense") {
    ASSERT_EQ(ParamNames(w), (std::vector<std::string>{"M", "N", "K"}));
    int64_t m = Param(w, "M"), n = Param(w, "N"), k = Param(w, "K");
    ASSERT_EQ(w.inputs.size(), 3u);
    ExpectTensor(w.inputs[0], "A", {m, k}, false);
    ExpectTensor(w.inputs[1], "W", {n, k}, true);
    ExpectTensor(w.inputs[2], "bias", {n}, true);
    ExpectTensor(out, "out", {m, n}, false);
    // The matmul, the bias add, and the activation's arithmetic per element.
    const std::map<std::string, double> kActFlops = {{"none", 0}, {"relu", 1}, {"gelu_erf", 6}};
    ASSERT_TRUE(kActFlops.count(e.act)) << e.act;
    EXPECT_DOUBLE_EQ(w.Flops(), 2.0 * m * n * k + double(m * n) * (1 + kActFlops.at(e.act)));
  } else {
    ASSERT_EQ(ParamNames(w), (std::vector<std::string>{"B", "M", "N", "K"}));
    int64_t b = Param(w, "B"), m = Param(w, "M"), n = Param(w, "N"), k = Param(w, "K");
    ASSERT_EQ(w.inputs.size(), 2u);
    ExpectTensor(w.inputs[0], "X", {b, m, k}, false);
    ExpectTensor(w.inputs[1], "Y", e.op == "batch_matmul_nt" ? std::vector<int64_t>{b, n, k} : std::vector<int64_t>{b, k, n},
                 false);
    ExpectTensor(out, "out", {b, m, n}, false);
    EXPECT_DOUBLE_EQ(w.Flops(), 2.0 * b * m * n * k);
  }
}

TEST(LayerSuiteTest, ManifestAndFilesAgree) {
  std::set<std::string> listed, files;
  for (const LayerEntry& e : Manifest()) listed.insert(e.name + ".tf");
  for (const auto& entry : fs::directory_iterator(LayerDir())) {
    if (entry.path().extension() == ".tf") files.insert(entry.path().filename().string());
  }
  EXPECT_EQ(listed, files);
  EXPECT_EQ(files.size(), 84u);
}

// The README's table: distinct layers and uses per model and batch, from the
// architectures (ResNet-50's 53 convolutions, MobileNet-V2's 52, BERT's 8
// layers and the fused query-key-value projection).
TEST(LayerSuiteTest, CountsPerModelAreThoseOfTheArchitectures) {
  std::map<std::string, std::pair<int, int>> counts;  // "model bN" -> distinct, uses
  std::map<std::string, int> per_op;                  // "model bN op" -> uses
  for (const LayerEntry& e : Manifest()) {
    ASSERT_EQ(e.models.size(), 1u) << e.name;
    std::string key = e.models[0] + " " + e.name.substr(e.models[0].size() + 1, e.name.find('_', e.models[0].size() + 1) -
                                                                                    e.models[0].size() - 1);
    counts[key].first += 1;
    counts[key].second += e.uses;
    per_op[key + " " + e.op] += e.uses;
  }
  using Counts = std::map<std::string, std::pair<int, int>>;
  EXPECT_EQ(counts, (Counts{{"resnet50 b1", {24, 54}}, {"resnet50 b8", {23, 53}}, {"mobilenet_v2 b1", {31, 53}},
                            {"bert b1", {6, 9}}}));
  EXPECT_EQ(per_op["resnet50 b1 conv2d"], 53);
  EXPECT_EQ(per_op["resnet50 b8 conv2d"], 53);
  EXPECT_EQ(per_op["resnet50 b1 dense"], 1);
  EXPECT_EQ(per_op["mobilenet_v2 b1 conv2d"], 35);  // stem, 16 expanding, 17 projecting, the last 1x1
  EXPECT_EQ(per_op["mobilenet_v2 b1 depthwise_conv2d"], 17);
  EXPECT_EQ(per_op["mobilenet_v2 b1 dense"], 1);
  EXPECT_EQ(per_op["bert b1 dense"], 7);  // Q, K, V, O, fused QKV, intermediate, output
  EXPECT_EQ(per_op["bert b1 batch_matmul_nt"], 1);
  EXPECT_EQ(per_op["bert b1 batch_matmul_nn"], 1);
}

TEST(LayerSuiteTest, NoTwoFilesAreTheSameComputation) {
  std::map<std::string, std::string> by_hash;
  for (const LayerEntry& e : Manifest()) {
    auto w = ParseWorkloadFile((LayerDir() / (e.name + ".tf")).string());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto [it, inserted] = by_hash.emplace(StructuralHashHex(*w), e.name);
    EXPECT_TRUE(inserted) << e.name << " and " << it->second << " are structurally equal: one file, two uses";
  }
}

class LayerFileTest : public ::testing::TestWithParam<LayerEntry> {};

TEST_P(LayerFileTest, IsTheLayerItsRowNamesAndItsShrunkCopyMatchesTheInterpreter) {
  const LayerEntry& e = GetParam();
  const fs::path path = LayerDir() / (e.name + ".tf");
  const std::string text = ReadFile(path);
  auto w = ParseWorkloadFile(path.string());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->name, e.name);
  ExpectFollowsConventions(e, *w);
  // The opening comments name the layers and the op class.
  const std::string head = text.substr(0, text.find("\nworkload "));
  EXPECT_EQ(head.rfind("# ", 0), 0u);
  for (const std::string& layer : e.layers) {
    EXPECT_NE(head.find(layer.substr(layer.find(':') + 1)), std::string::npos) << layer;
  }
  EXPECT_NE(head.find("Op class " + e.op + ":"), std::string::npos);
  EXPECT_NE(head.find(std::to_string(e.uses) + (e.uses == 1 ? " use\n" : " uses\n")), std::string::npos);

  // The shrunk copy keeps the layer's strides, so a stride-2 layer is
  // checked as a stride-2 layer.
  auto small = ShrinkWorkload(text, path.string(), {}, kShrunkFlops);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  if (e.op == "conv2d" || e.op == "depthwise_conv2d") {
    for (const char* kept : {"SH", "SW"}) EXPECT_EQ(Param(*small, kept), Param(*w, kept)) << kept;
  }
  auto f = LowerToPrimFunc(*small);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::mt19937_64 rng(11);
  std::vector<HostBuffer> reference, jitted;
  for (size_t i = 0; i < f->params.size(); ++i) {
    reference.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) reference.back().FillRandom(rng);
    jitted.push_back(HostBuffer::Like(f->params[i]));
    std::memcpy(jitted.back().data(), reference.back().data(), size_t(reference.back().size_bytes()));
  }
  std::vector<HostBuffer*> ref_ptrs;
  std::vector<void*> raw;
  for (auto& b : reference) ref_ptrs.push_back(&b);
  for (auto& b : jitted) raw.push_back(b.data());
  Status interpreted = Interpret(*f, ref_ptrs);
  ASSERT_TRUE(interpreted.ok()) << interpreted.ToString();
  auto jit = JitCompile(*f, Target::Host());
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  ASSERT_TRUE((*jit)->Run(raw).ok());
  CompareResult cmp = CompareBuffers(jitted.back(), reference.back(), 1e-4, 1e-4);
  EXPECT_TRUE(cmp.equal) << small->name << " shrunk: " << cmp.message;
}

std::string LayerName(const ::testing::TestParamInfo<LayerEntry>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Layers, LayerFileTest, ::testing::ValuesIn(Manifest()), LayerName);

}  // namespace
}  // namespace tunefarm
