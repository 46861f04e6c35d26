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
#include <sstream>

#include "../runtime/aarch64/driver_run.h"
#include "sketch_test_util.h"

namespace tunefarm::tuner {
namespace {

int ProgramsPerWorkload() {
  const char* n = std::getenv("TUNEFARM_NEON_PROGRAMS");
  return n != nullptr && std::atoi(n) > 0 ? std::atoi(n) : 25;
}

// The driver's manifest for one program whose inputs are ../in<i> of its folder.
std::string Manifest(const ir::PrimFunc& base, const ir::PrimFunc& scheduled) {
  std::ostringstream m;
  m << "object kernel.o\n";
  for (size_t i = 0; i < base.params.size(); ++i) {
    const int64_t bytes = HostBuffer::Like(base.params[i]).size_bytes();
    if (i < base.num_inputs) {
      m << "buffer " << bytes << " ../in" << i << "\n";
    } else {
      m << "buffer " << bytes << " -\n";
    }
  }
  std::optional<PrepackSplit> split = SplitPrepack(scheduled);
  if (split) {
    const size_t first_packed = base.params.size();
    for (const ir::Buffer& b : split->packed) m << "buffer " << HostBuffer::Like(b).size_bytes() << " -\n";
    m << "call " << split->prepack.name << "_packed";
    for (size_t i : split->constant_params) m << " " << i;
    for (size_t i = 0; i < split->packed.size(); ++i) m << " " << first_packed + i;
    m << "\ncall " << split->prepacked.name << "_packed";
    for (size_t i = 0; i < first_packed + split->packed.size(); ++i) m << " " << i;
  } else {
    m << "call " << scheduled.name << "_packed";
    for (size_t i = 0; i < base.params.size(); ++i) m << " " << i;
  }
  m << "\n";
  for (size_t i = base.num_inputs; i < base.params.size(); ++i) m << "output " << i << " out" << i << "\n";
  return m.str();
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
    dir.Write(sub + "/manifest.txt", Manifest(base, c->func));
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
