// `tunefarm compile MODEL.onnx`: the memory the object decides. Constants the
// .onnx does not hold (folded at import) are embedded in the object, and
// with --embed-weights every weight is; intermediates live in one workspace
// where those never alive at once share bytes. A C program that knows the
// model only through its header fills exactly the slots the header says the
// caller fills, binds a workspace, runs, and must give the test-model
// script's numpy results.
#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "cli_test_util.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::cli_test {
namespace {

std::string Model(const std::string& name) { return std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name; }

// The bytes of a serialized onnx.TensorProto of f32 or i64, as the test-model script writes them.
Result<std::string> ReadTensorBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::TensorProto t;
  if (!in || !t.ParseFromString(bytes.str())) return Status::InvalidArgument(path + ": not a TensorProto");
  if (t.has_raw_data()) return t.raw_data();
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    return std::string(reinterpret_cast<const char*>(t.float_data().data()), t.float_data_size() * sizeof(float));
  }
  if (t.data_type() == onnx::TensorProto::INT64) {
    return std::string(reinterpret_cast<const char*>(t.int64_data().data()), t.int64_data_size() * sizeof(int64_t));
  }
  return Status::InvalidArgument(path + ": neither f32 nor i64");
}

// Fills the slots below MODEL_EMBEDDED_BEGIN (inputs and the weights the
// caller fills) by their graph tensor's name and allocates the outputs; the
// bind entry places everything else. Every slot must then have an address.
// -1: `lookup` has no values for a slot; -2: a slot left without memory.
// The workspace is filled with garbage first: nothing may rely on zeros.
constexpr char kDriver[] = R"(#include "MODEL_HEADER"

#include <stdlib.h>
#include <string.h>

typedef const void* (*lookup_fn)(void* context, const char* name);
typedef void (*store_fn)(void* context, const char* name, const void* data, int64_t bytes);

int64_t workspace_bytes(void) { return MODEL_WORKSPACE_BYTES; }
int64_t intermediate_bytes(void) {
  static const int64_t bytes[MODEL_NUM_SLOTS] = MODEL_SLOT_BYTES;
  int64_t sum = 0;
  int i;
  for (i = MODEL_INTERMEDIATES_BEGIN; i < MODEL_PACKED_BEGIN; ++i) sum += bytes[i];
  return sum;
}
int caller_weights(void) { return MODEL_EMBEDDED_BEGIN - MODEL_WEIGHTS_BEGIN; }

int drive(lookup_fn lookup, store_fn store, void* context) {
  static const int64_t bytes[MODEL_NUM_SLOTS] = MODEL_SLOT_BYTES;
  static const char* const names[MODEL_NUM_SLOTS] = MODEL_SLOT_NAMES;
  void* slots[MODEL_NUM_SLOTS];
  void* workspace = aligned_alloc(64, (size_t)MODEL_WORKSPACE_BYTES + 64);
  int rc = workspace == NULL ? -3 : 0;
  int i;
  for (i = 0; i < MODEL_NUM_SLOTS; ++i) slots[i] = NULL;
  for (i = 0; i < MODEL_EMBEDDED_BEGIN && rc == 0; ++i) {
    const void* values = lookup(context, names[i]);
    slots[i] = malloc((size_t)bytes[i]);
    if (values == NULL) rc = -1;
    else memcpy(slots[i], values, (size_t)bytes[i]);
  }
  for (i = MODEL_OUTPUTS_BEGIN; i < MODEL_INTERMEDIATES_BEGIN; ++i) slots[i] = calloc(1, (size_t)bytes[i]);
  if (rc == 0) {
    memset(workspace, 0x7f, (size_t)MODEL_WORKSPACE_BYTES);
    rc = model_bind(slots, workspace);
  }
  for (i = 0; i < MODEL_NUM_SLOTS && rc == 0; ++i) {
    if (slots[i] == NULL && bytes[i] > 0) rc = -2;
  }
  if (rc == 0) rc = model_prepack(slots);
  if (rc == 0) rc = model_run(slots);
  for (i = MODEL_OUTPUTS_BEGIN; i < MODEL_INTERMEDIATES_BEGIN && rc == 0; ++i) {
    store(context, names[i], slots[i], bytes[i]);
  }
  for (i = 0; i < MODEL_EMBEDDED_BEGIN; ++i) free(slots[i]);
  for (i = MODEL_OUTPUTS_BEGIN; i < MODEL_INTERMEDIATES_BEGIN; ++i) free(slots[i]);
  free(workspace);
  return rc;
}
)";

