// The compile header and object of a kernel whose constant input is packed
// ahead (split_prepack.h): the header declares the prepack and prepacked
// entries next to the whole one, and a program linking the object calls
// them as a user's inference loop would -- checked against the interpreter.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "../compiler/schedule_test_util.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

// B packed into panels [N/16, K, 16] at the root: the prepack entry's work.
Result<ir::PrimFunc> PanelSchedule(const Workload& w) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerToPrimFunc(w));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(copy, 1, 16, 0));
  return sch.func();
}

TEST(KernelHeaderTest, DeclaresThePrepackEntriesAndTheyRunFromALinkedObject) {
  auto w = ParseWorkload(testing::kConstMatmul);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = PanelSchedule(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::string header = KernelHeaderText(*w, *f, Target::Host(), "test schedule", 0);
  EXPECT_NE(header.find("int32_t mm(\n"), std::string::npos) << header;
  EXPECT_NE(header.find("const float* B  /* constant input f32[12][32] */"), std::string::npos) << header;
  EXPECT_NE(header.find("int32_t mm_prepack(\n    const float* B  /* constant input f32[12][32] */,\n"
                        "    float* B_global  /* output f32[2][12][16] */);"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("const float* B_global  /* packed f32[2][12][16] */);"), std::string::npos) << header;
  EXPECT_NE(header.find("(1536 bytes)"), std::string::npos) << header;
  std::string tuned = KernelHeaderText(*w, *f, Target::Host(), "tuned", 42);
  EXPECT_NE(tuned.find("measured time is of mm_prepacked"), std::string::npos) << tuned;
  EXPECT_EQ(header.find("measured time"), std::string::npos) << header;

  // The object a user links: all three entries.
  auto object = EmitObject(*f, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  fs::path dir = fs::temp_directory_path() / ("tunefarm_kernel_header_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct RemoveDir {
    fs::path path;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_dir{dir};
  std::ofstream((dir / "mm.o").string(), std::ios::binary) << *object;
  std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
  std::string link = "cc -shared -o " + (dir / "mm.so").string() + " " + (dir / "mm.o").string() + " -L" + runtime +
                     " -ltunefarm_runtime -Wl,-rpath," + runtime + " -lm";
  ASSERT_EQ(std::system(link.c_str()), 0) << link;
  void* lib = dlopen((dir / "mm.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Prepack = int32_t (*)(const float*, float*);
  using Prepacked = int32_t (*)(const float*, const float*, float*, const float*);
  auto prepack = reinterpret_cast<Prepack>(dlsym(lib, "mm_prepack"));
  auto prepacked = reinterpret_cast<Prepacked>(dlsym(lib, "mm_prepacked"));
  ASSERT_NE(prepack, nullptr);
  ASSERT_NE(prepacked, nullptr);
  ASSERT_NE(dlsym(lib, "mm"), nullptr);

  HostBuffer a(ir::DataType::Float(32), {8, 12}), b(ir::DataType::Float(32), {12, 32});
  HostBuffer c(ir::DataType::Float(32), {8, 32}), c_ref(ir::DataType::Float(32), {8, 32});
  HostBuffer panels(ir::DataType::Float(32), {2, 12, 16});
  std::mt19937_64 rng(5);
  b.FillRandom(rng);
  ASSERT_EQ(prepack(b.as<float>(), panels.as<float>()), 0);
  // Several calls with new activations on the same packed weights.
  for (int round = 0; round < 3; ++round) {
    a.FillRandom(rng);
    ASSERT_EQ(prepacked(a.as<float>(), b.as<float>(), c.as<float>(), panels.as<float>()), 0);
    ASSERT_TRUE(Interpret(*f, {&a, &b, &c_ref}).ok());
    CompareResult cmp = CompareBuffers(c, c_ref, 1e-5, 1e-5);
    EXPECT_TRUE(cmp.equal) << "round " << round << ": " << cmp.message;
  }
  dlclose(lib);
}

}  // namespace
}  // namespace tunefarm::tuner
