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

#include "compile_model_util.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::cli_test {
namespace {

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

// A context holding the weights the .onnx file's initializers give (those
// the caller fills); the import must have read the weights.
Context FileInitializers(const frontend::Model& m) {
  Context c;
  for (const auto& [name, t] : m.tensors) {
    if (t.initializer && t.storage == name) c.values[name] = AsBytes(m.weights.at(name));
  }
  return c;
}

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

using DriveFn = int (*)(const void* (*)(void*, const char*), void (*)(void*, const char*, const void*, int64_t),
                        void*);
using CountFn = int64_t (*)();

class CompileModelMemoryTest : public CompiledModelTest {
 protected:
  CompileModelMemoryTest() : CompiledModelTest("tf_compile_model_memory_") {}

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
    return LinkDriver(driver, P(stem + ".o"), stem);
  }

  // The driver of `lib` run on `c`: its return code, or -100 (after a
  // failed expectation) where `lib` has no drive entry.
  static int Drive(void* lib, Context* c) {
    auto drive = reinterpret_cast<DriveFn>(dlsym(lib, "drive"));
    EXPECT_NE(drive, nullptr);
    return drive == nullptr ? -100 : drive(&LookUp, &Store, c);
  }
};

TEST_F(CompileModelMemoryTest, AFoldedConstantIsEmbeddedAndTheCallerFillsOnlyTheFilesInitializers) {
  auto m = ImportWithWeights("small_embedder.onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // The position embeddings are a Gather of a table by constant ids, folded at import: no initializer holds them.
  const frontend::ModelTensor* folded = m->Tensor("embeddings.position_output");
  ASSERT_NE(folded, nullptr);
  ASSERT_EQ(folded->kind, frontend::ModelTensor::Kind::kWeight);
  ASSERT_FALSE(folded->initializer);

  void* lib = Build("small_embedder", "small_embedder", "");
  ASSERT_NE(lib, nullptr);
  const std::string header = ReadText("small_embedder.h");
  EXPECT_NE(header.find("448 bytes, embedded: embeddings.position_output */"), std::string::npos) << header;
  EXPECT_NE(header.find("int32_t small_embedder_bind(void** slots, void* workspace);"), std::string::npos) << header;

  Context c = FileInitializers(*m);
  auto ids = ReadTensorBytes(Model("small_embedder.input_ids.pb"));
  auto logits = ReadTensorBytes(Model("small_embedder.logits.pb"));
  auto picked = ReadTensorBytes(Model("small_embedder.picked.pb"));
  ASSERT_TRUE(ids.ok() && logits.ok() && picked.ok());
  c.values["input_ids"] = *ids;
  ASSERT_EQ(Drive(lib, &c), 0);
  EXPECT_EQ(c.looked_up.count("embeddings.position_output"), 0u);
  EXPECT_EQ(c.looked_up.count("word_table"), 1u);
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
  EXPECT_LT(WorstError(c.outputs["picked"], AsFloats(*picked)), 1e-4);

  // The check can fail: other word embeddings, other logits.
  for (char& byte : c.values.at("word_table")) byte = char(byte ^ 0x40);
  ASSERT_EQ(Drive(lib, &c), 0);
  EXPECT_GT(WorstError(c.outputs["logits"], AsFloats(*logits)), 0.01);
}

TEST_F(CompileModelMemoryTest, AConstantOfShapeFoldedAtImportIsEmbeddedToo) {
  auto m = ImportWithWeights("small_detector.onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  void* lib = Build("small_detector", "small_detector", "");
  ASSERT_NE(lib, nullptr);
  const std::string header = ReadText("small_detector.h");
  EXPECT_NE(header.find("16 bytes, embedded: head1.ones_output */"), std::string::npos) << header;
  Context c = FileInitializers(*m);
  auto input = ReadTensorBytes(Model("small_detector.input.pb"));
  auto boxes = ReadTensorBytes(Model("small_detector.boxes.pb"));
  auto features = ReadTensorBytes(Model("small_detector.features.pb"));
  ASSERT_TRUE(input.ok() && boxes.ok() && features.ok());
  c.values["input"] = *input;
  ASSERT_EQ(Drive(lib, &c), 0);
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
  ASSERT_EQ(Drive(lib, &c), 0);
  EXPECT_EQ(c.looked_up, std::set<std::string>{"input"});
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
  // The object holds the weights: it is larger than their bytes.
  auto m = ImportWithWeights("small_cnn.onnx");
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
  const std::string header = ReadText("small_cnn.h");
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
  const std::string header = ReadText("tuned.h");
  const size_t packed = header.find("SMALL_CNN_PACKED_0 = ");
  ASSERT_NE(packed, std::string::npos) << header;
  const std::string line = header.substr(packed, header.find('\n', packed) - packed);
  EXPECT_NE(line.find("640 bytes at workspace + "), std::string::npos) << line;
  auto input = ReadTensorBytes(Model("small_cnn.input.pb"));
  auto logits = ReadTensorBytes(Model("small_cnn.logits.pb"));
  ASSERT_TRUE(input.ok() && logits.ok());
  Context c;
  c.values["input"] = *input;
  ASSERT_EQ(Drive(lib, &c), 0);
  EXPECT_LT(WorstError(c.outputs["logits"], AsFloats(*logits)), 1e-4);
}

}  // namespace
}  // namespace tunefarm::cli_test
