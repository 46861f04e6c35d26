// The GPU rules' padded shared copies at full size (sketch_cuda_shared_padding.h):
// padded programs of GMM 1024, dense+bias+relu and the 3x3 convolution
// compile with NVRTC for sm_80 and sm_90 within the shared-memory knob; in
// nvcc's PTX of a GMM 1024 kernel the padded buffer is larger than the
// unpadded one by exactly its padding, and no 16-byte shared load is lost;
// and for a copy whose rows are 32 floats wide, the 32 lanes of warp 0 reading
// it in the computation touch fewer words per bank padded than unpadded.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "../compiler/codegen/cuda/cuda_test_util.h"
#include "../run_command.h"
#include "sketch_cuda_padding_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/simplify.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;
using namespace padding_test;

CudaSketchConfig ShippedConfig() {
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : CudaSketchConfig{};
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

TEST(CudaSharedPaddingFullTest, PaddedProgramsCompileWithNvrtc) {
  TF_SKIP_WITHOUT_NVRTC();
  const CudaSketchConfig config = ShippedConfig();
  ASSERT_TRUE(config.storage_align);
  auto policy = MakeCudaSketchPolicy(config);
  for (const char* name : {"gmm_1024", "dense_bias_relu", "c2d_resnet_3x3"}) {
    SCOPED_TRACE(name);
    const ir::PrimFunc f = FullSize(name);
    int compiled = 0;
    for (uint64_t seed = 0; seed < 200 && compiled < 1; ++seed) {
      Schedule sch(f, seed);
      if (!policy->Apply(sch).ok() || !Pads(sch)) continue;
      auto lowered = cuda::LowerForCuda(sch.func());
      ASSERT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << sch.trace().ToText();
      int64_t shared = 0;
      ir::PostOrderVisit(lowered->body, [&](const ir::IRNode* n) {
        if (n->kind != ir::IRNodeKind::kAllocate) return;
        const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
        if (b->scope == ir::MemoryScope::kShared) shared += b->size_bytes();
      });
      EXPECT_LE(shared, config.max_shared_bytes) << sch.trace().ToText();
      auto module = cuda::GenerateCuda(*lowered);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      EXPECT_TRUE(::tunefarm::testing::CompilesForGpus(*module)) << sch.trace().ToText();
      ++compiled;
    }
    EXPECT_EQ(compiled, 1);
  }
}

// $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc, when it exists; else "".
std::string Nvcc() {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string dir : {std::string(home ? home : ""), std::string("/usr/local/cuda")}) {
    if (!dir.empty() && fs::exists(dir + "/bin/nvcc")) return dir + "/bin/nvcc";
  }
  return "";
}

std::string Ptx(const std::string& source, const std::string& stem) {
  const fs::path dir = fs::temp_directory_path() / ("tunefarm_shared_padding_" + std::to_string(::getpid()));
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
  return ptx.str();
}

// The bytes of each `.shared` array the PTX declares, by its (mangled) name.
std::map<std::string, int64_t> SharedDeclarations(const std::string& ptx) {
  std::map<std::string, int64_t> out;
  const std::regex decl(R"(\.shared\s+\.align\s+\d+\s+\.b8\s+([A-Za-z0-9_$]+)\[(\d+)\])");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), decl), end; it != end; ++it) {
    out[(*it)[1].str()] = std::stoll((*it)[2].str());
  }
  return out;
}

TEST(CudaSharedPaddingFullTest, PtxDeclaresThePaddedBufferLargerByItsPadding) {
  if (Nvcc().empty()) GTEST_SKIP() << "no nvcc in $CUDA_HOME/bin or /usr/local/cuda/bin";
  const ir::PrimFunc f = FullSize("gmm_1024");
  auto policy = MakeCudaSketchPolicy(ShippedConfig());
  int checked = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok() || !Pads(sch)) continue;
    const std::string trace = sch.trace().ToText();
    SCOPED_TRACE(trace);
    auto unpadded = Replay(f, Unpadded(trace));
    ASSERT_TRUE(unpadded.ok()) << unpadded.status().ToString();
    // The padding the scheduled functions say: elements of the padded
    // shapes over the unpadded ones, twice where the stage is doubled.
    const auto padded_buffers = SharedBuffers(sch.func()), unpadded_buffers = SharedBuffers(unpadded->func());
    int64_t expected = 0;
    int padded_count = 0;
    for (const auto& [name, buffer] : padded_buffers) {
      ASSERT_TRUE(unpadded_buffers.count(name)) << name;
      const int64_t grown = Elements(buffer->shape) - Elements(unpadded_buffers.at(name)->shape);
      padded_count += grown > 0;
      expected += grown * buffer->dtype.bytes() * (Doubles(sch) ? 2 : 1);
    }
    ASSERT_GT(expected, 0);
    auto padded_module = ::tunefarm::testing::LowerAndGenerate(sch.func());
    auto unpadded_module = ::tunefarm::testing::LowerAndGenerate(unpadded->func());
    ASSERT_TRUE(padded_module.ok() && unpadded_module.ok());
    const std::string padded_ptx = Ptx(padded_module->source, "padded");
    const std::string unpadded_ptx = Ptx(unpadded_module->source, "unpadded");
    const auto padded_decls = SharedDeclarations(padded_ptx), unpadded_decls = SharedDeclarations(unpadded_ptx);
    ASSERT_FALSE(padded_decls.empty()) << padded_ptx;
    int grown = 0;
    int64_t total = 0;
    for (const auto& [name, bytes] : padded_decls) {
      ASSERT_TRUE(unpadded_decls.count(name)) << name << "\n" << unpadded_ptx;
      grown += bytes > unpadded_decls.at(name);
      total += bytes - unpadded_decls.at(name);
    }
    EXPECT_EQ(grown, padded_count);
    EXPECT_EQ(total, expected);
    // The offsets drawn keep 16-byte alignment where it was used.
    EXPECT_EQ(::tunefarm::testing::CountOf(padded_ptx, "ld.shared.v4"),
              ::tunefarm::testing::CountOf(unpadded_ptx, "ld.shared.v4"));
    EXPECT_EQ(::tunefarm::testing::CountOf(padded_ptx, "st.shared.v4"),
              ::tunefarm::testing::CountOf(unpadded_ptx, "st.shared.v4"))
        << padded_module->source << "\n" << unpadded_module->source;
    if (++checked == 3) return;
  }
  FAIL() << "only " << checked << " padded GMM 1024 programs in 400 draws";
}

