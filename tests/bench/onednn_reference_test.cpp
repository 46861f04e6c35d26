// oneDNN's peer of every layer of configs/layers/ computes what the layer's
// file computes (on its shrunk copy, against the reference interpreter), so
// the layer benchmark's correctness check compares like with like; and the
// side-by-side comparison checks a kernel before timing it: a wrong kernel
// is reported and never timed. Built where oneDNN is (TUNEFARM_HAVE_ONEDNN,
// set by bench/tune/CMakeLists.txt).
#ifdef TUNEFARM_HAVE_ONEDNN
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "layers/layer_manifest.h"
#include "tune/kernel_comparison.h"
#include "tune/onednn_reference.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"

namespace tunefarm::bench {
namespace {

const std::string kLayerDir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers/";

std::vector<LayerEntry> Manifest() {
  auto entries = ReadLayerManifest(kLayerDir + "layers.tsv");
  if (!entries.ok()) {
    ADD_FAILURE() << entries.status().ToString();
    return {};
  }
  return *entries;
}

class OneDnnLayerTest : public ::testing::TestWithParam<LayerEntry> {};

TEST_P(OneDnnLayerTest, ComputesWhatTheLayerFileComputes) {
  const LayerEntry& e = GetParam();
  std::ifstream in(kLayerDir + e.name + ".tf");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto w = ShrinkWorkload(text, e.name, {}, 6e4);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto spec = LayerOneDnnSpec(e.op, e.act, w->params);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();

  std::mt19937_64 rng(5);
  std::vector<HostBuffer> args;
  std::vector<HostBuffer*> arg_ptrs;
  std::map<std::string, HostBuffer*> by_name;
  for (size_t i = 0; i < f->params.size(); ++i) args.push_back(HostBuffer::Like(f->params[i]));
  for (size_t i = 0; i < f->params.size(); ++i) {
    if (i < f->num_inputs) args[i].FillRandom(rng);
    arg_ptrs.push_back(&args[i]);
    by_name[f->params[i]->name] = &args[i];
  }
  ASSERT_TRUE(Interpret(*f, arg_ptrs).ok());
  HostBuffer from_onednn = HostBuffer::Like(f->params.back());
  auto op = MakeOneDnnOp(*spec, by_name, &from_onednn);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  op->run();
  op->fetch();
  CompareResult cmp = CompareBuffers(from_onednn, args.back(), 1e-3, 1e-3);
  EXPECT_TRUE(cmp.equal) << w->name << " (" << op->what << "): " << cmp.message;
}

std::string LayerName(const ::testing::TestParamInfo<LayerEntry>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Layers, OneDnnLayerTest, ::testing::ValuesIn(Manifest()), LayerName);

// A dense layer's kernel beside oneDNN: the right one is checked and timed,
// the kernel of the same layer with a ReLU is reported wrong and not timed.
TEST(KernelComparisonTest, ChecksEveryKernelBeforeTimingIt) {
  const std::string text =
      "workload d(M = 8, N = 48, K = 32) {\n"
      "  A = input f32[M, K]\n  W = input const f32[N, K]\n  bias = input const f32[N]\n"
      "  acc[i, j] = sum(k: K) A[i, k] * W[j, k]\n  out[i, j] = acc[i, j] + bias[j]\n  output out\n}\n";
  std::string relu_text = text;
  relu_text.replace(relu_text.find("acc[i, j] + bias[j]"), 19, "max(acc[i, j] + bias[j], 0.0)");
  auto w = ParseWorkload(text);
  auto relu = ParseWorkload(relu_text);
  ASSERT_TRUE(w.ok() && relu.ok());
  std::vector<Kernel> kernels;
  kernels.push_back(DefaultKernel(*w));
  kernels.push_back(DefaultKernel(*relu));
  kernels[1].label = "with relu";
  ComparisonOptions options;
  options.threads = {1};
  options.repeat = 1;
  auto spec = LayerOneDnnSpec("dense", "none", w->params);
  ASSERT_TRUE(spec.ok());
  auto rows = CompareWithOneDnn(*w, kernels, *spec, options);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const ThreadsRow& row = (*rows)[0];
  EXPECT_EQ(row.threads, 1);
  EXPECT_GT(row.onednn_gflops, 0);
  ASSERT_EQ(row.cells.size(), 2u);
  EXPECT_TRUE(row.cells[0].note.empty()) << row.cells[0].note;
  EXPECT_FALSE(row.cells[0].wrong);
  EXPECT_GT(row.cells[0].gflops, 0);
  EXPECT_GT(row.cells[0].ratio, 0);
  EXPECT_TRUE(row.cells[1].wrong);
  EXPECT_NE(row.cells[1].note.find("WRONG RESULT"), std::string::npos);
  EXPECT_EQ(row.cells[1].gflops, 0);
}

TEST(KernelComparisonTest, AKernelWithoutRecordsSaysSo) {
  auto w = ParseWorkload("workload g(M = 4, N = 4, K = 4) {\n  A = input f32[M, K]\n  B = input const f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  ASSERT_TRUE(w.ok());
  Kernel none = TunedKernel(*w, std::vector<LoggedTrial>{}, 0);
  EXPECT_EQ(none.jit, nullptr);
  EXPECT_EQ(none.problem, "no correct record in the log");
  Kernel unreadable = TunedKernel(*w, Status::IOError("disk"), 200);
  EXPECT_EQ(unreadable.label, "tuned@200");
  EXPECT_NE(unreadable.problem.find("reading the log failed"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm::bench
#endif  // TUNEFARM_HAVE_ONEDNN
