// Programs drawn from the CPU sketch rules for an AArch64 target, run under
// qemu-aarch64 and compared with the interpreter: what the NEON and SVE
// tests (sketch_neon_qemu_test.cpp, sketch_sve_qemu_test.cpp) check for
// every suite workload.
//
// Each program is emitted for the target, loaded and run by the object
// loader's static AArch64 driver (tests/runtime/aarch64/) under qemu with
// the given -cpu, on the workload's random inputs, and must equal the
// interpreter's run of the default program on the same inputs.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../runtime/aarch64/driver_run.h"
#include "sketch_test_util.h"

namespace tunefarm::tuner::testing {

// The programs per workload: the environment variable `env` when it holds a
// positive count, else `fallback`.
inline int ProgramCount(const char* env, int fallback) {
  const char* n = std::getenv(env);
  return n != nullptr && std::atoi(n) > 0 ? std::atoi(n) : fallback;
}

// Draws up to `wanted` distinct programs for the workload file `path`
// (shrunk to about `elements` elements) from the rules for `target_text`,
// runs each under qemu with -cpu `qemu_cpu` ("" for qemu's default) and
// expects the interpreter's outputs. Records the count run as the test
// property "programs".
inline void CheckDrawnProgramsUnderQemu(const std::string& path, const std::string& target_text,
                                        const std::string& qemu_cpu, int wanted, double elements = 6e4) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  const ir::PrimFunc base = ShrunkDefault(path, elements);
  auto target = Target::Parse(target_text);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto policy = MakeSketchPolicy(*target, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
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
  std::set<std::string> seen;
  int run = 0;
  for (int attempt = 0; run < wanted && attempt < 4 * wanted; ++attempt) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (!seen.insert(c->trace.ToText()).second) continue;
    SCOPED_TRACE(base.name + ", program " + std::to_string(run) + ":\n" + c->trace.ToText());
    auto object = EmitObject(c->func, *target);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    const std::string sub = "p" + std::to_string(run);
    std::filesystem::create_directories(dir.path() / sub);
    dir.Write(sub + "/kernel.o", *object);
    // The inputs are the workload's, ../in<i>; the outputs start zeroed.
    dir.Write(sub + "/manifest.txt", tunefarm::testing::KernelRunManifest(base, c->func, [&](size_t i) {
                return i < base.num_inputs ? "../in" + std::to_string(i) : std::string("-");
              }));
    auto [rc, output] = dir.RunDriver(sub, qemu_cpu);
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
  ::testing::Test::RecordProperty("programs", run);
}

// The test name of a suite workload file: its stem.
inline std::string WorkloadTestName(const ::testing::TestParamInfo<std::string>& info) {
  return std::filesystem::path(info.param).stem().string();
}

}  // namespace tunefarm::tuner::testing
