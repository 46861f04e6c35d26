// The stride-class rule: a tiled reduction that reads a spatial axis modulo a
// constant (the suite's T2D after lowering: its taps depend on (h + 1) % 2)
// samples both its classes split off and put first in each parallel task and
// the classes interleaved in the tiles; programs of either kind compute what
// the default does (through the JIT), the accumulator of a split one stays
// under the parallel loop, and with the rule off, or on a workload that reads
// nothing modulo a constant, nothing changes.
#include <gtest/gtest.h>

#include <string>
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

std::string Suite(const std::string& name) { return std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name; }

// A class split is the only split by a constant 2 in these traces: tile
// splits take sampled factors, the vector axis splits by 16.
bool SplitsClasses(const std::string& trace) { return trace.find(", [-1, 2])") != std::string::npos; }

struct ClassCounts {
  int split = 0;
  int interleaved = 0;
};

ClassCounts SampleClasses(const std::string& workload, bool rule_on, int samples, bool run) {
  ir::PrimFunc f = ShrunkDefault(Suite(workload));
  CpuSketchConfig config;
  config.stride_classes_outer = rule_on;
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, 31);
  ClassCounts counts;
  for (int i = 0; i < samples; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << workload << ": " << c.status().ToString();
    if (!c.ok()) continue;
    const std::string trace = c->trace.ToText();
    const bool split = SplitsClasses(trace);
    (split ? counts.split : counts.interleaved)++;
    if (split) {
      // The accumulator is allocated right under the kernel's parallel loop.
      const std::string text = ir::ToString(c->func);
      const size_t accumulator = text.find("allocate out_local");
      EXPECT_NE(accumulator, std::string::npos) << trace << text;
      if (accumulator == std::string::npos) continue;
      const size_t line = text.rfind('\n', text.rfind('\n', accumulator) - 1);
      EXPECT_NE(text.substr(line, accumulator - line).find(") parallel"), std::string::npos) << trace << text;
    }
    if (run && (split || i % 4 == 0)) ExpectSameAsDefault(f, c->func, /*jit=*/true);
  }
  return counts;
}

TEST(SketchStrideClassesTest, TransposedConvolutionSamplesBothClassLayouts) {
  ClassCounts t2d = SampleClasses("t2d.tf", true, 24, true);
  EXPECT_GE(t2d.split, 4);
  EXPECT_GE(t2d.interleaved, 4);
}

TEST(SketchStrideClassesTest, RuleOffNeverSplitsClasses) {
  ClassCounts t2d = SampleClasses("t2d.tf", false, 12, false);
  EXPECT_EQ(t2d.split, 0);
}

TEST(SketchStrideClassesTest, WorkloadsWithoutClassesAreUnchanged) {
  // Nothing read modulo a constant, no sampling decision: C2D draws the very
  // same programs with the rule on and off (older logs' decisions line up).
  ir::PrimFunc f = ShrunkDefault(Suite("c2d_resnet_3x3.tf"));
  CpuSketchConfig off, on;
  off.stride_classes_outer = false;
  on.stride_classes_outer = true;
  EXPECT_EQ(SampleTraces(f, off, 37, 8), SampleTraces(f, on, 37, 8));
}

}  // namespace
}  // namespace tunefarm::tuner
