// The CPU rules' int8 dot-product choice (sketch_cpu_dot.cpp): offered only
// where the target has the instructions, sized by the target, off by a knob,
// and the nest it draws is the one the code generator turns into `sdot`
// (the runs under qemu: sketch_int8_dot_qemu_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

constexpr const char* kDotTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod";

Target MustParse(const std::string& text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

ir::PrimFunc GmmInt8(const std::string& a_type = "i8", const std::string& b_type = "i8") {
  auto w = ParseWorkload("workload gmm_int8(M = 7, N = 12, K = 20) {\n  A = input " + a_type + "[M, K]\n  B = input " +
                         b_type + "[N, K]\n  C[i, j] = sum(k: K) i32(A[i, k]) * i32(B[j, k])\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

// Of `n` programs drawn for `target` with the shipped rules (or `policy`):
// how many carry the annotation.
int Annotated(const ir::PrimFunc& base, const SketchPolicy& policy, int n) {
  EvolutionarySearch search(base, &policy, SearchOptions{}, /*seed=*/31);
  int annotated = 0;
  for (int i = 0; i < n; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return annotated;
    annotated += c->trace.ToText().find(ir::kDotProductAnnotation) != std::string::npos;
  }
  return annotated;
}

std::unique_ptr<SketchPolicy> ShippedPolicy(const char* target) {
  auto policy = MakeSketchPolicy(MustParse(target), std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return policy.ok() ? std::move(*policy) : nullptr;
}

TEST(SketchInt8DotTest, TheTargetSaysWhetherThereAreDotProducts) {
  struct Case {
    const char* target;
    int64_t lanes;
  };
  for (const Case& c : {Case{"llvm -mtriple=aarch64-linux-gnu", 0}, Case{kDotTarget, 4},
                        Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", 4},
                        Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", 0},
                        Case{"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -sve-bits=256", 0},
                        Case{"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", 0}}) {
    EXPECT_EQ(CpuSketchDefaultsFor(MustParse(c.target)).dot_product_lanes, c.lanes) << c.target;
  }
}

TEST(SketchInt8DotTest, DrawnOnlyWhereTheTargetHasThem) {
  const ir::PrimFunc base = GmmInt8();
  for (const char* target : {"llvm -mtriple=aarch64-linux-gnu", "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4"}) {
    EXPECT_EQ(Annotated(base, *ShippedPolicy(target), 20), 0) << target;
  }
  const int drawn = Annotated(base, *ShippedPolicy(kDotTarget), 20);
  EXPECT_GT(drawn, 0);
  EXPECT_LT(drawn, 20);  // a choice, not a rule
  EXPECT_GT(Annotated(GmmInt8("u8", "u8"), *ShippedPolicy(kDotTarget), 20), 0);
  // Not a dot product: i8 times u8, or f32.
  EXPECT_EQ(Annotated(GmmInt8("i8", "u8"), *ShippedPolicy(kDotTarget), 20), 0);
  EXPECT_EQ(Annotated(testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf"),
                      *ShippedPolicy(kDotTarget), 20),
            0);
}

TEST(SketchInt8DotTest, TheKnobTurnsItOff) {
  const auto dir = std::filesystem::temp_directory_path() / ("tunefarm_int8_dot_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cpu.toml").string();
  std::ofstream(path) << "int8_dot_product = false\n";
  auto config = LoadCpuSketchConfig(path, CpuSketchDefaultsFor(MustParse(kDotTarget)));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_FALSE(config->int8_dot_product);
  EXPECT_EQ(config->dot_product_lanes, 4);
  EXPECT_EQ(Annotated(GmmInt8(), *MakeCpuSketchPolicy(*config), 20), 0);
}

// The annotated loop, once lowered: extent 4, the whole body of a loop
// vectorized by 4, its body one store; the copy of the input the vector
// axis strides through is packed by 4 along both ([N/4, K/4, 4, 4] of B
// when the vector axis is j, [M/4, K/4, 4, 4] of A when it is i).
TEST(SketchInt8DotTest, TheNestIsTheOneTheCodeGeneratorFits) {
  const ir::PrimFunc base = GmmInt8();
  auto policy = ShippedPolicy(kDotTarget);
  EvolutionarySearch search(base, policy.get(), SearchOptions{}, /*seed=*/37);
  int checked = 0;
  for (int i = 0; i < 30 && checked < 5; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (c->trace.ToText().find(ir::kDotProductAnnotation) == std::string::npos) continue;
    auto lowered = LowerForCodegen(c->func);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    int nests = 0;
    ir::PostOrderVisit(lowered->body, [&](const ir::IRNode* n) {
      if (n->kind != ir::IRNodeKind::kFor) return;
      const auto* vec = static_cast<const ir::For*>(n);
      const auto* inner = vec->body.as<ir::For>();
      if (inner == nullptr || !inner->annotations.count(ir::kDotProductAnnotation)) return;
      ++nests;
      EXPECT_EQ(vec->kind, ir::ForKind::kVectorized);
      EXPECT_EQ(*ir::AsConstInt(vec->extent), 4);
      EXPECT_EQ(*ir::AsConstInt(inner->extent), 4);
      EXPECT_NE(inner->body.as<ir::Store>(), nullptr) << ir::ToString(*lowered);
    });
    EXPECT_GE(nests, 1) << ir::ToString(*lowered);
    int packed = 0;
    ir::PostOrderVisit(lowered->body, [&](const ir::IRNode* n) {
      if (n->kind != ir::IRNodeKind::kAllocate) return;
      const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
      packed += b->dtype == ir::DataType::Int(8) && b->shape.size() == 4 && b->shape[2] == 4 && b->shape[3] == 4;
    });
    EXPECT_EQ(packed, 1) << ir::ToString(*lowered);
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

}  // namespace
}  // namespace tunefarm::tuner
