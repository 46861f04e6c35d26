// `tunefarm compile MODEL.onnx`: one object holding every task's kernel and
// the model's prepack and run entries, and one header. A C program that
// knows the model only through that header fills the weights (read from the
// .onnx here) and the input by slot name, runs the model and must give the
// logits the test-model script computed with numpy; with a log, tuned tasks
// whose schedules pack their weights run through the prepack entry. And the
// errors: a bad model, --require-tuned without records, a cuda target.
#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "compile_model_util.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::cli_test {
namespace {

// A serialized onnx.TensorProto of f32, as the test-model script writes them.
Result<std::vector<float>> ReadTensor(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto t;
  if (!in || !t.ParseFromString(bytes.str())) return Status::InvalidArgument(path + ": not a TensorProto");
  if (t.data_type() != onnx::TensorProto::FLOAT) return Status::InvalidArgument(path + ": not f32");
  if (!t.has_raw_data()) return std::vector<float>(t.float_data().begin(), t.float_data().end());
  std::vector<float> v(t.raw_data().size() / sizeof(float));
  std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
  return v;
}

// Knows small_cnn only through its header: fills every input and weight slot
// by its graph tensor's name, prepacks (unless told not to), runs, copies the
// logits out. -1: `lookup` has no values for a slot.
constexpr char kDriver[] = R"(#include "small_cnn.h"

#include <stdlib.h>
#include <string.h>

typedef const void* (*lookup_fn)(void* context, const char* name);

int drive(lookup_fn lookup, void* context, int prepack, float* logits) {
  static const int64_t bytes[SMALL_CNN_NUM_SLOTS] = SMALL_CNN_SLOT_BYTES;
  static const char* const names[SMALL_CNN_NUM_SLOTS] = SMALL_CNN_SLOT_NAMES;
  void* slots[SMALL_CNN_NUM_SLOTS];
  int rc = 0;
  int i;
  for (i = 0; i < SMALL_CNN_NUM_SLOTS; ++i) slots[i] = calloc(1, (size_t)bytes[i]);
  for (i = SMALL_CNN_INPUTS_BEGIN; i < SMALL_CNN_OUTPUTS_BEGIN && rc == 0; ++i) {
    const void* values = lookup(context, names[i]);
    if (values == NULL) rc = -1;
    else memcpy(slots[i], values, (size_t)bytes[i]);
  }
  if (rc == 0 && prepack) rc = small_cnn_prepack(slots);
  if (rc == 0) rc = small_cnn_run(slots);
  if (rc == 0) memcpy(logits, slots[SMALL_CNN_LOGITS], (size_t)bytes[SMALL_CNN_LOGITS]);
  for (i = 0; i < SMALL_CNN_NUM_SLOTS; ++i) free(slots[i]);
  return rc;
}
)";

using Values = std::map<std::string, std::vector<float>>;
using DriveFn = int (*)(const void* (*)(void*, const char*), void*, int, float*);

const void* LookUp(void* context, const char* name) {
  auto* values = static_cast<Values*>(context);
  auto it = values->find(name);
  return it == values->end() ? nullptr : it->second.data();
}

class CompileModelTest : public CompiledModelTest {
 protected:
  CompileModelTest() : CompiledModelTest("tf_compile_model_") {}

  void SetUp() override {
    CompiledModelTest::SetUp();
    auto m = ImportWithWeights("small_cnn.onnx");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    model_ = std::move(m).value();
    values_ = model_.weights;
    auto input = ReadTensor(Model("small_cnn.input.pb"));
    auto logits = ReadTensor(Model("small_cnn.logits.pb"));
    ASSERT_TRUE(input.ok()) << input.status().ToString();
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    values_["input"] = *input;
    expected_ = *logits;
  }

  // The driver and the object `object` linked with the runtime into
  // <stem>.so and loaded; null (after a failed expectation) if that fails.
  DriveFn LoadDriver(const std::string& object, const std::string& stem) {
    void* lib = LinkDriver(kDriver, object, stem);
    return lib == nullptr ? nullptr : reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
  }

