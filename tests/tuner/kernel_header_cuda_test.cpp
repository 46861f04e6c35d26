// The header of a cuda kernel (kernel_header.h): its host launcher, built
// as C and as C++ with warnings as errors against <cuda.h>, drives a
// stand-in driver exactly as the module says (each launch's function, grid,
// block, dynamic shared memory and buffer addresses, workspaces carved from
// the one workspace pointer, the module loaded once); and BuildKernel for a
// cuda target (NVRTC where there is one) returns a cubin holding the kernels
// the header launches, looks records up as a GPU's, and refuses a shared
// library before compiling anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "../run_command.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/kernel_build.h"
#include "tunefarm/worker/cuda_device.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

constexpr char kMatmul[] =
    "workload mm(M = 64, N = 48, K = 32) {\n"
    "  A = input f32[M, K]\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";

// The folder holding cuda.h ($CUDA_HOME's, else /usr/local/cuda's), or "".
std::string CudaIncludeDir() {
  for (std::string home : {std::string(std::getenv("CUDA_HOME") ? std::getenv("CUDA_HOME") : ""),
                           std::string("/usr/local/cuda")}) {
    if (!home.empty() && fs::exists(home + "/include/cuda.h")) return home + "/include";
  }
  return "";
}

// A stand-in for the driver functions the launcher calls: each prints what
// it was given (a launch: its function's name, shape, stream and the device
// addresses its arguments point to -- `args` of them per kernel name).
std::string FakeDriverSource(const std::map<std::string, int>& args) {
  std::string table;
  for (const auto& [kernel, count] : args) table += "{\"" + kernel + "\", " + std::to_string(count) + "},";
  return R"(#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
static const std::map<std::string, int> kArgs = {)" + table + R"(};
static int loaded = 0;
extern "C" {
CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  std::printf("load %.3s\n", static_cast<const char*>(image) + 1);
  *module = reinterpret_cast<CUmodule>(&loaded);
  ++loaded;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  if (kArgs.count(name) == 0) return CUDA_ERROR_NOT_FOUND;
  *f = reinterpret_cast<CUfunction>(new std::string(name));
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  std::printf("attribute %s %d %d\n", reinterpret_cast<std::string*>(f)->c_str(), int(attribute), value);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { std::printf("unload\n"); return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void** extra) {
  const std::string& name = *reinterpret_cast<std::string*>(f);
  std::printf("launch %s grid %u %u %u block %u %u %u shared %u stream %llx args", name.c_str(), gx, gy, gz, bx, by,
              bz, shared, (unsigned long long)(uintptr_t)stream);
  for (int i = 0; i < kArgs.at(name); ++i) std::printf(" %llx", (unsigned long long)*static_cast<uintptr_t*>(params[i]));
  std::printf("%s\n", extra == nullptr ? "" : " extra");
  return CUDA_SUCCESS;
}
}
)";
}

class CudaHeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_cuda_header_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(P(name)) << text; }

  // Builds host.c (which includes the header, written as `header_name`) as
  // C99 and as C++ with -Wall -Wextra -Werror, links the C build with the
  // fake driver and runs it; returns what it printed.
  std::string BuildAndRun(const std::string& include_dir, const std::string& host,
                          const std::map<std::string, int>& args) {
    Write("host.c", host);
    Write("fake_driver.cc", FakeDriverSource(args));
    const std::string inc = " -I" + include_dir + " -I" + dir_.string();
    auto c = testing_support::RunCommand("cc -std=c99 -Wall -Wextra -Werror" + inc + " -c " + P("host.c") + " -o " +
                                         P("host.o"));
    EXPECT_EQ(c.code, 0) << c.text;
    auto cxx = testing_support::RunCommand("c++ -std=c++17 -Wall -Wextra -Werror -x c++" + inc + " -c " + P("host.c") +
                                           " -o " + P("host_cxx.o"));
    EXPECT_EQ(cxx.code, 0) << cxx.text;
    auto link = testing_support::RunCommand("c++ -std=c++17" + inc + " " + P("fake_driver.cc") + " " + P("host.o") +
                                            " -o " + P("host"));
    EXPECT_EQ(link.code, 0) << link.text;
    auto run = testing_support::RunCommand(P("host"));
    EXPECT_EQ(run.code, 0) << run.text;
    return run.text;
  }

  fs::path dir_;
};