// What the driver reads (by name) and what it wrote back.
struct Context {
  std::map<std::string, std::string> values;
  std::set<std::string> looked_up;
  std::map<std::string, std::vector<float>> outputs;
};

const void* LookUp(void* context, const char* name) {
  auto* c = static_cast<Context*>(context);
  c->looked_up.insert(name);
  auto it = c->values.find(name);
  return it == c->values.end() ? nullptr : it->second.data();
}

void Store(void* context, const char* name, const void* data, int64_t bytes) {
  std::vector<float>& out = static_cast<Context*>(context)->outputs[name];
  out.resize(size_t(bytes) / sizeof(float));
  std::memcpy(out.data(), data, out.size() * sizeof(float));
}

std::string AsBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// The worst of |actual - expected| / (|expected| + 1e-3).
double WorstError(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double err = std::fabs(double(actual[i]) - expected[i]) / (std::fabs(expected[i]) + 1e-3);
    worst = std::max(worst, std::isnan(actual[i]) ? INFINITY : err);
  }
  return worst;
}

using DriveFn = int (*)(const void* (*)(void*, const char*), void (*)(void*, const char*, const void*, int64_t),
                        void*);
using CountFn = int64_t (*)();

class CompileModelMemoryTest : public CliFolderTest {
 protected:
  CompileModelMemoryTest() : CliFolderTest("tf_compile_model_memory_", 8, 8, 8) {}

  void TearDown() override {
    for (void* lib : libraries_) dlclose(lib);
    CliFolderTest::TearDown();
  }

  // Compiles `model` (flags added) and links the driver against it; the library, null on failure.
  void* Build(const std::string& model, const std::string& stem, const std::string& flags) {
    Output out = RunTunefarm("compile " + Model(model + ".onnx") + " " + flags + " -o " + P(stem + ".o") +
                             " --header " + P(stem + ".h"));
    EXPECT_EQ(out.code, 0) << out.text;
    if (out.code != 0) return nullptr;
    std::string driver = kDriver;
    std::string upper, lower = model;
    for (char c : model) upper += char(std::toupper(static_cast<unsigned char>(c)));
    for (auto [from, to] : {std::pair<std::string, std::string>{"MODEL_HEADER", stem + ".h"}, {"MODEL_", upper + "_"},
                            {"model_", lower + "_"}}) {
      for (size_t at = driver.find(from); at != std::string::npos; at = driver.find(from, at + to.size())) {
        driver.replace(at, from.size(), to);
      }
    }
    std::ofstream(P(stem + "_driver.c")) << driver;
    const std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    Output link = testing_support::RunCommand(
        "cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -I" + dir_.string() + " -o " + P(stem + ".so") + " " +
        P(stem + "_driver.c") + " " + P(stem + ".o") + " -L" + runtime + " -ltunefarm_runtime -Wl,-rpath," + runtime +
        " -lm");
    EXPECT_EQ(link.code, 0) << link.text;
    void* lib = dlopen(P(stem + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib, nullptr) << dlerror();
    if (lib != nullptr) libraries_.push_back(lib);
    return lib;
  }

  std::vector<void*> libraries_;
};

TEST_F(CompileModelMemoryTest, AFoldedConstantIsEmbeddedAndTheCallerFillsOnlyTheFilesInitializers) {
  frontend::ImportOptions options;
  options.read_weights = true;
  auto m = frontend::ImportOnnx(Model("small_embedder.onnx"), options);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // The position embeddings are a Gather of a table by constant ids, folded at import: no initializer holds them.
  const frontend::ModelTensor* folded = m->Tensor("embeddings.position_output");
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->kind, frontend::ModelTensor::Kind::kWeight);
  ASSERT_FALSE(folded->initializer);