  // The worst of |actual - expected| / (|expected| + 1e-3) over the logits.
  double WorstError(const std::vector<float>& actual) const { return cli_test::WorstError(actual, expected_); }

  // The defined global symbols of an object file.
  std::string DefinedSymbols(const std::string& object) {
    Output nm = testing_support::RunCommand("nm -g --defined-only " + object);
    EXPECT_EQ(nm.code, 0) << nm.text;
    return nm.text;
  }

  frontend::Model model_;
  Values values_;
  std::vector<float> expected_;
};

TEST_F(CompileModelTest, WithoutALogEveryTaskIsItsDefaultAndTheModelComputesTheReference) {
  Output out = RunTunefarm("compile " + Model("small_cnn.onnx") + " -o " + P("small_cnn.o") + " --header " +
                           P("small_cnn.h"));
  ASSERT_EQ(out.code, 0) << out.text;
  const std::string symbols = DefinedSymbols(P("small_cnn.o"));
  ASSERT_EQ(model_.tasks.size(), 7u);
  for (const frontend::ModelTask& t : model_.tasks) {
    EXPECT_NE(out.text.find("tunefarm compile: " + t.workload.name + ": no --db given; using the default schedule"),
              std::string::npos)
        << out.text;
    EXPECT_NE(symbols.find(" T " + t.workload.name + "\n"), std::string::npos) << t.workload.name << "\n" << symbols;
  }
  EXPECT_NE(symbols.find(" T small_cnn_run\n"), std::string::npos) << symbols;
  EXPECT_NE(symbols.find(" T small_cnn_prepack\n"), std::string::npos) << symbols;
  EXPECT_NE(out.text.find("7 kernels (0 tuned) in 7 calls"), std::string::npos) << out.text;

  // C++ callers too.
  Output cxx = testing_support::RunCommand("c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ " +
                                           P("small_cnn.h"));
  EXPECT_EQ(cxx.code, 0) << cxx.text;
  DriveFn drive = LoadDriver(P("small_cnn.o"), "run");
  ASSERT_NE(drive, nullptr);
  std::vector<float> logits(expected_.size(), NAN);
  ASSERT_EQ(drive(&LookUp, &values_, 1, logits.data()), 0);
  EXPECT_LT(WorstError(logits), 1e-4);

  // The check can fail: another bias for the last layer, other logits.
  Values changed = values_;
  for (float& b : changed.at("fc.bias")) b += 0.5f;
  ASSERT_EQ(drive(&LookUp, &changed, 1, logits.data()), 0);
  EXPECT_GT(WorstError(logits), 0.1);

  // --shared: the same entries in a library of its own.
  Output shared = RunTunefarm("compile " + Model("small_cnn.onnx") + " --shared -o " + P("model.so"));
  ASSERT_EQ(shared.code, 0) << shared.text;
  void* lib = dlopen(P("model.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  libraries_.push_back(lib);
  EXPECT_NE(dlsym(lib, "small_cnn_run"), nullptr);
}

TEST_F(CompileModelTest, TunedTasksThatPackTheirWeightsRunThroughThePrepackEntry) {
  std::map<std::string, int64_t> records;
  {
    auto db = database::Database::Open(P("log.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    // The dense layer's W[10, 16] in panels of 5 rows; the last 1x1 convolution's W[16, 8, 1, 1] of 8.
    const std::map<std::string, std::pair<std::string, int64_t>> packing = {
        {"small_cnn_dense_m1_n10_k16", {"acc", 5}}, {"small_cnn_conv1x1_c8_k16_h5_s1", {"out", 8}}};
    for (const frontend::ModelTask& t : model_.tasks) {
      auto how = packing.find(t.workload.name);
      if (how == packing.end()) continue;
      auto id = CommitPackingRecord(**db, t.workload, how->second.first, how->second.second);
      ASSERT_TRUE(id.ok()) << t.workload.name << ": " << id.status().ToString();
      records[t.workload.name] = *id;
    }
  }
  ASSERT_EQ(records.size(), 2u);
  Output out = RunTunefarm("compile " + Model("small_cnn.onnx") + " --db " + P("log.db") + " -o " +
                           P("small_cnn.o") + " --header " + P("small_cnn.h"));
  ASSERT_EQ(out.code, 0) << out.text;
  for (const frontend::ModelTask& t : model_.tasks) {
    const std::string said = records.count(t.workload.name)
                                 ? ": using record #" + std::to_string(records[t.workload.name]) + " "
                                 : ": warning: no tuning record for this workload and target";
    EXPECT_NE(out.text.find("tunefarm compile: " + t.workload.name + said), std::string::npos) << out.text;
  }
  const std::string header = ReadText("small_cnn.h");
  EXPECT_NE(header.find("schedules: 2 of the 7 kernels tuned"), std::string::npos) << header;
  EXPECT_NE(header.find("small_cnn_dense_m1_n10_k16_prepacked(SMALL_CNN_AVGPOOL_OUTPUT, SMALL_CNN_FC_WEIGHT, "
                        "SMALL_CNN_FC_BIAS, SMALL_CNN_LOGITS, SMALL_CNN_PACKED_1)"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("SMALL_CNN_PACKED_0 = 17,"), std::string::npos) << header;
  EXPECT_NE(header.find("\"small_cnn_dense_m1_n10_k16.W_global\""), std::string::npos) << header;
  const std::string symbols = DefinedSymbols(P("small_cnn.o"));
  for (const char* entry : {"small_cnn_dense_m1_n10_k16_prepack", "small_cnn_dense_m1_n10_k16_prepacked",
                            "small_cnn_conv1x1_c8_k16_h5_s1_prepack", "small_cnn_dense_m1_n10_k16"}) {
    EXPECT_NE(symbols.find(std::string(" T ") + entry + "\n"), std::string::npos) << entry << "\n" << symbols;
  }

  DriveFn drive = LoadDriver(P("small_cnn.o"), "tuned");
  ASSERT_NE(drive, nullptr);
  std::vector<float> logits(expected_.size(), NAN);
  ASSERT_EQ(drive(&LookUp, &values_, 1, logits.data()), 0);
  EXPECT_LT(WorstError(logits), 1e-4);
  // Without the prepack the packed weights are the zeros they were allocated as.
  ASSERT_EQ(drive(&LookUp, &values_, 0, logits.data()), 0);
  EXPECT_GT(WorstError(logits), 0.1);

  // --require-tuned names the five kernels still to tune, and writes nothing.
  Output required = RunTunefarm("compile " + Model("small_cnn.onnx") + " --db " + P("log.db") + " -o " +
                                P("required.o") + " --require-tuned");
  EXPECT_EQ(required.code, 3) << required.text;
  EXPECT_NE(required.text.find("--require-tuned and 5 of the 7 kernels have no tuning record"), std::string::npos)
      << required.text;
  EXPECT_NE(required.text.find("small_cnn_maxpool3x3_c8_h9_w10_s2"), std::string::npos) << required.text;
  EXPECT_EQ(required.text.find("small_cnn_dense_m1_n10_k16,"), std::string::npos) << required.text;
  EXPECT_FALSE(fs::exists(dir_ / "required.o"));
}

// X[1, 4] -> Relu -> Y -> Reshape to [2, 2] -> Z, the graph's output: a view of Y.
void WriteViewOutputModel(const std::string& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("view_out");
  auto value = [](onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "X", {1, 4});
  value(g->add_output(), "Z", {2, 2});
  onnx::TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(2);
  shape->add_int64_data(2);
  onnx::NodeProto* relu = g->add_node();
  relu->set_name("relu");
  relu->set_op_type("Relu");
  relu->add_input("X");
  relu->add_output("Y");
  onnx::NodeProto* reshape = g->add_node();
  reshape->set_name("reshape");
  reshape->set_op_type("Reshape");
  reshape->add_input("Y");
  reshape->add_input("shape");
  reshape->add_output("Z");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

TEST_F(CompileModelTest, AnOutputThatIsAViewIsANameOfItsStoragesSlot) {
  WriteViewOutputModel(P("view_out.onnx"));
  Output out = RunTunefarm("compile " + P("view_out.onnx") + " --shared -o " + P("view_out.so") + " --header " +
                           P("view_out.h"));
  ASSERT_EQ(out.code, 0) << out.text;
  const std::string header = ReadText("view_out.h");
  EXPECT_NE(header.find("VIEW_OUT_Y = 1,"), std::string::npos) << header;
  EXPECT_NE(header.find("/* output       f32[1, 4], 16 bytes: Y */"), std::string::npos) << header;
  EXPECT_NE(header.find("VIEW_OUT_Z = VIEW_OUT_Y,  /* Z, a view of Y */"), std::string::npos) << header;
  EXPECT_NE(header.find("VIEW_OUT_NUM_SLOTS = 2\n"), std::string::npos) << header;
  void* lib = dlopen(P("view_out.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  libraries_.push_back(lib);
  auto run = reinterpret_cast<int32_t (*)(void* const*)>(dlsym(lib, "view_out_run"));
  ASSERT_NE(run, nullptr);
  float x[4] = {-1.0f, 2.0f, -3.0f, 4.0f}, z[4] = {NAN, NAN, NAN, NAN};
  void* slots[] = {x, z};
  ASSERT_EQ(run(slots), 0);
  EXPECT_EQ(std::vector<float>(z, z + 4), (std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f}));
}

TEST_F(CompileModelTest, ErrorsNameTheModelTheMissingRecordsOrTheTarget) {
  // A model the frontend refuses: its message, exit 1, nothing written.
  Output bad = RunTunefarm("compile " + Model("malformed/unknown_op.onnx") + " -o " + P("bad.o"));
  EXPECT_EQ(bad.code, 1) << bad.text;
  EXPECT_NE(bad.text.find("error: " + Model("malformed/unknown_op.onnx") + ": node 'mystery_0' (FooBar)"),
            std::string::npos)
      << bad.text;
  EXPECT_FALSE(fs::exists(dir_ / "bad.o"));

  // No log and --require-tuned: every kernel untuned, exit 3 as for a workload.
  Output required = RunTunefarm("compile " + Model("small_cnn.onnx") + " -o " + P("m.o") + " --require-tuned");
  EXPECT_EQ(required.code, 3) << required.text;
  EXPECT_NE(required.text.find("7 of the 7 kernels have no tuning record"), std::string::npos) << required.text;
  EXPECT_NE(required.text.find("(no --db given)"), std::string::npos) << required.text;
  EXPECT_FALSE(fs::exists(dir_ / "m.o"));

  Output cuda = RunTunefarm("compile " + Model("small_cnn.onnx") + " --target 'cuda -arch=sm_90' -o " + P("m.o"));
  EXPECT_EQ(cuda.code, 1) << cuda.text;
  EXPECT_NE(cuda.text.find("compile its tasks one by one"), std::string::npos) << cuda.text;

  // A symbolic dimension takes its value from --set, as for import and tune.
  Output symbolic = RunTunefarm("compile " + Model("malformed/symbolic_dim.onnx") + " -o " + P("s.o"));
  EXPECT_EQ(symbolic.code, 1) << symbolic.text;
  EXPECT_NE(symbolic.text.find("--set batch=1"), std::string::npos) << symbolic.text;
  Output given = RunTunefarm("compile " + Model("malformed/symbolic_dim.onnx") + " --set batch=1 -o " + P("s.o") +
                             " --header " + P("s.h"));
  EXPECT_EQ(given.code, 0) << given.text;
}

}  // namespace
}  // namespace tunefarm::cli_test
