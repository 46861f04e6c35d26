// The model benchmark compares equal work: every task of the small test
// models (and the importer's other forms, written by hand) gets from its
// oneDNN peer, fused operators included, what the task's own default
// program computes on the same random inputs (1e-4). And the model-level
// figures count a task without a peer apart from the compared ones. Built
// where oneDNN is (TUNEFARM_HAVE_ONEDNN_MODELS, set by bench/models/CMakeLists.txt).
#ifdef TUNEFARM_HAVE_ONEDNN_MODELS
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>

#include "model_comparison.h"
#include "onednn_task_op.h"
#include "task_peer.h"
#include "tune/tune_log.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::bench {
namespace {

// The workload's default program and the peer on the same random inputs.
void ExpectPeerComputesTheDefaultProgram(const Workload& w, const TaskPeer& peer) {
  SCOPED_TRACE(w.name + ": " + peer.What());
  ASSERT_NE(peer.kind, PeerKind::kNone);
  auto f = LowerToPrimFunc(w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto jit = JitCompile(*f, Target::Host());
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  std::mt19937_64 rng(7);
  std::vector<HostBuffer> buffers;
  std::vector<void*> args;
  std::map<std::string, HostBuffer*> by_name;
  for (const ir::Buffer& param : f->params) buffers.push_back(HostBuffer::Like(param));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i < f->num_inputs) {
      buffers[i].FillRandom(rng);
      by_name[f->params[i]->name] = &buffers[i];
    }
    args.push_back(buffers[i].data());
  }
  auto call = PreparedCall::Prepare(**jit, *f, args);
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  ASSERT_TRUE((*call)->Run().ok());
  HostBuffer from_onednn = HostBuffer::Like(f->params.back());
  auto op = MakeTaskOp(peer, by_name, &from_onednn);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  op->run();
  op->fetch();
  CompareResult cmp = CompareBuffers(from_onednn, buffers.back(), 1e-4, 1e-4);
  EXPECT_TRUE(cmp.equal) << cmp.message;
}

void ExpectEveryTaskOfModel(const std::string& name) {
  auto m = frontend::ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_FALSE(m->tasks.empty());
  for (const frontend::ModelTask& t : m->tasks) ExpectPeerComputesTheDefaultProgram(t.workload, PeerOf(*m, t));
}

// oneDNN accepts every task's peer of the five test models (post-ops and
// broadcasts included); the buffers are left at zero, nothing is run.
TEST(ModelPeerTest, OneDnnMakesEveryTasksPeerOfTheTestModels) {
  for (const char* name : {"small_cnn", "small_transformer", "resnet50", "mobilenet_v2", "bert_layer"}) {
    auto m = frontend::ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    for (const frontend::ModelTask& t : m->tasks) {
      std::vector<HostBuffer> inputs;
      std::map<std::string, HostBuffer*> by_name;
      inputs.reserve(t.workload.inputs.size());
      for (const ir::Buffer& in : t.workload.inputs) {
        inputs.push_back(HostBuffer::Like(in));
        by_name[in->name] = &inputs.back();
      }
      HostBuffer output = HostBuffer::Like(t.workload.outputs[0]);
      TaskPeer peer = PeerOf(*m, t);
      auto op = MakeTaskOp(peer, by_name, &output);
      EXPECT_TRUE(op.ok()) << t.workload.name << ": " << op.status().ToString();
    }
  }
}

TEST(ModelPeerTest, SmallCnnEveryTasksPeerComputesItsDefaultProgram) { ExpectEveryTaskOfModel("small_cnn"); }

TEST(ModelPeerTest, SmallTransformerEveryTasksPeerComputesItsDefaultProgram) {
  ExpectEveryTaskOfModel("small_transformer");
}