  void* lib = Build("small_embedder", "small_embedder", "");
  ASSERT_NE(lib, nullptr);
  std::ifstream header_file(P("small_embedder.h"));
  const std::string header((std::istreambuf_iterator<char>(header_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(header.find("448 bytes, embedded: embeddings.position_output */"), std::string::npos) << header;
  EXPECT_NE(header.find("int32_t small_embedder_bind(void** slots, void* workspace);"), std::string::npos) << header;

  Context c;
  for (const auto& [name, t] : m->tensors) {
    if (t.initializer && t.storage == name) c.values[name] = AsBytes(m->weights.at(name));
  }
  auto ids = ReadTensorBytes(Model("small_embedder.input_ids.pb"));
  auto logits = ReadTensorBytes(Model("small_embedder.logits.pb"));
  auto picked = ReadTensorBytes(Model("small_embedder.picked.pb"));
  ASSERT_TRUE(ids.ok() && logits.ok() && picked.ok());
  c.values["input_ids"] = *ids;
  auto drive = reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
  ASSERT_NE(drive, nullptr);
  ASSERT_EQ(drive(&LookUp, &Store, &c), 0);
  EXPECT_EQ(c.looked_up.count("embeddings.position_output"), 0u);
  EXPECT_EQ(c.looked_up.count("word_table"), 1u);
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
  EXPECT_LT(WorstError(c.outputs["picked"], AsFloats(*picked)), 1e-4);

  // The check can fail: other word embeddings, other logits.
  for (char& byte : c.values.at("word_table")) byte = char(byte ^ 0x40);
  ASSERT_EQ(drive(&LookUp, &Store, &c), 0);
  EXPECT_GT(WorstError(c.outputs["logits"], AsFloats(*logits)), 0.01);
}

TEST_F(CompileModelMemoryTest, AConstantOfShapeFoldedAtImportIsEmbeddedToo) {
  frontend::ImportOptions options;
  options.read_weights = true;
  auto m = frontend::ImportOnnx(Model("small_detector.onnx"), options);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  void* lib = Build("small_detector", "small_detector", "");
  ASSERT_NE(lib, nullptr);
  std::ifstream header_file(P("small_detector.h"));
  const std::string header((std::istreambuf_iterator<char>(header_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(header.find("16 bytes, embedded: head1.ones_output */"), std::string::npos) << header;
  Context c;
  for (const auto& [name, t] : m->tensors) {
    if (t.initializer && t.storage == name) c.values[name] = AsBytes(m->weights.at(name));
  }
  auto input = ReadTensorBytes(Model("small_detector.input.pb"));
  auto boxes = ReadTensorBytes(Model("small_detector.boxes.pb"));
  auto features = ReadTensorBytes(Model("small_detector.features.pb"));
  ASSERT_TRUE(input.ok() && boxes.ok() && features.ok());
  c.values["input"] = *input;
  auto drive = reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
  ASSERT_NE(drive, nullptr);
  ASSERT_EQ(drive(&LookUp, &Store, &c), 0);
  EXPECT_EQ(c.looked_up.count("head1.ones_output"), 0u);
  EXPECT_LT(WorstError(c.outputs["boxes"], AsFloats(*boxes)), 1e-4);
  EXPECT_LT(WorstError(c.outputs["features"], AsFloats(*features)), 1e-4);
}

TEST_F(CompileModelMemoryTest, EmbedWeightsLeavesTheCallerOnlyTheInputAndAWorkspaceSmallerThanItsIntermediates) {
  void* lib = Build("small_cnn", "small_cnn", "--embed-weights");
  ASSERT_NE(lib, nullptr);
  auto caller_weights = reinterpret_cast<int (*)()>(dlsym(lib, "caller_weights"));
  ASSERT_NE(caller_weights, nullptr);
  EXPECT_EQ(caller_weights(), 0);
  auto input = ReadTensorBytes(Model("small_cnn.input.pb"));
  auto logits = ReadTensorBytes(Model("small_cnn.logits.pb"));
  ASSERT_TRUE(input.ok() && logits.ok());
  Context c;
  c.values["input"] = *input;
  auto drive = reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
  ASSERT_NE(drive, nullptr);
  ASSERT_EQ(drive(&LookUp, &Store, &c), 0);
  EXPECT_EQ(c.looked_up, std::set<std::string>{"input"});
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
  // The object holds the weights: it is larger than their bytes.
  frontend::ImportOptions options;
  options.read_weights = true;
  auto m = frontend::ImportOnnx(Model("small_cnn.onnx"), options);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  size_t weight_bytes = 0;
  for (const auto& [name, values] : m->weights) weight_bytes += values.size() * sizeof(float);
  EXPECT_GT(fs::file_size(P("small_cnn.o")), weight_bytes);

  // small_cnn is a chain: its intermediates are not all alive at once.
  auto workspace = reinterpret_cast<CountFn>(dlsym(lib, "workspace_bytes"));
  auto intermediates = reinterpret_cast<CountFn>(dlsym(lib, "intermediate_bytes"));
  ASSERT_TRUE(workspace != nullptr && intermediates != nullptr);
  EXPECT_GT(intermediates(), 0);
  EXPECT_LT(workspace(), intermediates());
  EXPECT_EQ(workspace() % 64, 0);
  // The graph output is the caller's, never in the workspace.
  std::ifstream header_file(P("small_cnn.h"));
  const std::string header((std::istreambuf_iterator<char>(header_file)), std::istreambuf_iterator<char>());
  const size_t output = header.find("  SMALL_CNN_LOGITS = ");
  ASSERT_NE(output, std::string::npos) << header;
  const std::string line = header.substr(output, header.find('\n', output) - output);
  EXPECT_NE(line.find("/* output "), std::string::npos) << line;
  EXPECT_EQ(line.find("workspace"), std::string::npos) << line;

  // Without the option the same model asks the caller for every weight.
  void* plain = Build("small_cnn", "plain", "");
  ASSERT_NE(plain, nullptr);
  auto plain_weights = reinterpret_cast<int (*)()>(dlsym(plain, "caller_weights"));
  ASSERT_NE(plain_weights, nullptr);
  std::set<std::string> read;  // the weights the kernels read (a Reshape's shape is no slot)
  for (const frontend::ModelTask& t : m->tasks) {
    for (const frontend::TaskCall& call : t.calls) {
      for (const std::string& in : call.inputs) {
        const frontend::ModelTensor* storage = m->Tensor(m->Tensor(in)->storage);
        if (storage->kind == frontend::ModelTensor::Kind::kWeight) read.insert(storage->name);
      }
    }
  }
  EXPECT_GT(read.size(), 0u);
  EXPECT_EQ(plain_weights(), int(read.size()));
}

// A record for `task` whose schedule copies the weights its block `block`
// reads (read 1) into panels of `factor` along dimension 0: a prepack split
// (as compile_model_test.cpp commits them).
Status CommitPackingRecord(database::Database& db, const Workload& task, const std::string& block, int64_t factor) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(task));
  Schedule sch(f, 1);
  TF_ASSIGN_OR_RETURN(BlockRV anchor, sch.GetBlock(block));
  TF_ASSIGN_OR_RETURN(BlockRV copy, sch.CacheRead(anchor, 1, ir::MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(copy, 0, factor, 0));
  TF_RETURN_IF_ERROR(db.CommitWorkload({StructuralHashHex(task), task.name, PrintWorkload(task)}));
  database::TuningRecord r;
  r.workload_hash = StructuralHashHex(task);
  r.target.target = Target::Host().ToString();
  r.target.fingerprint = HostFingerprint(Target::Host(), CodegenToolchain());
  database::CanonicalizeFingerprint(&r.target.fingerprint);
  r.trace = sch.trace().ToText();
  r.run_secs = {2e-6, 2e-6};
  return db.CommitRecord(r).status();
}

TEST_F(CompileModelMemoryTest, PackedWeightsOfEmbeddedWeightsLiveInTheWorkspace) {
  auto m = frontend::ImportOnnx(Model("small_cnn.onnx"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  {
    auto db = database::Database::Open(P("log.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    int committed = 0;
    for (const frontend::ModelTask& t : m->tasks) {
      if (t.workload.name != "small_cnn_dense_m1_n10_k16") continue;
      ASSERT_TRUE(CommitPackingRecord(**db, t.workload, "acc", 5).ok());
      ++committed;
    }
    ASSERT_EQ(committed, 1);
  }
  void* lib = Build("small_cnn", "tuned", "--embed-weights --db " + P("log.db"));
  ASSERT_NE(lib, nullptr);
  std::ifstream header_file(P("tuned.h"));
  const std::string header((std::istreambuf_iterator<char>(header_file)), std::istreambuf_iterator<char>());
  const size_t packed = header.find("SMALL_CNN_PACKED_0 = ");
  ASSERT_NE(packed, std::string::npos) << header;
  const std::string line = header.substr(packed, header.find('\n', packed) - packed);
  EXPECT_NE(line.find("640 bytes at workspace + "), std::string::npos) << line;
  auto input = ReadTensorBytes(Model("small_cnn.input.pb"));
  auto logits = ReadTensorBytes(Model("small_cnn.logits.pb"));
  ASSERT_TRUE(input.ok() && logits.ok());
  Context c;
  c.values["input"] = *input;
  auto drive = reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
  ASSERT_NE(drive, nullptr);
  ASSERT_EQ(drive(&LookUp, &Store, &c), 0);
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
}

}  // namespace
}  // namespace tunefarm::cli_test