// A module with what a header must handle beyond one plain kernel: two
// launches, dynamic shared memory, two workspaces and arguments out of
// param order.
TEST_F(CudaHeaderTest, TheLauncherDrivesTheDriverAsTheModuleSays) {
  const std::string include_dir = CudaIncludeDir();
  if (include_dir.empty()) GTEST_SKIP() << "no cuda.h here (neither $CUDA_HOME/include nor /usr/local/cuda/include)";
  auto w = ParseWorkload(kMatmul);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  cuda::CudaModule module;
  module.name = "mm";
  module.buffers = {{"A", ir::DataType::Float(32), 64 * 32, 0},
                    {"B", ir::DataType::Float(32), 32 * 48, 1},
                    {"C", ir::DataType::Float(32), 64 * 48, 2},
                    {"A_pad", ir::DataType::Float(32), 100, -1},  // 400 bytes: the next one starts at 512
                    {"B_pad", ir::DataType::Float(32), 10, -1}};
  cuda::CudaLaunch first;
  first.kernel = "mm_kernel0";
  first.grid = {4, 2, 1};
  first.block = {32, 4, 1};
  first.buffers = {0, 3};
  cuda::CudaLaunch second;
  second.kernel = "mm_kernel1";
  second.grid = {12, 1, 1};
  second.block = {128, 1, 1};
  second.dynamic_shared_bytes = 65536;
  second.buffers = {3, 1, 4, 2};
  module.launches = {first, second};
  const std::string cubin = std::string("\x7f" "ELF", 4) + std::string("\0\x01\xff", 3) + "mm_kernel0 mm_kernel1";
  const Target target = *Target::Parse("cuda -arch=sm_90");
  std::string header = CudaLauncherHeaderText(*w, *f, module, cubin, target, "test schedule", 7);
  Write("mm.h", header);

  EXPECT_NE(header.find("CUresult mm_launch(CUstream stream,\n    const float* A  /* input f32[64][32] */,\n"
                        "    const float* B  /* input f32[32][48] */,\n    float* C  /* output f32[64][48] */,\n"
                        "    void* workspace"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("#define MM_LAUNCH1_GRID_X 12\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_LAUNCH0_BLOCK_Y 4\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_LAUNCH1_DYNAMIC_SHARED_BYTES 65536\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_WORKSPACE_BYTES ((size_t)768)\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_CUDA_ARCH \"sm_90\"\n"), std::string::npos) << header;
  EXPECT_NE(header.find(" * record id: 7\n"), std::string::npos) << header;
  EXPECT_NE(header.find("-lcuda"), std::string::npos) << header;
  EXPECT_NE(header.find("0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0xff, 0x6d,"), std::string::npos) << header;

  const std::string output = BuildAndRun(include_dir, R"(#include "mm.h"
#include <stdio.h>
int main(void) {
  const float* a = (const float*)0x1000;
  const float* b = (const float*)0x2000;
  float* c = (float*)0x3000;
  void* workspace = (void*)0x100000;
  if (mm_launch((CUstream)0x77, a, b, c, NULL) != CUDA_ERROR_INVALID_VALUE) return 1;
  if (mm_launch((CUstream)0x77, a, b, c, workspace) != CUDA_SUCCESS) return 2;
  if (mm_launch(0, a, b, c, workspace) != CUDA_SUCCESS) return 3;
  if (mm_unload() != CUDA_SUCCESS) return 4;
  printf("workspace %d launches %d\n", (int)mm_workspace_bytes, MM_NUM_LAUNCHES);
  return 0;
}
)",
                                             {{"mm_kernel0", 2}, {"mm_kernel1", 4}});
  // Loaded once (by the call the NULL workspace refused), opted in to its
  // dynamic shared memory, the launches in order with each buffer's address.
  EXPECT_EQ(output,
            "load ELF\n"
            "attribute mm_kernel1 8 65536\n"
            "launch mm_kernel0 grid 4 2 1 block 32 4 1 shared 0 stream 77 args 1000 100000\n"
            "launch mm_kernel1 grid 12 1 1 block 128 1 1 shared 65536 stream 77 args 100000 2000 100200 3000\n"
            "launch mm_kernel0 grid 4 2 1 block 32 4 1 shared 0 stream 0 args 1000 100000\n"
            "launch mm_kernel1 grid 12 1 1 block 128 1 1 shared 65536 stream 0 args 100000 2000 100200 3000\n"
            "unload\n"
            "workspace 768 launches 2\n");
}