// Forms the small models do not have, written as the importer writes them.
TEST(ModelPeerTest, TheImportersOtherFormsComputeTheirDefaultPrograms) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Gemm with transB and alpha, then the bias: linear, then binary add.
      {"dense", "workload t() {\n  A = input f32[5, 8]\n  W = input const f32[6, 8]\n  p = input const f32[6]\n"
                "  acc[i: 5, j: 6] = sum(k: 8) A[i, k] * W[j, k]\n"
                "  out[o0: 5, o1: 6] = max(0.0, min(1.0, acc[o0, o1] * 0.5 + p[o1]))\n  output out\n}\n"},
      // A 3-D activation times 2-D weights: one GEMM of 2 x 7 rows, bias and residual.
      {"dense", "workload t() {\n  A = input f32[2, 7, 16]\n  W = input const f32[16, 24]\n  p = input const f32[24]\n"
                "  x = input f32[2, 7, 24]\n"
                "  acc[b0: 2, i: 7, j: 24] = sum(k: 16) A[b0, i, k] * W[k, j]\n"
                "  out[o0: 2, o1: 7, o2: 24] = acc[o0, o1, o2] + p[o2] + x[o0, o1, o2]\n  output out\n}\n"},
      // Two groups, dilation 2, padding 2, LeakyRelu.
      {"grouped_conv2d",
       "workload t() {\n  X = input f32[1, 4, 7, 7]\n  W = input const f32[6, 2, 3, 3]\n"
       "  acc[n: 1, k: 6, h: 7, w: 7] = sum(c: 2, r: 3, s: 3) select(h + r * 2 - 2 >= 0 && h + r * 2 - 2 < 7 && "
       "(w + s * 2 - 2 >= 0 && w + s * 2 - 2 < 7), X[n, k / 3 * 2 + c, h + r * 2 - 2, w + s * 2 - 2], 0.0) * W[k, c, r, s]\n"
       "  out[o0: 1, o1: 6, o2: 7, o3: 7] = select(acc[o0, o1, o2, o3] > 0.0, acc[o0, o1, o2, o3], acc[o0, o1, o2, o3] * 0.1)\n"
       "  output out\n}\n"},
      // A residual as large as the output, handed to oneDNN in the layout it chose for the output.
      {"conv2d", "workload t() {\n  X = input f32[1, 16, 4, 4]\n  W = input const f32[32, 16, 1, 1]\n"
                 "  B = input const f32[32]\n  x = input f32[1, 32, 4, 4]\n"
                 "  acc[n: 1, k: 32, h: 4, w: 4] = sum(c: 16, r: 1, s: 1) X[n, c, h + r, w + s] * W[k, c, r, s]\n"
                 "  out[o0: 1, o1: 32, o2: 4, o3: 4] = max(acc[o0, o1, o2, o3] + B[o1] + x[o0, o1, o2, o3], 0.0)\n"
                 "  output out\n}\n"},
      // HardSwish after a 1x1 convolution.
      {"conv2d", "workload t() {\n  X = input f32[1, 8, 4, 4]\n  W = input const f32[16, 8, 1, 1]\n"
                 "  acc[n: 1, k: 16, h: 4, w: 4] = sum(c: 8, r: 1, s: 1) X[n, c, h + r, w + s] * W[k, c, r, s]\n"
                 "  out[o0: 1, o1: 16, o2: 4, o3: 4] = acc[o0, o1, o2, o3] * max(0.0, min(1.0, acc[o0, o1, o2, o3] * "
                 "0.16666666666666666 + 0.5))\n  output out\n}\n"},
      // Average pooling 3x3 s1 p1 excluding the padded taps.
      {"pool", "workload t() {\n  X = input f32[1, 8, 6, 6]\n"
               "  acc[n: 1, c: 8, h: 6, w: 6] = sum(r: 3, s: 3) select(h + r - 1 >= 0 && h + r - 1 < 6 && (w + s - 1 >= 0 "
               "&& w + s - 1 < 6), X[n, c, h + r - 1, w + s - 1], 0.0)\n"
               "  out[o0: 1, o1: 8, o2: 6, o3: 6] = acc[o0, o1, o2, o3] / f32((min(o2 - 1 + 3, 6) - max(o2 - 1, 0)) * "
               "(min(o3 - 1 + 3, 6) - max(o3 - 1, 0)))\n  output out\n}\n"},
      {"reduce", "workload t() {\n  X = input f32[2, 8, 6]\n  acc[o0: 2, o1: 8, o2: 1] = sum(r2: 6) X[o0, o1, r2]\n"
                 "  out[o0: 2, o1: 8, o2: 1] = acc[o0, o1, o2] * 0.16666666666666666\n  output out\n}\n"},
      {"reduce", "workload t() {\n  X = input f32[3, 4, 5]\n  acc[o1: 4] = max(r0: 3, r2: 5) X[r0, o1, r2]\n  output acc\n}\n"},
      {"elementwise", "workload t() {\n  x = input f32[1, 8, 5, 5]\n  x2 = input f32[1, 8, 5, 5]\n"
                      "  out[o0: 1, o1: 8, o2: 5, o3: 5] = max(x[0, o1, o2, o3] + x2[0, o1, o2, o3], 0.0)\n  output out\n}\n"},
      {"elementwise", "workload t() {\n  x = input f32[3, 5]\n  out[o0: 3, o1: 5] = sigmoid(x[o0, o1]) * 2.0\n  output out\n}\n"},
  };
  for (const auto& [op_class, text] : cases) {
    auto w = ParseWorkload(text);
    ASSERT_TRUE(w.ok()) << w.status().ToString() << "\n" << text;
    ExpectPeerComputesTheDefaultProgram(*w, PeerOf(*w, op_class));
  }
}