// The most distinct 4-byte words any of the 32 banks serves when the 32
// lanes of warp 0 (threadIdx.x 0..31, every other variable 0) make the
// first load of `buffer` in the computation of the lowered program (a
// store into a local buffer reading it: the accumulation, not the fetch).
int WordsPerBank(const ir::PrimFunc& lowered, const std::string& buffer) {
  std::set<const ir::Variable*> threads, others;
  const ir::Load* load = nullptr;
  ir::PostOrderVisit(lowered.body, [&](const ir::IRNode* n) {
    if (n->kind == ir::IRNodeKind::kFor) {
      const auto* loop = static_cast<const ir::For*>(n);
      if (loop->thread_tag == "threadIdx.x") threads.insert(loop->loop_var.get());
    }
    if (n->kind == ir::IRNodeKind::kVariable) others.insert(static_cast<const ir::Variable*>(n));
    if (n->kind != ir::IRNodeKind::kStore || load) return;
    const auto* store = static_cast<const ir::Store*>(n);
    if (store->buffer->scope != ir::MemoryScope::kLocal) return;
    ir::PostOrderVisit(ir::Evaluate::Make(store->value), [&](const ir::IRNode* m) {
      if (m->kind == ir::IRNodeKind::kLoad && static_cast<const ir::Load*>(m)->buffer->name == buffer && !load) {
        load = static_cast<const ir::Load*>(m);
      }
    });
  });
  EXPECT_NE(load, nullptr) << "no computation reads " << buffer;
  EXPECT_FALSE(threads.empty());
  if (!load) return 0;
  std::map<int64_t, std::set<int64_t>> words;  // bank -> words
  for (int64_t lane = 0; lane < 32; ++lane) {
    std::map<const ir::Variable*, ir::Expr> values;
    for (const ir::Variable* v : others) values[v] = ir::Expr(int64_t(0));
    for (const ir::Variable* v : threads) values[v] = ir::Expr(lane);
    int64_t address = 0;  // in elements of 4 bytes: words
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const ir::Expr index = ir::Simplify(ir::Substitute(load->indices[d], values));
      const int64_t* value = ir::AsConstInt(index);
      EXPECT_NE(value, nullptr) << ir::ToString(index);
      if (!value) return 0;
      address = address * load->buffer->shape[d] + *value;
    }
    words[address % 32].insert(address);
  }
  size_t most = 0;
  for (const auto& [bank, in_bank] : words) most = std::max(most, in_bank.size());
  return int(most);
}

TEST(CudaSharedPaddingFullTest, PaddedRowsOf32FloatsSpreadWarp0OverMoreBanks) {
  const ir::PrimFunc f = FullSize("gmm_1024");
  auto policy = MakeCudaSketchPolicy(ShippedConfig());
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok() || !Pads(sch)) continue;
    const std::string trace = sch.trace().ToText();
    auto unpadded = Replay(f, Unpadded(trace));
    ASSERT_TRUE(unpadded.ok()) << unpadded.status().ToString();
    const auto before = SharedBuffers(unpadded->func());
    for (const auto& [name, buffer] : SharedBuffers(sch.func())) {
      const ir::Buffer& old = before.at(name);
      if (old->shape.size() != 2 || old->shape[1] != 32 || buffer->shape == old->shape) continue;
      auto lowered = cuda::LowerForCuda(sch.func());
      auto unpadded_lowered = cuda::LowerForCuda(unpadded->func());
      ASSERT_TRUE(lowered.ok() && unpadded_lowered.ok());
      const int unpadded_words = WordsPerBank(*unpadded_lowered, name);
      if (unpadded_words < 2) continue;  // no conflict to remove in this tiling
      const int padded_words = WordsPerBank(*lowered, name);
      EXPECT_LT(padded_words, unpadded_words) << trace << "\n" << ir::ToString(*lowered);
      return;
    }
  }
  FAIL() << "no GMM 1024 program in 2000 draws padded a conflicting copy with rows of 32 floats";
}

}  // namespace
}  // namespace tunefarm::tuner
