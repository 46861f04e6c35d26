// The padding rule: a tiled reduction that reads an input under padding
// guards (the suite's C2D, DEP and T2D) samples both a zero-padded copy of it and
// the guards kept; programs of either kind compute what the default does
// (through the JIT), the padded ones with no guard left in the kernel's
// loops, DEP's made channel by channel, and with pad_inputs off no sample
// pads.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sketch_test_util.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::ExpectSameAsDefault;
using testing::SampleTraces;
using testing::ShrunkDefault;

struct PaddingCounts {
  int padded = 0;
  int guarded = 0;
  int per_task = 0;  // padded copies computed under the kernel's parallel loop
  int packed = 0;    // padded copies packed into panels (pack_layout)
  int per_c1 = 0;    // padded copies allocated inside the loop c_1
};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

PaddingCounts SamplePadding(const std::string& workload, bool pad_inputs, int samples, int64_t min_reuse = 32) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + workload);
  CpuSketchConfig config;
  config.pad_inputs = pad_inputs;
  config.pad_root_min_reuse = min_reuse;
  // Padded vector axes add selects of their own (zeros past an input's end);
  // sketch_pad_axis_test.cpp samples those.
  config.pad_vector_axis = false;
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 23);
  const size_t default_selects = Count(ir::ToString(f), "select(");
  PaddingCounts counts;
  for (int i = 0; i < samples; ++i) {
    auto c = search.Sample();
    // Every draw of the rule is a valid program.
    EXPECT_TRUE(c.ok()) << workload << ": " << c.status().ToString();
    if (!c.ok()) continue;
    const std::string trace = c->trace.ToText();
    const std::string text = ir::ToString(c->func);
    const bool padded = trace.find("pad_input(") != std::string::npos;
    (padded ? counts.padded : counts.guarded)++;
    // The copy's select replaces the kernel's guard: as many as the default has.
    EXPECT_EQ(Count(text, "select("), default_selects) << workload << "\n" << trace << text;
    if (padded) {
      EXPECT_NE(text.find("allocate X_pad"), std::string::npos) << trace << text;
      // "b7 = pad_input(b0, 0)": computed at a loop of the kernel, or at the root.
      size_t line = trace.rfind('\n', trace.find(" = pad_input(")) + 1;
      std::string copy = trace.substr(line, trace.find(" = pad_input(") - line);
      counts.per_task += trace.find("\ncompute_at(" + copy + ",") != std::string::npos;
      counts.packed += trace.find("\npack_layout(" + copy + ",") != std::string::npos;
      const size_t c1 = text.find("for c_1 in"), alloc = text.find("allocate X_pad");
      counts.per_c1 += c1 != std::string::npos && c1 < alloc;
    }
    // Every fourth sample, and every padded one, through the JIT.
    if (padded || i % 4 == 0) ExpectSameAsDefault(f, c->func, /*jit=*/true);
  }
  return counts;
}

TEST(SketchPaddingTest, ConvolutionsSampleBothPaddedAndGuardedReads) {
  // C2D reads each input element 576 times: its copy is made before the
  // kernel or per parallel task, sampled.
  PaddingCounts c2d = SamplePadding("c2d_resnet_3x3.tf", true, 24);
  EXPECT_GE(c2d.padded, 4);
  EXPECT_GE(c2d.guarded, 4);
  EXPECT_GE(c2d.per_task, 1) << "no padded copy was computed per parallel task";
  EXPECT_LT(c2d.per_task, c2d.padded) << "no padded copy was made before the kernel";
  // DEP reads each element 9 times, under pad_root_min_reuse: per task only
  // (and, with channels as the vector axis, packed into panels there too).
  PaddingCounts dep = SamplePadding("dep_3x3_c256_28.tf", true, 24);
  EXPECT_GE(dep.padded, 4);
  EXPECT_GE(dep.guarded, 4);
  EXPECT_EQ(dep.per_task, dep.padded);
  // Not packed, its copy is made plane by plane: inside the task's channel
  // loop c_1 (the image is indexed by n and c, then through the window).
  EXPECT_GE(dep.padded - dep.packed, 2);
  EXPECT_EQ(dep.per_c1, dep.padded - dep.packed);
  // T2D, after lowering has kept one tap in two: its remaining guards are
  // bounds checks on (h + 1 - r') / 2, and pad like C2D's.
  PaddingCounts t2d = SamplePadding("t2d.tf", true, 16);
  EXPECT_GE(t2d.padded, 2);
  EXPECT_GE(t2d.guarded, 2);
  // With the threshold at 0, DEP's copies may be made before the kernel too.
  PaddingCounts loose = SamplePadding("dep_3x3_c256_28.tf", true, 24, 0);
  EXPECT_LT(loose.per_task, loose.padded);
}

// The unroll depth a sample took ("sample_categorical([0, 16, 64, 512], ...) decision=K").
int64_t UnrollDepth(const std::string& trace, const std::vector<int64_t>& steps) {
  const size_t at = trace.find("sample_categorical([0, 16, 64, 512]");
  if (at == std::string::npos) return -1;
  const size_t decision = trace.find("decision=", at);
  return steps.at(size_t(std::stoll(trace.substr(decision + 9))));
}

// How many DEP samples kept their guards or were padded, and how many of
// each unrolled fewer than 64 steps.
struct UnrollCounts {
  int guarded = 0;
  int guarded_shallow = 0;
  int padded = 0;
  int padded_shallow = 0;
};

UnrollCounts SampleUnrolls(int64_t guarded_unroll_min_step, int samples) {
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/dep_3x3_c256_28.tf");
  CpuSketchConfig config;
  config.guarded_unroll_min_step = guarded_unroll_min_step;
  UnrollCounts counts;
  for (const std::string& trace : SampleTraces(f, config, 31, samples)) {
    const int64_t depth = UnrollDepth(trace, config.unroll_steps);
    EXPECT_GE(depth, 0) << trace;
    const bool shallow = depth < 64;
    if (trace.find("pad_input(") == std::string::npos) {
      counts.guarded++;
      counts.guarded_shallow += shallow;
    } else {
      counts.padded++;
      counts.padded_shallow += shallow;
    }
  }
  return counts;
}

TEST(SketchPaddingTest, GuardedKernelsUnrollDeeply) {
  // Guards fold only in unrolled copies: a kernel that keeps them unrolls 64
  // steps or more; a padded one, whose inner loops have no guard, any depth.
  UnrollCounts on = SampleUnrolls(64, 48);
  EXPECT_GE(on.guarded, 8);
  EXPECT_EQ(on.guarded_shallow, 0) << "a guarded kernel unrolled less than 64 steps";
  EXPECT_GE(on.padded, 8);
  EXPECT_GE(on.padded_shallow, 2) << "no padded kernel unrolled less than 64 steps";
  // At 0 the guarded ones take every depth again.
  UnrollCounts off = SampleUnrolls(0, 48);
  EXPECT_GE(off.guarded_shallow, 2);
}

TEST(SketchPaddingTest, RuleOffNeverPads) {
  PaddingCounts counts = SamplePadding("c2d_resnet_3x3.tf", false, 12);
  EXPECT_EQ(counts.padded, 0);
  EXPECT_GE(counts.guarded, 8);
}

TEST(SketchPaddingTest, UnguardedWorkloadsAreUnchanged) {
  // No guard, no sampling decision: GMM draws the very same programs with the
  // rule on and off (and older logs' decisions still line up).
  ir::PrimFunc f = ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_512.tf");
  CpuSketchConfig off, on;
  off.pad_inputs = false;
  on.pad_inputs = true;
  EXPECT_EQ(SampleTraces(f, off, 29, 8), SampleTraces(f, on, 29, 8));
}

}  // namespace
}  // namespace tunefarm::tuner
