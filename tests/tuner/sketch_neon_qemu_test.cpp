// The CPU sketch rules for an AArch64 target (NEON: four f32 lanes, 32
// vector registers; sketch_vector_unit_test.cpp) draw programs that are
// correct on AArch64: for every suite workload, shrunk, programs drawn from
// the rules are emitted for aarch64-linux-gnu, loaded and run under
// qemu-aarch64 by the object loader's driver (tests/runtime/aarch64/), and
// equal the interpreter's run of the default program on the same inputs
// (qemu_drawn_programs.h).
//
// TUNEFARM_NEON_PROGRAMS sets the programs per workload: 100 by default,
// which CI runs (about 6 CPU minutes for the 17 workloads; docs/arm.md). The
// workloads are shrunk to about 20,000 elements, not the 60,000 of the other
// sketch tests: LLVM's -O3 for AArch64 is most of this test's time and grows
// with the unrolled loops of the larger copies (3.8 s per depthwise program
// at 60,000 elements, 0.36 s at 20,000; docs/arm.md).
// qemu-aarch64 and aarch64-linux-gnu-g++ are required (scripts/setup.sh):
// without them the test fails, naming the missing tool.
#include "qemu_drawn_programs.h"

namespace tunefarm::tuner {
namespace {

class SketchNeonQemuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SketchNeonQemuTest, DrawnProgramsMatchTheInterpreterOnAArch64) {
  testing::CheckDrawnProgramsUnderQemu(GetParam(), tunefarm::testing::kAArch64, "",
                                       testing::ProgramCount("TUNEFARM_NEON_PROGRAMS", 100), /*elements=*/2e4);
}

INSTANTIATE_TEST_SUITE_P(Suite, SketchNeonQemuTest, ::testing::ValuesIn(testing::SuiteFiles()),
                         testing::WorkloadTestName);

}  // namespace
}  // namespace tunefarm::tuner
