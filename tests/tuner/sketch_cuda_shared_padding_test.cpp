// The GPU rules' padding of shared copies' rows (sketch_cuda_shared_padding.h):
// drawn programs with padded copies compute what the default program does in
// the interpreter (which poisons fresh memory, so a read of the padding
// shows), at odd sizes, packed and double-buffered too; they replay from
// their trace text; padding loses no vector access of the generated CUDA C;
// at full size NVRTC compiles them for sm_80 and sm_90, nvcc's PTX declares
// the padded buffer larger by exactly its padding, and the padding spreads
// warp 0's shared load of a 32-float-wide copy over more banks.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "../compiler/codegen/cuda/cuda_test_util.h"
#include "sketch_cuda_padding_util.h"
#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/sketch_cuda.h"
#include "../../tuner/sketch_cuda_shared_padding.h"

namespace tunefarm::tuner {
namespace {

using namespace padding_test;

CudaSketchConfig ShrunkConfig() {
  CudaSketchConfig c;
  c.min_threads_per_block = 1;  // small shapes: too little work for a warp per block
  c.max_reduce_tile = 128;      // a prime K of 101 as one stage: rows of 101 to pad
  return c;
}

struct Drawn {
  int padded = 0, padded_packed = 0, padded_doubled = 0, built = 0;
};

// Draws programs of `f` until `want` padded ones (some packed, some
// double-buffered, where `want_each` > 0) were checked.
Drawn CheckPaddedDraws(const ir::PrimFunc& f, int want, int want_each, uint64_t draws) {
  auto policy = MakeCudaSketchPolicy(ShrunkConfig());
  Drawn d;
  for (uint64_t seed = 0; seed < draws; ++seed) {
    if (d.padded >= want && d.padded_packed >= want_each && d.padded_doubled >= want_each) break;
    Schedule sch(f, seed);
    if (!policy->Apply(sch).ok()) continue;
    ++d.built;
    if (!Pads(sch)) continue;
    // Enough plain padded programs: only those that also pack or double.
    if (d.padded >= want && !Packs(sch) && !Doubles(sch)) continue;
    ++d.padded;
    d.padded_packed += Packs(sch);
    d.padded_doubled += Doubles(sch);
    const std::string text = sch.trace().ToText();
    SCOPED_TRACE(text);
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(lowered.ok()) << lowered.status().ToString();
    if (!lowered.ok()) continue;
    testing::ExpectSameAsDefault(f, *lowered, /*jit=*/false);
    auto module = cuda::GenerateCuda(*lowered);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    // Replays from its text, what a worker receives.
    auto replayed = Replay(f, text);
    EXPECT_TRUE(replayed.ok()) << replayed.status().ToString();
    if (replayed.ok()) EXPECT_EQ(ir::ToString(replayed->func()), ir::ToString(sch.func()));
    // The padding keeps every vector access the unpadded program had.
    auto unpadded = Replay(f, Unpadded(text));
    EXPECT_TRUE(unpadded.ok()) << unpadded.status().ToString();
    if (!unpadded.ok() || !module.ok()) continue;
    EXPECT_FALSE(Pads(*unpadded));
    auto unpadded_module = ::tunefarm::testing::LowerAndGenerate(unpadded->func());
    EXPECT_TRUE(unpadded_module.ok()) << unpadded_module.status().ToString();
    if (!unpadded_module.ok()) continue;
    for (const char* vector : {"float4", "float2"}) {
      EXPECT_EQ(::tunefarm::testing::CountOf(module->source, vector),
                ::tunefarm::testing::CountOf(unpadded_module->source, vector))
          << vector << "\n" << module->source;
    }
  }
  return d;
}

TEST(CudaSharedPaddingTest, PaddedMatmulsComputeWhatTheDefaultDoes) {
  for (auto [m, n, k] : {std::tuple{36, 20, 101}, std::tuple{8, 7, 17}, std::tuple{64, 48, 32}}) {
    SCOPED_TRACE(Matmul(m, n, k));
    const Drawn d = CheckPaddedDraws(Lowered(Matmul(m, n, k)), 6, m == 64 ? 2 : 0, 600);
    EXPECT_GE(d.padded, 6) << "of " << d.built << " programs built";
    EXPECT_LT(d.padded, d.built) << "the padding is a sampled choice, not a rule";
    if (m == 64) {
      EXPECT_GE(d.padded_packed, 2);
      EXPECT_GE(d.padded_doubled, 2);
    }
  }
}

TEST(CudaSharedPaddingTest, PaddedShrunkSuiteLayersComputeWhatTheDefaultDoes) {
  for (const char* name : {"c2d_resnet_3x3", "dense_bias_relu"}) {
    SCOPED_TRACE(name);
    const Drawn d = CheckPaddedDraws(testing::ShrunkDefault(Workload(name)), 4, 1, 600);
    EXPECT_GE(d.padded, 4) << "of " << d.built << " programs built";
    EXPECT_GE(d.padded_packed, 1);
    EXPECT_GE(d.padded_doubled, 1);
  }
}

// The offsets drawn keep the vectors aligned: a row read 4 wide may only
// become 4 modulo 32; rows whose stride is already an offset are not padded
// to it; a row read in scalars allows all.
TEST(CudaSharedPaddingTest, OffsetsKeepVectorsAligned) {
  const std::vector<int64_t> offsets = {1, 2, 3, 4};
  EXPECT_EQ(ValidRowOffsets(32, 4, 32, offsets), (std::vector<int64_t>{4}));
  EXPECT_EQ(ValidRowOffsets(32, 2, 32, offsets), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(ValidRowOffsets(32, 1, 32, offsets), offsets);
  EXPECT_EQ(ValidRowOffsets(36, 4, 32, offsets), (std::vector<int64_t>{}));
  EXPECT_EQ(ValidRowOffsets(17, 1, 32, offsets), offsets);
}

// Nothing to pad, nothing drawn: with the knob off no padding; for a matmul
// with K = 1, whose copies are a column of rows of one float (A, [m, 1]) and
// a single row (B, [1, n]), the rule draws no decision at all: every trace
// is the one drawn with the knob off.
TEST(CudaSharedPaddingTest, NoDecisionWhereNothingIsPadded) {
  CudaSketchConfig off = ShrunkConfig();
  off.storage_align = false;
  auto on_policy = MakeCudaSketchPolicy(ShrunkConfig()), off_policy = MakeCudaSketchPolicy(off);
  const ir::PrimFunc f = Lowered(Matmul(32, 32, 16));
  int padded_on = 0, built_off = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule a(f, seed), b(f, seed);
    if (on_policy->Apply(a).ok()) padded_on += Pads(a);
    if (off_policy->Apply(b).ok()) {
      ++built_off;
      EXPECT_FALSE(Pads(b));
    }
  }
  EXPECT_GT(padded_on, 0);
  EXPECT_GT(built_off, 10);

  const ir::PrimFunc k1 = Lowered(Matmul(32, 32, 1));
  int built = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule a(k1, seed), b(k1, seed);
    const bool a_ok = on_policy->Apply(a).ok(), b_ok = off_policy->Apply(b).ok();
    ASSERT_EQ(a_ok, b_ok);
    if (!a_ok) continue;
    ++built;
    EXPECT_EQ(a.trace().ToText(), b.trace().ToText());
  }
  EXPECT_GT(built, 10);
}

// The knobs' file: the shipped one draws padding; an offset not below the
// factor is an error naming the key.
TEST(CudaSharedPaddingTest, KnobsFileNamesTheKeys) {
  auto shipped = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  EXPECT_TRUE(shipped->storage_align);
  EXPECT_EQ(shipped->storage_align_factor, 32);
  EXPECT_EQ(shipped->storage_align_offsets, (std::vector<int64_t>{1, 2, 3, 4}));
  const std::string path = ::testing::TempDir() + "/cuda_storage_align.toml";
  {
    std::ofstream out(path);
    out << "storage_align_factor = 16\nstorage_align_offsets = [1, 16]\n";
  }
  auto bad = LoadCudaSketchConfig(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("storage_align_offsets"), std::string::npos) << bad.status().ToString();
}

// Workers without storage_align are sent no padded program.
TEST(CudaSharedPaddingTest, FollowsWhatWorkersReplay) {
  auto cuda = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  const std::string configs = std::string(TUNEFARM_SOURCE_DIR) + "/configs";
  std::set<std::string> old_worker(ReplayedInstructionNames().begin(), ReplayedInstructionNames().end());
  old_worker.insert(ir::kDoubleBufferAnnotation);
  old_worker.insert(ir::kAutoUnrollMaxStepAnnotation);
  std::set<std::string> new_worker = old_worker;
  old_worker.erase(InstructionName(InstructionKind::kStorageAlign));
  auto for_old = MakeSketchPolicy(*cuda, configs, &old_worker);
  auto for_new = MakeSketchPolicy(*cuda, configs, &new_worker);
  ASSERT_TRUE(for_old.ok() && for_new.ok());
  const ir::PrimFunc f = Lowered(Matmul(64, 64, 256));
  int padded_old = 0, padded_new = 0, built_old = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Schedule a(f, seed), b(f, seed);
    if ((*for_old)->Apply(a).ok()) {
      ++built_old;
      padded_old += Pads(a);
    }
    if ((*for_new)->Apply(b).ok()) padded_new += Pads(b);
  }
  EXPECT_GT(built_old, 0);
  EXPECT_EQ(padded_old, 0);
  EXPECT_GT(padded_new, 0);
}

}  // namespace
}  // namespace tunefarm::tuner
