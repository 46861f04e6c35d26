// The CPU rules' int8 matrix-multiply choice (sketch_cpu_dot.cpp): offered
// only where the target has i8mm, off by a knob, unchanged choices without
// it, and the nest it draws is the one the code generator turns into
// `smmla` (the runs under qemu: sketch_int8_mmla_qemu_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

constexpr const char* kMmlaTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod,+i8mm";
constexpr const char* kDotTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod";

Target MustParse(const std::string& text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// M even, so that the register tile's rows can be; K a multiple of 8.
ir::PrimFunc GmmInt8(int64_t m = 8, int64_t n = 12, int64_t k = 24, const std::string& a_type = "i8",
                     const std::string& b_type = "i8") {
  auto w = ParseWorkload("workload gmm_int8(M = " + std::to_string(m) + ", N = " + std::to_string(n) +
                         ", K = " + std::to_string(k) + ") {\n  A = input " + a_type + "[M, K]\n  B = input " +
                         b_type + "[N, K]\n  C[i, j] = sum(k: K) i32(A[i, k]) * i32(B[j, k])\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

std::unique_ptr<SketchPolicy> ShippedPolicy(const char* target) {
  auto policy = MakeSketchPolicy(MustParse(target), std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return policy.ok() ? std::move(*policy) : nullptr;
}

// The traces of `n` programs drawn from `policy`.
std::vector<std::string> Traces(const ir::PrimFunc& base, const SketchPolicy& policy, int n) {
  EvolutionarySearch search(base, &policy, SearchOptions{}, /*seed=*/41);
  std::vector<std::string> traces;
  for (int i = 0; i < n; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) break;
    traces.push_back(c->trace.ToText());
  }
  return traces;
}

int Count(const std::vector<std::string>& traces, const char* key) {
  int n = 0;
  for (const std::string& t : traces) n += t.find(key) != std::string::npos;
  return n;
}

TEST(SketchInt8MmlaTest, TheTargetSaysWhetherThereAreMatrixTiles) {
  struct Case {
    const char* target;
    bool tiles;
  };
  for (const Case& c : {Case{kMmlaTarget, true}, Case{"llvm -mtriple=aarch64-linux-gnu -mattr=+i8mm", true},
                        Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1", true},
                        Case{kDotTarget, false}, Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", false},
                        Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -sve-bits=256", false},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", false}}) {
    EXPECT_EQ(CpuSketchDefaultsFor(MustParse(c.target)).matrix_multiply_tiles, c.tiles) << c.target;
  }
}

TEST(SketchInt8MmlaTest, DrawnOnlyWhereTheTargetHasThem) {
  const ir::PrimFunc base = GmmInt8();
  for (const char* target : {kDotTarget, "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4"}) {
    EXPECT_EQ(Count(Traces(base, *ShippedPolicy(target), 20), ir::kMatrixMultiplyAnnotation), 0) << target;
  }
  const std::vector<std::string> traces = Traces(base, *ShippedPolicy(kMmlaTarget), 30);
  const int drawn = Count(traces, ir::kMatrixMultiplyAnnotation);
  EXPECT_GT(drawn, 0);
  EXPECT_LT(drawn, 30);  // a choice, not a rule
  EXPECT_GT(Count(traces, ir::kDotProductAnnotation), 0);  // sdot is still offered beside it
  EXPECT_GT(Count(Traces(GmmInt8(8, 12, 24, "u8", "u8"), *ShippedPolicy(kMmlaTarget), 30),
                  ir::kMatrixMultiplyAnnotation),
            0);
  // Not an int8 product, or a reduction 8 does not divide, or no even rows
  // (M and N both 7: one is padded to whole vectors, the other's tiles are odd).
  EXPECT_EQ(Count(Traces(GmmInt8(8, 12, 24, "i8", "u8"), *ShippedPolicy(kMmlaTarget), 20),
                  ir::kMatrixMultiplyAnnotation),
            0);
  EXPECT_EQ(Count(Traces(GmmInt8(8, 12, 20), *ShippedPolicy(kMmlaTarget), 20), ir::kMatrixMultiplyAnnotation), 0);
  EXPECT_EQ(Count(Traces(GmmInt8(7, 7, 24), *ShippedPolicy(kMmlaTarget), 20), ir::kMatrixMultiplyAnnotation), 0);
}

// With the knob off, an i8mm target draws exactly what a dotprod target
// draws: the choice it samples is the one it always was.
TEST(SketchInt8MmlaTest, TheKnobTurnsItOffAndLeavesTheOldChoice) {
  const auto dir = std::filesystem::temp_directory_path() / ("tunefarm_int8_mmla_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cpu.toml").string();
  std::ofstream(path) << "int8_matrix_multiply = false\nregister_tile_floor = 4\n";
  auto off = LoadCpuSketchConfig(path, CpuSketchDefaultsFor(MustParse(kMmlaTarget)));
  auto dot = LoadCpuSketchConfig(path, CpuSketchDefaultsFor(MustParse(kDotTarget)));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  ASSERT_TRUE(dot.ok()) << dot.status().ToString();
  EXPECT_FALSE(off->int8_matrix_multiply);
  EXPECT_TRUE(off->matrix_multiply_tiles);
  const ir::PrimFunc base = GmmInt8();
  const std::vector<std::string> traces = Traces(base, *MakeCpuSketchPolicy(*off), 20);
  EXPECT_EQ(Count(traces, ir::kMatrixMultiplyAnnotation), 0);
  EXPECT_GT(Count(traces, ir::kDotProductAnnotation), 0);
  EXPECT_EQ(traces, Traces(base, *MakeCpuSketchPolicy(*dot), 20));
}

// A worker that cannot replay the annotation (a build from before it) is
// sent no smmla program: the rules do not draw it; sdot stays.
TEST(SketchInt8MmlaTest, NotDrawnForWorkersWithoutTheKey) {
  std::set<std::string> replayable(ReplayedInstructionNames().begin(), ReplayedInstructionNames().end());
  for (const char* key : ir::kLoopAnnotations) {
    if (std::string(key) != ir::kMatrixMultiplyAnnotation) replayable.insert(key);
  }
  auto policy = MakeSketchPolicy(MustParse(kMmlaTarget), std::string(TUNEFARM_SOURCE_DIR) + "/configs", &replayable);
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  const std::vector<std::string> traces = Traces(GmmInt8(), **policy, 30);
  EXPECT_EQ(Count(traces, ir::kMatrixMultiplyAnnotation), 0);
  EXPECT_GT(Count(traces, ir::kDotProductAnnotation), 0);
  replayable.insert(ir::kMatrixMultiplyAnnotation);
  auto all = MakeSketchPolicy(MustParse(kMmlaTarget), std::string(TUNEFARM_SOURCE_DIR) + "/configs", &replayable);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_GT(Count(Traces(GmmInt8(), **all, 30), ir::kMatrixMultiplyAnnotation), 0);
}

// The annotated loop, once lowered: extent 8, its body one store, the whole
// body of a loop of 2 that is the whole body of a loop of 2; the packed
// operand [N/4, K/8, 4, 8] (or [M/4, ..]); and every such program is
// `smmla` in the assembly.
TEST(SketchInt8MmlaTest, TheNestIsTheOneTheCodeGeneratorFits) {
  const ir::PrimFunc base = GmmInt8();
  auto policy = ShippedPolicy(kMmlaTarget);
  EvolutionarySearch search(base, policy.get(), SearchOptions{}, /*seed=*/43);
  int checked = 0;
  for (int i = 0; i < 40 && checked < 5; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (c->trace.ToText().find(ir::kMatrixMultiplyAnnotation) == std::string::npos) continue;
    auto lowered = LowerForCodegen(c->func);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    int nests = 0;
    ir::PostOrderVisit(lowered->body, [&](const ir::IRNode* n) {
      if (n->kind != ir::IRNodeKind::kFor) return;
      const auto* rows = static_cast<const ir::For*>(n);
      const auto* cols = rows->body.as<ir::For>();
      const auto* steps = cols != nullptr ? cols->body.as<ir::For>() : nullptr;
      if (steps == nullptr || !steps->annotations.count(ir::kMatrixMultiplyAnnotation)) return;
      ++nests;
      EXPECT_EQ(*ir::AsConstInt(rows->extent), 2);
      EXPECT_EQ(*ir::AsConstInt(cols->extent), 2);
      EXPECT_EQ(*ir::AsConstInt(steps->extent), 8);
      EXPECT_NE(steps->body.as<ir::Store>(), nullptr) << ir::ToString(*lowered);
    });
    EXPECT_GE(nests, 1) << ir::ToString(*lowered);
    // The copy the vector axis strides through, packed in panels of 4, is
    // packed by 8 along the reduction too: each column's 8 bytes follow each
    // other, and a pair of columns is one 16-byte operand.
    int packed = 0;
    ir::PostOrderVisit(lowered->body, [&](const ir::IRNode* n) {
      if (n->kind != ir::IRNodeKind::kAllocate) return;
      const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
      packed += b->dtype == ir::DataType::Int(8) && b->shape.size() == 4 && b->shape[2] == 4 && b->shape[3] == 8;
    });
    EXPECT_EQ(packed, 1) << ir::ToString(*lowered);
    auto assembly = EmitAssembly(c->func, MustParse(kMmlaTarget));
    ASSERT_TRUE(assembly.ok()) << assembly.status().ToString();
    EXPECT_NE(assembly->find("smmla\tv"), std::string::npos) << c->trace.ToText();
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace tunefarm::tuner
