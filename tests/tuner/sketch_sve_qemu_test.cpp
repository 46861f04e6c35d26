// The CPU sketch rules for AArch64 with SVE of a fixed length (target
// "-sve-bits=N": 256-bit vectors are eight f32 lanes, 512-bit sixteen; the
// code generator keeps them in z registers of that length) draw programs
// that are correct on such a machine: for every suite workload, shrunk,
// programs drawn from the rules run under qemu-aarch64 with the same SVE
// length (-cpu max,sve-default-vector-length=<bytes>) and equal the
// interpreter's (qemu_drawn_programs.h).
//
// TUNEFARM_SVE_PROGRAMS sets the programs per workload and length: 6 by
// default, which CI runs; docs/arm.md gives the last larger run.
#include "qemu_drawn_programs.h"

namespace tunefarm::tuner {
namespace {

struct SveLength {
  int bits;
  std::string target;
  std::string qemu_cpu;
};

const SveLength kLengths[] = {
    {256, "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve -sve-bits=256", "max,sve-default-vector-length=32"},
    {512, "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve -sve-bits=512", "max,sve-default-vector-length=64"},
};

class SketchSveQemuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SketchSveQemuTest, DrawnProgramsMatchTheInterpreterAtEachSveLength) {
  for (const SveLength& length : kLengths) {
    SCOPED_TRACE("SVE " + std::to_string(length.bits) + "-bit: " + length.target);
    testing::CheckDrawnProgramsUnderQemu(GetParam(), length.target, length.qemu_cpu,
                                         testing::ProgramCount("TUNEFARM_SVE_PROGRAMS", 6));
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, SketchSveQemuTest, ::testing::ValuesIn(testing::SuiteFiles()),
                         testing::WorkloadTestName);

}  // namespace
}  // namespace tunefarm::tuner
