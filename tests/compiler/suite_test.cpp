// The operator suite end to end: every workload under configs/workloads/
// compiles with the LLVM backend, JIT and object file alike, at its real
// shape; the two agree; and a shrunk copy of it matches the reference
// interpreter through both paths.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

// Interpreting more than this takes seconds; shrunk copies stay below it.
constexpr double kInterpreterBudgetFlops = 3e6;
// Running the untuned default schedule of bigger workloads takes too long for a unit test.
constexpr double kFullSizeRunBudgetFlops = 4e9;

std::vector<std::string> SuiteFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tf") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// An object file linked into a shared library with the runtime and loaded.
class LoadedObject {
 public:
  static std::unique_ptr<LoadedObject> Load(const std::string& object_bytes, const std::string& name) {
    auto lo = std::unique_ptr<LoadedObject>(new LoadedObject());
    lo->dir_ = fs::temp_directory_path() / ("tunefarm_suite_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(lo->dir_);
    std::string obj = (lo->dir_ / (name + ".o")).string();
    std::string so = (lo->dir_ / (name + ".so")).string();
    std::ofstream(obj, std::ios::binary).write(object_bytes.data(), std::streamsize(object_bytes.size()));
    std::string runtime_dir = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    std::string cmd = "cc -shared -o '" + so + "' '" + obj + "' -L'" + runtime_dir + "' -ltunefarm_runtime -Wl,-rpath,'" +
                      runtime_dir + "' -lm";
    if (std::system(cmd.c_str()) != 0) return nullptr;
    lo->handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lo->handle_) return nullptr;
    lo->packed_ = reinterpret_cast<int32_t (*)(void**)>(dlsym(lo->handle_, (name + "_packed").c_str()));
    if (!lo->packed_) return nullptr;
    return lo;
  }
  ~LoadedObject() {
    if (handle_) dlclose(handle_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  int32_t Run(std::vector<void*> args) const { return packed_(args.data()); }

 private:
  LoadedObject() = default;
  fs::path dir_;
  void* handle_ = nullptr;
  int32_t (*packed_)(void**) = nullptr;
};

std::vector<HostBuffer> Arguments(const ir::PrimFunc& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostBuffer> out;
  for (size_t i = 0; i < f.params.size(); ++i) {
    out.push_back(HostBuffer::Like(f.params[i]));
    if (i < f.num_inputs) out.back().FillRandom(rng);
  }
  return out;
}

std::vector<void*> Pointers(std::vector<HostBuffer>& bufs) {
  std::vector<void*> p;
  for (auto& b : bufs) p.push_back(b.data());
  return p;
}

void ExpectOutputsMatch(const ir::PrimFunc& f, const std::vector<HostBuffer>& actual,
                        const std::vector<HostBuffer>& expected, const char* what, double tol) {
  for (size_t i = f.num_inputs; i < f.params.size(); ++i) {
    CompareResult r = CompareBuffers(actual[i], expected[i], tol, tol);
    EXPECT_TRUE(r.equal) << what << ", output " << f.params[i]->name << ": " << r.message;
  }
}

class SuiteTest : public ::testing::TestWithParam<std::string> {};

TEST(SuiteFilesTest, SuiteHasTheRequiredWorkloads) {
  std::vector<std::string> files = SuiteFiles();
  ASSERT_GE(files.size(), 14u) << "configs/workloads/ is missing workloads";
  for (const char* required : {"gmm_1024.tf", "c2d_resnet_3x3.tf", "dep_3x3_c256_28.tf", "dense_bias_relu.tf"}) {
    bool found = std::any_of(files.begin(), files.end(),
                             [&](const std::string& f) { return fs::path(f).filename() == required; });
    EXPECT_TRUE(found) << required;
  }
}

TEST_P(SuiteTest, FullSizeJitAndObjectCompileAndAgree) {
  const std::string path = GetParam();
  auto w = ParseWorkloadFile(path);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto jit = JitCompile(*f, Target::Host());
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto object = EmitObject(*f, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  ASSERT_GT(object->size(), 64u);
  EXPECT_EQ(object->substr(0, 4), "\x7f" "ELF");
  if (w->Flops() > kFullSizeRunBudgetFlops) {
    GTEST_LOG_(INFO) << w->name << ": " << w->Flops() / 1e9 << " GFLOP, compiled but not run at full size";
    return;
  }
  auto loaded = LoadedObject::Load(*object, f->name);
  ASSERT_NE(loaded, nullptr) << "linking or loading the object of " << f->name << " failed";
  std::vector<HostBuffer> from_jit = Arguments(*f, 7), from_object = Arguments(*f, 7);
  ASSERT_TRUE((*jit)->Run(Pointers(from_jit)).ok());
  ASSERT_EQ(loaded->Run(Pointers(from_object)), 0);
  ExpectOutputsMatch(*f, from_object, from_jit, "object vs JIT at full size", 1e-6);
}

TEST_P(SuiteTest, ShrunkCopyMatchesTheInterpreterThroughJitAndObject) {
  const std::string path = GetParam();
  auto w = ShrinkWorkload(ReadFile(path), path, {}, kInterpreterBudgetFlops);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (uint64_t seed : {1u, 2u}) {
    std::vector<HostBuffer> reference = Arguments(*f, seed);
    std::vector<HostBuffer*> ref_ptrs;
    for (auto& b : reference) ref_ptrs.push_back(&b);
    Status st = Interpret(*f, ref_ptrs);
    ASSERT_TRUE(st.ok()) << st.ToString();

    auto jit = JitCompile(*f, Target::Host());
    ASSERT_TRUE(jit.ok()) << jit.status().ToString();
    std::vector<HostBuffer> from_jit = Arguments(*f, seed);
    ASSERT_TRUE((*jit)->Run(Pointers(from_jit)).ok());
    ExpectOutputsMatch(*f, from_jit, reference, "JIT vs interpreter", 1e-3);

    auto object = EmitObject(*f, Target::Host());
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    auto loaded = LoadedObject::Load(*object, f->name);
    ASSERT_NE(loaded, nullptr);
    std::vector<HostBuffer> from_object = Arguments(*f, seed);
    ASSERT_EQ(loaded->Run(Pointers(from_object)), 0);
    ExpectOutputsMatch(*f, from_object, reference, "object vs interpreter", 1e-3);
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string stem = fs::path(info.param).stem().string();
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return stem;
}

INSTANTIATE_TEST_SUITE_P(Workloads, SuiteTest, ::testing::ValuesIn(SuiteFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SuiteTest);

}  // namespace
}  // namespace tunefarm