// The real thing: BuildKernel with no record for cuda builds the default GPU
// program, and its header launches what the cubin holds.
TEST_F(CudaHeaderTest, TheDefaultGpuProgramsCubinHoldsWhatItsHeaderLaunches) {
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) GTEST_SKIP() << "no NVRTC here: " << why_not;
  auto w = ParseWorkload(kMatmul);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const Target target = *Target::Parse("cuda -arch=sm_90");
  KernelBuildStage stage = KernelBuildStage::kLower;
  auto kernel = BuildKernelFromLog(*w, target, nullptr, KernelBuildOptions(), &stage);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_EQ(kernel->symbol, "mm_launch");
  EXPECT_EQ(kernel->binary.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(kernel->object_size, kernel->binary.size());
  EXPECT_NE(kernel->schedule_description.find("default GPU program"), std::string::npos);
  EXPECT_NE(kernel->header.find("default GPU program (untuned)"), std::string::npos) << kernel->header;

  // What the default GPU program is, generated here on its own.
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  auto bound = DefaultGpuSchedule(*f);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  auto lowered = cuda::LowerForCuda(*bound);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_EQ(module->launches.size(), 1u);
  const cuda::CudaLaunch& l = module->launches[0];
  EXPECT_NE(kernel->binary.find(l.kernel), std::string::npos) << l.kernel;
  EXPECT_NE(kernel->header.find("#define MM_LAUNCH0_BLOCK_X " + std::to_string(l.block[0]) + "\n"), std::string::npos)
      << kernel->header;
  EXPECT_NE(kernel->header.find("#define MM_LAUNCH0_GRID_X " + std::to_string(l.grid[0]) + "\n"), std::string::npos)
      << kernel->header;
  EXPECT_EQ(kernel->header.find("workspace"), std::string::npos) << "mm has no workspace\n" << kernel->header;

  const std::string include_dir = CudaIncludeDir();
  if (include_dir.empty()) GTEST_SKIP() << "no cuda.h here to build the header against";
  Write("mm.h", kernel->header);
  const std::string output = BuildAndRun(include_dir, R"(#include "mm.h"
int main(void) {
  return mm_launch(0, (const float*)0xa000, (const float*)0xb000, (float*)0xc000) == CUDA_SUCCESS ? 0 : 1;
}
)",
                                             {{l.kernel, int(l.buffers.size())}});
  // The whole cubin was embedded: its ELF magic reached cuModuleLoadData.
  EXPECT_EQ(output, "load ELF\nlaunch " + l.kernel + " grid " + std::to_string(l.grid[0]) + " " +
                        std::to_string(l.grid[1]) + " " + std::to_string(l.grid[2]) + " block " +
                        std::to_string(l.block[0]) + " " + std::to_string(l.block[1]) + " " +
                        std::to_string(l.block[2]) + " shared 0 stream 0 args a000 b000 c000\n");
}

TEST(KernelBuildCudaTest, ASharedLibraryIsRefusedBeforeAnythingIsCompiled) {
  auto w = ParseWorkload(kMatmul);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  KernelBuildOptions options;
  options.shared = true;
  KernelBuildStage stage = KernelBuildStage::kLower;
  // Refused without NVRTC too: nothing is compiled first.
  auto kernel = BuildKernelFromLog(*w, *Target::Parse("cuda -arch=sm_90"), nullptr, options, &stage);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(stage, KernelBuildStage::kLink);
  EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kernel.status().message().find("a cuda target builds a cubin and a launcher header"), std::string::npos)
      << kernel.status().message();
}

// Records of a cuda target are the GPU's: looked up by its architecture,
// named with the toolchain the cuda worker measures with.
TEST(KernelBuildCudaTest, CudaRecordsAreLookedUpAsTheGpusArchitecture) {
  database::Target t = KernelRecordTarget(*Target::Parse("cuda -arch=sm_80"), std::nullopt);
  EXPECT_EQ(t.target, "cuda -arch=sm_80");
  EXPECT_EQ(t.fingerprint.isa, "cuda");
  EXPECT_EQ(t.fingerprint.arch, "sm_80");
  EXPECT_EQ(t.fingerprint.toolchain, CudaToolchain());
  EXPECT_EQ(CudaKernelToolchain(), CudaToolchain());
}

TEST(KernelHeaderTest, AKindWithoutAHeaderIsInvalidArgument) {
  auto w = ParseWorkload(kMatmul);
  ASSERT_TRUE(w.ok());
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  Target other;
  other.kind = "rocm";
  auto header = KernelHeaderFor(*w, *f, other, "", "default", 0);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(header.status().message().find("'rocm'"), std::string::npos) << header.status().message();
}

}  // namespace
}  // namespace tunefarm::tuner
