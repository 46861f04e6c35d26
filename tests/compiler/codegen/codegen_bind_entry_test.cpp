// A compiled model's bind entry (bind_entry.h): it points slots at the
// object's embedded constants (their bytes exactly, 64-byte aligned) and into
// the caller's workspace, leaves every other slot alone, and its name may not
// be another entry's.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../codegen_test_util.h"
#include "tunefarm/compiler/codegen/llvm/bind_entry.h"

namespace tunefarm {
namespace {

using namespace ir;  // NOLINT
namespace fs = std::filesystem;

// out[i] = A[i] + B[i] over 16 f32.
PrimFunc Add(const std::string& name) {
  Var i("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {16}), b = MakeBuffer("B", DataType::Float(32), {16}),
         out = MakeBuffer("out", DataType::Float(32), {16});
  PrimFunc f;
  f.name = name;
  f.params = {a, b, out};
  f.num_inputs = 2;
  f.body = For::Make(i, Expr(0), Expr(16), ForKind::kSerial,
                     Store::Make(out, Load::Make(a, {i}) + Load::Make(b, {i}), {i}));
  return f;
}

// The object linked with the runtime into a library and loaded; null when that fails.
void* Load(const std::string& object, const fs::path& dir) {
  fs::create_directories(dir);
  const std::string o = (dir / "k.o").string(), so = (dir / "k.so").string();
  std::ofstream(o, std::ios::binary).write(object.data(), std::streamsize(object.size()));
  const std::string runtime_dir = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
  const std::string cmd = "cc -shared -o '" + so + "' '" + o + "' -L'" + runtime_dir +
                          "' -ltunefarm_runtime -Wl,-rpath,'" + runtime_dir + "' -lm";
  return std::system(cmd.c_str()) == 0 ? dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
}

TEST(BindEntryTest, SlotsPointAtTheEmbeddedBytesAndIntoTheWorkspace) {
  // Slots: 0 A (caller), 1 B (embedded), 2 middle (workspace + 64), 3 out (caller), 4 unused (workspace + 0).
  std::vector<float> b(16);
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * float(i) - 1.0f;
  auto bytes = std::make_shared<const std::string>(reinterpret_cast<const char*>(b.data()), b.size() * sizeof(float));
  auto odd = std::make_shared<const std::string>("xyz");  // 3 bytes: its own alignment still 64
  BindEntry bind{"m_bind", {{1, bytes}, {5, odd}}, {{2, 64}, {4, 0}}};
  SequenceEntry run{"m_run", {{"add", {0, 1, 2}}, {"add", {2, 1, 3}}}};
  auto object = EmitCombinedObjectWithBind({Add("add")}, {run}, bind, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  const fs::path dir = fs::temp_directory_path() / ("tunefarm_bind_" + std::to_string(::getpid()));
  void* lib = Load(*object, dir);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto bind_fn = reinterpret_cast<int32_t (*)(void**, void*)>(dlsym(lib, "m_bind"));
  auto run_fn = reinterpret_cast<int32_t (*)(void* const*)>(dlsym(lib, "m_run"));
  ASSERT_TRUE(bind_fn != nullptr && run_fn != nullptr);
  EXPECT_EQ(dlsym(lib, "m_bind.constant.1"), nullptr);  // the data is the object's own

  alignas(64) unsigned char workspace[192];
  std::vector<float> a(16, 2.0f), out(16, -7.0f);
  int sentinel = 0;
  void* slots[7] = {a.data(), nullptr, nullptr, out.data(), nullptr, nullptr, &sentinel};
  ASSERT_EQ(bind_fn(slots, workspace), 0);
  EXPECT_EQ(slots[0], a.data());
  EXPECT_EQ(slots[3], out.data());
  EXPECT_EQ(slots[6], &sentinel);
  EXPECT_EQ(slots[2], workspace + 64);
  EXPECT_EQ(slots[4], workspace + 0);
  ASSERT_NE(slots[1], nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(slots[1]) % 64, 0u);
  EXPECT_EQ(std::memcmp(slots[1], bytes->data(), bytes->size()), 0);
  ASSERT_NE(slots[5], nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(slots[5]) % 64, 0u);
  EXPECT_EQ(std::memcmp(slots[5], "xyz", 3), 0);
  ASSERT_EQ(run_fn(slots), 0);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_FLOAT_EQ(out[i], 2.0f + 2.0f * b[i]) << i;
  dlclose(lib);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(BindEntryTest, ItsNameMayNotBeAnotherEntrys) {
  SequenceEntry run{"m_run", {{"add", {0, 1, 2}}}};
  for (const char* taken : {"add", "add_packed", "m_run"}) {
    auto object = EmitCombinedObjectWithBind({Add("add")}, {run}, BindEntry{taken, {}, {}}, Target::Host());
    EXPECT_EQ(object.status().code(), StatusCode::kInvalidArgument) << taken;
  }
  EXPECT_EQ(EmitCombinedObjectWithBind({}, {}, BindEntry{"b", {}, {}}, Target::Host()).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefarm
