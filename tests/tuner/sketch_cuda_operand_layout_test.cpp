// The GPU rules' packing of staged operands (sketch_cuda_operand_layout.h):
// drawn both ways, a packed program computes what the default program does
// (the interpreter runs the lowered GPU program, its threads in phases
// between barriers), at the suite's shapes shrunk and at odd ones; a
// convolution packs its weights along the output channels; the matmul's
// packed rows reach each thread as 16-byte shared-memory loads where they
// were scalar ones (nvcc's PTX, where the CUDA toolkit is here).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../run_command.h"
#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

ir::PrimFunc Lowered(const std::string& text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : ir::PrimFunc{};
}

std::string Matmul(int m, int n, int k) {
  return "workload mm(M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ") {\n  A = input f32[M, K]\n  B = input f32[K, N]\n  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
}

bool Packs(const Schedule& sch) { return sch.trace().ToText().find("pack_layout(") != std::string::npos; }

// Draws programs of `f` until `want` packed ones were checked against the
// default program; returns how many draws packed and how many built.
std::pair<int, int> CheckPackedDraws(const ir::PrimFunc& f, int want, uint64_t draws) {
  CudaSketchConfig config;
  config.min_threads_per_block = 1;  // small shapes: too little work for a warp per block
  auto policy = MakeCudaSketchPolicy(config);
  int packed = 0, built = 0;
  for (uint64_t seed = 0; seed < draws && packed < want; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    ++built;
    if (!Packs(sch)) continue;
    ++packed;
    SCOPED_TRACE(sch.trace().ToText());
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(lowered.ok()) << lowered.status().ToString();
    if (!lowered.ok()) continue;
    testing::ExpectSameAsDefault(f, *lowered, /*jit=*/false);
    EXPECT_TRUE(cuda::GenerateCuda(*lowered).ok());
    Schedule replayed(f, seed + 1000);
    EXPECT_TRUE(sch.trace().ApplyTo(replayed).ok());
    EXPECT_EQ(ir::ToString(replayed.func()), ir::ToString(sch.func()));
  }
  return {packed, built};
}

TEST(CudaOperandLayoutTest, PackedMatmulsComputeWhatTheDefaultDoes) {
  for (auto [m, n, k] : {std::tuple{64, 48, 32}, std::tuple{36, 20, 101}, std::tuple{8, 7, 17}}) {
    SCOPED_TRACE(Matmul(m, n, k));
    const ir::PrimFunc f = Lowered(Matmul(m, n, k));
    auto [packed, built] = CheckPackedDraws(f, 6, 400);
    EXPECT_GE(packed, 6) << "of " << built << " programs built";
    EXPECT_LT(packed, built) << "the packing is a sampled choice, not a rule";
  }
}

TEST(CudaOperandLayoutTest, ShrunkSuiteConvolutionsPackTheirWeights) {
  for (const char* name : {"c2d_resnet_3x3", "dense_bias_relu"}) {
    SCOPED_TRACE(name);
    const ir::PrimFunc f = testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf");
    auto [packed, built] = CheckPackedDraws(f, 4, 400);
    EXPECT_GE(packed, 4) << "of " << built << " programs built";
  }
}

// Nothing to pack, nothing drawn: a matmul whose rows a thread owns one at a
// time (runs of 1 along i) draws no decision and no pack_layout.
TEST(CudaOperandLayoutTest, ARunOfOneRowDrawsNoDecision) {
  const ir::PrimFunc f = Lowered(Matmul(7, 32, 16));  // M = 7: a run along i is 1 or 7
  CudaSketchConfig config;
  config.min_threads_per_block = 1;
  config.max_thread_work = 4;  // 7 never fits: runs along i are 1
  auto policy = MakeCudaSketchPolicy(config);
  int built = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    ++built;
    EXPECT_FALSE(Packs(sch)) << sch.trace().ToText();
  }
  EXPECT_GT(built, 10);
}

// $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc, when it exists; else "".
std::string Nvcc() {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string dir : {std::string(home ? home : ""), std::string("/usr/local/cuda")}) {
    if (!dir.empty() && fs::exists(dir + "/bin/nvcc")) return dir + "/bin/nvcc";
  }
  return "";
}

// The shared-memory loads of f32 in nvcc's PTX of `source` for sm_90, by width.
struct SharedLoads {
  int vector4 = 0;  // ld.shared.v4.f32: 16 bytes
  int scalar = 0;   // ld.shared.f32
};

int Occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

SharedLoads SharedLoadsOf(const std::string& source, const std::string& stem) {
  const fs::path dir = fs::temp_directory_path() / ("tunefarm_operand_layout_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / (stem + ".cu")) << source;
  auto out = testing_support::RunCommand(Nvcc() + " -arch=sm_90 -ptx " + (dir / (stem + ".cu")).string() + " -o " +
                                         (dir / (stem + ".ptx")).string());
  EXPECT_EQ(out.code, 0) << out.text;
  std::ifstream in(dir / (stem + ".ptx"));
  std::stringstream ptx;
  ptx << in.rdbuf();
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return {Occurrences(ptx.str(), "ld.shared.v4.f32"), Occurrences(ptx.str(), "ld.shared.f32")};
}

// The trace with its packing undone: the decision set to 0, the pack_layout
// instructions dropped.
std::string Unpacked(const std::string& trace) {
  std::istringstream lines(trace);
  std::vector<std::string> kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("pack_layout(") != std::string::npos) {
      // The decision drawn just before the packing chose it.
      kept.back() = std::regex_replace(kept.back(), std::regex("decision=1$"), "decision=0");
      continue;
    }
    kept.push_back(line);
  }
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out;
}

// Packing A by 4 rows turns the thread tile's reads of A into 16-byte shared
// loads. A draw whose k tile already gives each row 4 consecutive elements
// reads 16 bytes unpacked too; packing must never make the loads narrower,
// and some draw must show the gain.
TEST(CudaOperandLayoutTest, PackedRowsAreSixteenByteSharedLoads) {
  if (Nvcc().empty()) GTEST_SKIP() << "no nvcc in $CUDA_HOME/bin or /usr/local/cuda/bin";
  const ir::PrimFunc f = Lowered(Matmul(1024, 1024, 1024));
  auto policy = MakeCudaSketchPolicy();
  int compared = 0;
  for (uint64_t seed = 0; seed < 400 && compared < 6; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok() || !Packs(sch)) continue;
    const std::string trace = sch.trace().ToText();
    // A thread tile of 4 rows and 4 columns (runs of 4 along i and j).
    if (trace.find("pack_layout(b2, 0, 4, 0)") == std::string::npos) continue;
    auto parsed = Trace::Parse(Unpacked(trace));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << Unpacked(trace);
    Schedule unpacked(f);
    ASSERT_TRUE(parsed->ApplyTo(unpacked).ok()) << Unpacked(trace);
    ASSERT_FALSE(Packs(unpacked));
    auto packed_module = cuda::GenerateCuda(*cuda::LowerForCuda(sch.func()));
    auto unpacked_module = cuda::GenerateCuda(*cuda::LowerForCuda(unpacked.func()));
    ASSERT_TRUE(packed_module.ok() && unpacked_module.ok());
    const SharedLoads packed = SharedLoadsOf(packed_module->source, "packed");
    const SharedLoads plain = SharedLoadsOf(unpacked_module->source, "unpacked");
    ++compared;
    EXPECT_GE(packed.vector4, plain.vector4) << trace;
    EXPECT_LE(packed.scalar, plain.scalar) << trace;
    if (plain.scalar == 0) continue;  // already 16-byte loads unpacked
    EXPECT_GT(packed.vector4, plain.vector4) << trace << "\n" << packed_module->source;
    EXPECT_LT(packed.scalar, plain.scalar) << trace << "\n" << packed_module->source;
    return;
  }
  FAIL() << "none of " << compared << " programs that packed A by 4 read A with scalar loads unpacked";
}

}  // namespace
}  // namespace tunefarm::tuner
