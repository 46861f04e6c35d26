// `tunefarm compile --target "cuda -arch=sm_90"`: a cubin for the
// architecture and, beside it, a header with the host launcher, for the
// default GPU program and for a record added to the log by hand (a record
// of another architecture is not taken); the header builds in a host
// program with nvcc and g++; and the user errors: --shared, a header that
// would overwrite the cubin, and no NVRTC (NVRTC's folders hidden in a
// mount namespace where this machine has it), each writing nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "cli_test_util.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::Output;
using cli_test::RunTunefarm;

constexpr char kCuda[] = " --target 'cuda -arch=sm_90'";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// $CUDA_HOME/<rel>, else /usr/local/cuda/<rel>, when it exists; else "".
std::string CudaFile(const std::string& rel) {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string dir : {std::string(home ? home : ""), std::string("/usr/local/cuda")}) {
    if (!dir.empty() && fs::exists(dir + "/" + rel)) return dir + "/" + rel;
  }
  return "";
}

class CompileCudaTest : public cli_test::CliFolderTest {
 protected:
  CompileCudaTest() : CliFolderTest("tunefarm_cli_cuda_", 64, 48, 32) {}

  void SetUp() override {
    CliFolderTest::SetUp();
    std::string why_not;
    if (!cuda::NvrtcAvailable(&why_not)) GTEST_SKIP() << "no NVRTC here: " << why_not;
  }

  // A host program calling `call` (the launcher on null device pointers),
  // compiled only: by nvcc as CUDA C++ and by c++ against cuda.h.
  void ExpectHostProgramBuilds(const std::string& header, const std::string& call) {
    const std::string host = "#include \"" + header + "\"\nint main(void) {\n  CUdeviceptr none = 0;\n  return " +
                             call + " == CUDA_SUCCESS ? 0 : 1;\n}\n";
    std::ofstream(P("host.cu")) << host;
    std::ofstream(P("host.cpp")) << host;
    const std::string nvcc = CudaFile("bin/nvcc");
    if (nvcc.empty()) {
      std::cerr << "[ SKIPPED  ] nvcc: none in $CUDA_HOME/bin or /usr/local/cuda/bin\n";
    } else {
      Output built = testing_support::RunCommand(nvcc + " -c " + P("host.cu") + " -o " + P("host_nvcc.o"));
      EXPECT_EQ(built.code, 0) << built.text;
    }
    const std::string cuda_h = CudaFile("include/cuda.h");
    if (cuda_h.empty()) {
      std::cerr << "[ SKIPPED  ] c++: no cuda.h in $CUDA_HOME/include or /usr/local/cuda/include\n";
      return;
    }
    Output built = testing_support::RunCommand("c++ -Wall -Wextra -Werror -I" + fs::path(cuda_h).parent_path().string() +
                                               " -c " + P("host.cpp") + " -o " + P("host_cxx.o"));
    EXPECT_EQ(built.code, 0) << built.text;
  }

  // Commits a record of `w` with `trace` for `arch`, as a cuda worker on an
  // H100 (or another GPU of that arch) would; returns its id.
  int64_t CommitGpuRecord(const Workload& w, const std::string& trace, const std::string& arch, double seconds) {
    auto db = database::Database::Open(P("log.db"));
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return 0;
    EXPECT_TRUE((*db)->CommitWorkload({StructuralHashHex(w), w.name, PrintWorkload(w)}).ok());
    database::TuningRecord record;
    record.workload_hash = StructuralHashHex(w);
    record.target.target = "cuda -arch=" + arch;
    record.target.fingerprint.isa = "cuda";
    record.target.fingerprint.arch = arch;
    record.target.fingerprint.cores = 132;
    record.target.fingerprint.features = {"name=NVIDIA_H100_80GB_HBM3", "memory_mib=81000"};
    record.target.fingerprint.toolchain = "nvrtc lowering-r" + std::to_string(kLoweringRevision);
    record.trace = trace;
    record.run_secs = {seconds};
    record.worker = "test:gpu-0";
    record.device = "cuda-" + arch;
    auto id = (*db)->CommitRecord(record);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
};

// The trace of the default PrimFunc with every root nest bound to blocks of
// `threads` threads: a GPU program unlike the default one (256).
Result<std::string> BoundTrace(const Workload& w, int64_t threads) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  Schedule sch(f);
  TF_RETURN_IF_ERROR(BindUnboundLoops(sch, threads));
  return sch.trace().ToText();
}

TEST_F(CompileCudaTest, TheDefaultGpuProgramIsACubinAndALauncherHeader) {
  Output out = RunTunefarm("compile " + P("mm.tf") + kCuda + " -o " + P("mm.cubin"));
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("mm: no --db given; using the default GPU program (untuned)"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("wrote " + P("mm.cubin")), std::string::npos) << out.text;
  const std::string cubin = ReadFile(P("mm.cubin"));
  ASSERT_GT(cubin.size(), 52u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(uint8_t(cubin[18]) | (uint8_t(cubin[19]) << 8), 190) << "e_machine EM_CUDA";
  EXPECT_NE(cubin.find("mm_kernel0"), std::string::npos);
  // The header beside it, named as the cubin with .h.
  const std::string header = ReadFile(P("mm.h"));
  EXPECT_NE(header.find("CUresult mm_launch(CUstream stream,\n    const float* A"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_LAUNCH0_KERNEL \"mm_kernel0\"\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_LAUNCH0_BLOCK_X 256\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define MM_LAUNCH0_GRID_X 12\n"), std::string::npos) << header;  // 64 x 48 / 256
  EXPECT_NE(header.find("schedule: default GPU program (untuned)"), std::string::npos) << header;
  ExpectHostProgramBuilds("mm.h", "mm_launch(0, (const float*)none, (const float*)none, (float*)none)");

  // --header names it elsewhere.
  Output named = RunTunefarm("compile " + P("mm.tf") + kCuda + " -o " + P("k.cubin") + " --header " + P("launch.h"));
  ASSERT_EQ(named.code, 0) << named.text;
  EXPECT_NE(ReadFile(P("launch.h")).find("mm_launch("), std::string::npos);
  EXPECT_FALSE(fs::exists(P("k.h")));
}

// The suite's dense layer: the default GPU program, then a record added by
// hand for sm_90 (blocks of 128 threads) that compile takes; a faster one
// for sm_80 is no record for sm_90.
TEST_F(CompileCudaTest, DenseBiasReluWithAndWithoutARecord) {
  const std::string tf = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/dense_bias_relu.tf";
  auto w = ParseWorkloadFile(tf);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto trace = BoundTrace(*w, 128);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  CommitGpuRecord(*w, *trace, "sm_80", 1e-6);

  Output fallback = RunTunefarm("compile " + tf + kCuda + " --db " + P("log.db") + " -o " + P("dense.cubin"));
  ASSERT_EQ(fallback.code, 0) << fallback.text;
  EXPECT_NE(fallback.text.find("warning: no tuning record for this workload and target in " + P("log.db") +
                               "; using the default GPU program (untuned)"),
            std::string::npos)
      << fallback.text;
  std::string header = ReadFile(P("dense.h"));
  EXPECT_NE(header.find("#define DENSE_BIAS_RELU_LAUNCH0_BLOCK_X 256\n"), std::string::npos) << header;
  Output required = RunTunefarm("compile " + tf + kCuda + " --db " + P("log.db") + " -o " + P("r.cubin") +
                                " --require-tuned");
  EXPECT_EQ(required.code, 3) << required.text;
  EXPECT_FALSE(fs::exists(P("r.cubin")));

  const int64_t id = CommitGpuRecord(*w, *trace, "sm_90", 2e-4);
  ASSERT_GT(id, 0);
  Output tuned = RunTunefarm("compile " + tf + kCuda + " --db " + P("log.db") + " -o " + P("dense.cubin") +
                             " --require-tuned");
  ASSERT_EQ(tuned.code, 0) << tuned.text;
  EXPECT_NE(tuned.text.find("using record #" + std::to_string(id) + " (user log, same_arch match, 0.2000 ms measured "
                            "on sm_90)"),
            std::string::npos)
      << tuned.text;
  EXPECT_EQ(tuned.text.find("toolchain"), std::string::npos) << "the record's toolchain is this build's\n" << tuned.text;
  header = ReadFile(P("dense.h"));
  EXPECT_NE(header.find("record id: " + std::to_string(id) + "\n"), std::string::npos) << header;
  // Two root nests (the product, then bias and ReLU): two kernels of 128 threads.
  EXPECT_NE(header.find("#define DENSE_BIAS_RELU_NUM_LAUNCHES 2\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define DENSE_BIAS_RELU_LAUNCH0_BLOCK_X 128\n"), std::string::npos) << header;
  EXPECT_NE(header.find("#define DENSE_BIAS_RELU_LAUNCH1_BLOCK_X 128\n"), std::string::npos) << header;
  EXPECT_NE(header.find("const float* W  /* constant input f32[3072][768] */"), std::string::npos) << header;
  const std::string cubin = ReadFile(P("dense.cubin"));
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(cubin.find("dense_bias_relu_kernel0"), std::string::npos);
  EXPECT_NE(cubin.find("dense_bias_relu_kernel1"), std::string::npos);
  // The intermediate `acc` lives in global memory between the kernels: a
  // workspace of 128 x 3072 floats.
  EXPECT_NE(header.find("    void* workspace  /* dense_bias_relu_workspace_bytes of device memory */) {"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("#define DENSE_BIAS_RELU_WORKSPACE_BYTES ((size_t)1572864)\n"), std::string::npos) << header;
  ExpectHostProgramBuilds("dense.h", "dense_bias_relu_launch(0, (const float*)none, (const float*)none, "
                                     "(const float*)none, (float*)none, (void*)none)");
}

TEST_F(CompileCudaTest, SharedAndAHeaderOverwritingTheCubinAreUserErrors) {
  Output shared = RunTunefarm("compile " + P("mm.tf") + kCuda + " --shared -o " + P("mm.so"));
  EXPECT_EQ(shared.code, 1) << shared.text;
  EXPECT_NE(shared.text.find("error: --shared builds a library for this machine's CPU; a cuda target writes a cubin"),
            std::string::npos)
      << shared.text;
  Output same = RunTunefarm("compile " + P("mm.tf") + kCuda + " -o " + P("mm.h"));
  EXPECT_EQ(same.code, 1) << same.text;
  EXPECT_NE(same.text.find("are one file"), std::string::npos) << same.text;
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_)) files.insert(entry.path().filename().string());
  EXPECT_EQ(files, std::set<std::string>{"mm.tf"});
}