TaskResult Task(int calls, bool tuned, bool has_peer, double tunefarm_ms, double onednn_ms) {
  TaskResult r;
  r.calls = calls;
  r.tuned = tuned;
  r.has_peer = has_peer;
  TaskCell c;
  c.tunefarm_seconds = tunefarm_ms * 1e-3;
  c.onednn_seconds = onednn_ms * 1e-3;
  r.cells.push_back(c);
  return r;
}

TEST(ModelTotalsTest, CallsWeighTheTimesAndTasksWithoutAPeerAreApart) {
  std::vector<TaskResult> results = {Task(3, true, true, 1.0, 2.0), Task(1, false, true, 4.0, 2.0),
                                     Task(2, true, false, 0.5, 0), Task(1, true, true, 0, 1.0)};
  results[0].default_won = true;  // tuned, and the default schedule won
  ModelTotals m = Totals(results, 0, 1);
  EXPECT_EQ(m.compared_tasks, 2);
  EXPECT_EQ(m.compared_calls, 4);
  EXPECT_NEAR(m.tunefarm_seconds, 7e-3, 1e-12);  // 3 x 1 + 1 x 4
  EXPECT_NEAR(m.onednn_seconds, 8e-3, 1e-12);    // 3 x 2 + 1 x 2
  EXPECT_NEAR(m.Ratio(), 8.0 / 7.0, 1e-9);
  EXPECT_EQ(m.no_peer_tasks, 1);
  EXPECT_EQ(m.no_peer_calls, 2);
  EXPECT_NEAR(m.no_peer_tunefarm_seconds, 1e-3, 1e-12);
  EXPECT_EQ(m.untimed_tasks, 1);  // its kernel was not timed (wrong or failed)
  EXPECT_EQ(m.untuned_tasks, 1);
  EXPECT_EQ(m.default_won_tasks, 1);
  EXPECT_EQ(m.stalled_tasks, 0);
  EXPECT_NEAR(m.RatioWithoutStalls(), m.Ratio(), 1e-12);

  // A stalled task stays in the sums; the ratio without it leaves it out.
  results[1].cells[0].stalled = true;
  ModelTotals s = Totals(results, 0, 2);
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.stalled_tasks, 1);
  EXPECT_NEAR(s.Ratio(), 8.0 / 7.0, 1e-9);
  EXPECT_NEAR(s.RatioWithoutStalls(), 6.0 / 3.0, 1e-9);
}

