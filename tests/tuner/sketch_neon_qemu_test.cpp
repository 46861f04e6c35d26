// The CPU sketch rules for an AArch64 target (NEON: four f32 lanes, 32
// vector registers; sketch_vector_unit_test.cpp) draw programs that are
// correct on AArch64: for every suite workload, shrunk, programs drawn from
// the rules are emitted for aarch64-linux-gnu, loaded and run under
// qemu-aarch64 by the object loader's driver (tests/runtime/aarch64/), and
// equal the interpreter's run of the default program on the same inputs.
//
// TUNEFARM_NEON_PROGRAMS sets the programs per workload: 25 by default,
// which CI runs (LLVM's -O3 for AArch64 costs 0.1-2.2 s per program, 17
// workloads); docs/arm.md gives the last run at 100.
// qemu-aarch64 and aarch64-linux-gnu-g++ are required (scripts/setup.sh):
// without them the test fails, naming the missing tool.
#include <cstdlib>
#include <set>

#include "../runtime/aarch64/driver_run.h"
#include "sketch_test_util.h"

namespace tunefarm::tuner {
namespace {

int ProgramsPerWorkload() {
  const char* n = std::getenv("TUNEFARM_NEON_PROGRAMS");
  return n != nullptr && std::atoi(n) > 0 ? std::atoi(n) : 25;
}

class SketchNeonQemuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SketchNeonQemuTest, DrawnProgramsMatchTheInterpreterOnAArch64) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  const ir::PrimFunc base = testing::ShrunkDefault(GetParam());
  auto neon = Target::Parse(tunefarm::testing::kAArch64);
  ASSERT_TRUE(neon.ok()) << neon.status().ToString();
  auto policy = MakeSketchPolicy(*neon, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();

  // One set of inputs and one reference for every program of the workload.
  std::mt19937_64 rng(7);
  std::vector<HostBuffer> expected;
  for (size_t i = 0; i < base.params.size(); ++i) {
    expected.push_back(HostBuffer::Like(base.params[i]));
    if (i < base.num_inputs) expected.back().FillRandom(rng);
  }
  tunefarm::testing::RunDir dir;
  for (size_t i = 0; i < base.num_inputs; ++i) {
    dir.Write("in" + std::to_string(i), expected[i].data(), size_t(expected[i].size_bytes()));
  }
  std::vector<HostBuffer*> pointers;
  for (HostBuffer& b : expected) pointers.push_back(&b);
  ASSERT_TRUE(Interpret(base, pointers).ok());

  EvolutionarySearch search(base, policy->get(), SearchOptions{}, /*seed=*/23);
  const int wanted = ProgramsPerWorkload();
  std::set<std::string> seen;
  int run = 0;
  for (int attempt = 0; run < wanted && attempt < 4 * wanted; ++attempt) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (!seen.insert(c->trace.ToText()).second) continue;
    SCOPED_TRACE(base.name + ", program " + std::to_string(run) + ":\n" + c->trace.ToText());
    auto object = EmitObject(c->func, *neon);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    const std::string sub = "p" + std::to_string(run);
    std::filesystem::create_directories(dir.path() / sub);
    dir.Write(sub + "/kernel.o", *object);
    // The inputs are the workload's, ../in<i>; the outputs start zeroed.
    dir.Write(sub + "/manifest.txt", tunefarm::testing::KernelRunManifest(base, c->func, [&](size_t i) {
                return i < base.num_inputs ? "../in" + std::to_string(i) : std::string("-");
              }));
    auto [rc, output] = dir.RunDriver(sub);
    ASSERT_EQ(rc, 0) << output;
    for (size_t i = base.num_inputs; i < base.params.size(); ++i) {
      const std::string bytes = dir.Read(sub + "/out" + std::to_string(i));
      HostBuffer actual = HostBuffer::Like(base.params[i]);
      ASSERT_EQ(bytes.size(), size_t(actual.size_bytes())) << "output " << i;
      std::memcpy(actual.data(), bytes.data(), bytes.size());
      CompareResult r = CompareBuffers(actual, expected[i], 1e-3, 1e-3);
      ASSERT_TRUE(r.equal) << base.params[i]->name << ": " << r.message;
    }
    std::filesystem::remove_all(dir.path() / sub);
    ++run;
  }
  // A space smaller than `wanted` distinct programs is run whole.
  EXPECT_GE(run, std::min<int>(wanted, int(seen.size())));
  RecordProperty("programs", run);
}

INSTANTIATE_TEST_SUITE_P(Suite, SketchNeonQemuTest, ::testing::ValuesIn(testing::SuiteFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace tunefarm::tuner