// Where NVRTC is, the test hides its folders in a mount namespace of its own
// (tmpfs over each), so that tunefarm finds none.
TEST(CompileCudaNoNvrtcTest, NoNvrtcIsAClearErrorAndWritesNothing) {
  const fs::path dir = fs::temp_directory_path() / ("tunefarm_cli_no_nvrtc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "mm.tf") << "workload mm(M = 8, N = 8, K = 8) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                                  "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
  const std::string compile = std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm compile " + (dir / "mm.tf").string() +
                              kCuda + " -o " + (dir / "mm.cubin").string();
  std::string command = compile;
  std::string why_not;
  if (cuda::NvrtcAvailable(&why_not)) {
    // Every folder NVRTC could be loaded from here.
    std::set<std::string> hide;
    Output found = testing_support::RunCommand("ldconfig -p | grep -o '/[^ ]*libnvrtc[^ ]*'");
    std::istringstream lines(found.text);
    std::vector<std::string> candidates = {"/usr/local/cuda/lib64"};
    if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/lib64");
    for (std::string line; std::getline(lines, line);) candidates.push_back(fs::path(line).parent_path().string());
    for (const std::string& c : candidates) {
      std::error_code ec;
      fs::path real = fs::canonical(c, ec);
      if (ec) continue;
      if (fs::exists(real / "libc.so.6")) GTEST_SKIP() << "NVRTC is in the system library folder " << real;
      hide.insert(real.string());
    }
    if (testing_support::RunCommand("unshare -rm true").code != 0) {
      GTEST_SKIP() << "NVRTC is here and this machine does not allow a mount namespace (unshare -rm) to hide it";
    }
    std::string mounts;
    for (const std::string& h : hide) mounts += "mount -t tmpfs none '" + h + "' && ";
    command = "unshare -rm sh -c \"" + mounts + "env -u CUDA_HOME -u LD_LIBRARY_PATH " + compile + "\"";
  }
  Output out = testing_support::RunCommand(command);
  EXPECT_NE(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("error: compiling for a cuda target needs NVRTC, the CUDA runtime compiler"),
            std::string::npos)
      << command << "\n" << out.text;
  EXPECT_NE(out.text.find("libnvrtc"), std::string::npos) << out.text;
  EXPECT_FALSE(fs::exists(dir / "mm.cubin"));
  EXPECT_FALSE(fs::exists(dir / "mm.h"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace tunefarm