// A task the log holds no record of is timed with its default schedule, and says so.
TEST(ModelComparisonTest, AnUntunedTaskIsComparedWithItsDefaultSchedule) {
  auto m = frontend::ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/small_cnn.onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::string path = ::testing::TempDir() + "/model_comparison_empty.db";
  std::filesystem::remove(path);
  auto db = database::Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ModelComparisonOptions options;
  options.threads = {1};
  options.repeat = 1;
  options.record_target = DefaultRecordTargetString();
  const frontend::ModelTask& task = m->tasks.back();  // the classifier
  TaskResult r = CompareTask(*m, task, **db, options);
  EXPECT_EQ(r.task, task.workload.name);
  EXPECT_FALSE(r.tuned);
  EXPECT_EQ(r.trials, 0);
  EXPECT_NE(r.kernel.find("default schedule"), std::string::npos) << r.kernel;
  EXPECT_TRUE(r.has_peer) << r.peer;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_TRUE(r.cells[0].note.empty()) << r.cells[0].note;
  EXPECT_FALSE(r.cells[0].wrong);
  EXPECT_GT(r.cells[0].tunefarm_seconds, 0);
  EXPECT_GT(r.cells[0].onednn_seconds, 0);
  std::filesystem::remove(path);
}

// A task oneDNN cannot express is timed alone and counted apart from the compared ones.
TEST(ModelComparisonTest, ATaskWithoutAPeerIsTimedAloneAndCountedApart) {
  auto w = ParseWorkload(
      "workload t_dense_erf() {\n  A = input f32[4, 8]\n  W = input const f32[8, 6]\n"
      "  acc[i: 4, j: 6] = sum(k: 8) A[i, k] * W[k, j]\n  out[o0: 4, o1: 6] = erf(acc[o0, o1])\n  output out\n}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  frontend::Model m;
  m.name = "t";
  m.tensors["a"] = frontend::ModelTensor{"a", ir::DataType::Float(32), {4, 8}, frontend::ModelTensor::Kind::kInput, "a"};
  m.tensors["w"] = frontend::ModelTensor{"w", ir::DataType::Float(32), {8, 6}, frontend::ModelTensor::Kind::kWeight, "w"};
  frontend::ModelTask task;
  task.workload = *w;
  task.op_class = "dense";
  task.calls.push_back(frontend::TaskCall{{"mm", "erf"}, {"a", "w"}, "y"});
  task.calls.push_back(frontend::TaskCall{{"mm2", "erf2"}, {"a", "w"}, "y2"});
  std::string path = ::testing::TempDir() + "/model_comparison_no_peer.db";
  std::filesystem::remove(path);
  auto db = database::Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ModelComparisonOptions options;
  options.threads = {1, 2};
  options.repeat = 1;
  options.record_target = DefaultRecordTargetString();
  TaskResult r = CompareTask(m, task, **db, options);
  EXPECT_FALSE(r.has_peer);
  EXPECT_NE(r.peer.find("erf"), std::string::npos) << r.peer;
  ASSERT_EQ(r.cells.size(), 2u);
  for (const TaskCell& c : r.cells) {
    EXPECT_GT(c.tunefarm_seconds, 0);
    EXPECT_EQ(c.onednn_seconds, 0);
    EXPECT_EQ(c.note, "no oneDNN peer");
  }
  ModelTotals totals = Totals({r}, 1, 2);
  EXPECT_EQ(totals.compared_tasks, 0);
  EXPECT_EQ(totals.no_peer_tasks, 1);
  EXPECT_EQ(totals.no_peer_calls, 2);
  EXPECT_NEAR(totals.no_peer_tunefarm_seconds, 2 * r.cells[1].tunefarm_seconds, 1e-15);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tunefarm::bench
#endif  // TUNEFARM_HAVE_ONEDNN_MODELS
