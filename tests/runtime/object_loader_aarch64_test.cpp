// LoadObject on AArch64, run under qemu-aarch64: kernel objects EmitObject
// writes for aarch64-linux-gnu (suite workloads, default and random
// schedules: parallel loops, vector code, constant pools, prepack splits,
// libm calls) are loaded and called by object_loader_driver, a static AArch64
// program built from the runtime's sources (tests/runtime/aarch64/), on
// inputs written here; its outputs are compared with the interpreter's here.
// Hand-written assembly (relocations.S) covers the relocations the kernels do
// not use, and crafted objects the refusals.
//
// The cross compiler and qemu-aarch64 are required: the test fails, naming
// the missing tool, when tunefarm was configured without them.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aarch64/driver_run.h"
#include "object_loader_test_util.h"

namespace tunefarm::testing {
namespace {

namespace fs = std::filesystem;

// Runs `scheduled` (emitted for AArch64 with `options`) under qemu on random
// inputs from `seed`, through its split entries when it has a prepack split,
// and compares with the interpreter's run of `base`.
::testing::AssertionResult RunsUnderQemu(const ir::PrimFunc& base, const ir::PrimFunc& scheduled, uint64_t seed,
                                         const CodegenOptions& options = {}) {
  auto target = Target::Parse(kAArch64);
  if (!target.ok()) return ::testing::AssertionFailure() << target.status().ToString();
  auto object = EmitObject(scheduled, *target, options);
  if (!object.ok()) return ::testing::AssertionFailure() << "EmitObject: " << object.status().ToString();
  std::vector<HostBuffer> expected = RandomArgs(base, seed), inputs = RandomArgs(base, seed);
  Status s = Interpret(base, HostPointers(expected));
  if (!s.ok()) return ::testing::AssertionFailure() << "Interpret: " << s.ToString();

  RunDir dir;
  dir.Write("kernel.o", *object);
  for (size_t i = 0; i < inputs.size(); ++i) {
    dir.Write("in" + std::to_string(i), inputs[i].data(), size_t(inputs[i].size_bytes()));
  }
  dir.Write("manifest.txt", KernelRunManifest(base, scheduled, [](size_t i) { return "in" + std::to_string(i); }));
  auto [rc, output] = dir.RunDriver();
  if (rc != 0) return ::testing::AssertionFailure() << "the driver exited with " << rc << ":\n" << output;
  for (size_t i = base.num_inputs; i < base.params.size(); ++i) {
    std::string bytes = dir.Read("out" + std::to_string(i));
    HostBuffer& actual = inputs[i];
    if (bytes.size() != size_t(actual.size_bytes())) return ::testing::AssertionFailure() << "short output " << i;
    std::memcpy(actual.data(), bytes.data(), bytes.size());
    CompareResult r = CompareBuffers(actual, expected[i], 1e-3, 1e-3);
    if (!r.equal) {
      return ::testing::AssertionFailure() << base.name << ", buffer " << base.params[i]->name << ": " << r.message
                                           << "\n" << ir::ToString(scheduled);
    }
  }
  return ::testing::AssertionSuccess() << output;
}

TEST(ObjectLoaderAArch64Test, SuiteKernelsUnderQemuMatchTheInterpreter) {
  ASSERT_TRUE(ToolsPresent());
  int parallel = 0, vectorized = 0;
  for (const ir::PrimFunc& base : OddSizedSuite()) {
    std::vector<ir::PrimFunc> programs = {base};
    for (ir::PrimFunc& p : RandomSchedules(base, 41, 2)) programs.push_back(std::move(p));
    for (size_t i = 0; i < programs.size(); ++i) {
      SCOPED_TRACE(base.name + ", program " + std::to_string(i));
      EXPECT_TRUE(RunsUnderQemu(base, programs[i], 100 + i));
      parallel += HasLoopOfKind(programs[i].body, ir::ForKind::kParallel);
      vectorized += HasLoopOfKind(programs[i].body, ir::ForKind::kVectorized);
    }
  }
  EXPECT_GT(parallel, 0);
  EXPECT_GT(vectorized, 0);
}

TEST(ObjectLoaderAArch64Test, APrepackSplitUnderQemuRunsBothEntries) {
  ASSERT_TRUE(ToolsPresent());
  auto f = PackedMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(SplitPrepack(*f).has_value());
  EXPECT_TRUE(RunsUnderQemu(*f, *f, 3));
  CodegenOptions measurement;
  measurement.whole_entry = false;
  EXPECT_TRUE(RunsUnderQemu(*f, *f, 4, measurement));
}

TEST(ObjectLoaderAArch64Test, LibmCallsResolveUnderQemu) {
  ASSERT_TRUE(ToolsPresent());
  CodegenOptions options;
  options.inline_math = false;
  ir::PrimFunc softmax = SuiteWorkload("softmax", {{"M", 5}, {"N", 19}});
  EXPECT_TRUE(RunsUnderQemu(softmax, RandomSchedules(softmax, 5, 1).at(0), 7, options));
}

TEST(ObjectLoaderAArch64Test, HandWrittenRelocationsUnderQemu) {
  ASSERT_TRUE(ToolsPresent());
  RunDir dir;
  dir.Write("relocations.o", ReadTextFile(TUNEFARM_AARCH64_RELOCATIONS));
  // What each function of relocations.S returns (tunefarm_get_num_threads: 3).
  dir.Write("manifest.txt",
            "object relocations.o\n"
            "call_expect 3 got_call\n"
            "call_expect 3 far_jump\n"
            "call_expect 103 far_call\n"
            "call_expect 3 movw_call\n"
            "call_expect 42 const_load\n"
            "call_expect 43 const_add\n"
            "call_expect 87605 ldst_mix\n"
            "call_expect 44 data_pointer\n"
            "call_expect 88 prel_offset\n"
            "call_expect 85 literal_load\n"
            "call_expect 55 cond_branch\n"
            "call_expect 55 test_branch\n"
            "call_expect 1 bss_counter\n"
            "call_expect 2 bss_counter\n");
  auto [rc, output] = dir.RunDriver();
  ASSERT_EQ(rc, 0) << output;
  // far_jump and far_call share the veneer to tunefarm_get_num_threads (the
  // static driver's code lies far below the loader's mapping); got_call has
  // one GOT slot.
  EXPECT_NE(output.find("stubs=1 got_slots=1"), std::string::npos) << output;
}

TEST(ObjectLoaderAArch64Test, RefusalsUnderQemu) {
  ASSERT_TRUE(ToolsPresent());
  auto expect_refused = [](const std::string& object, const std::string& words) {
    RunDir dir;
    dir.Write("k.o", object);
    dir.Write("manifest.txt", "object k.o\nexpect_error " + words + "\n");
    auto [rc, output] = dir.RunDriver();
    EXPECT_EQ(rc, 0) << output;
  };
  auto x86_target = Target::Parse("llvm -mtriple=x86_64-linux-gnu");
  ASSERT_TRUE(x86_target.ok()) << x86_target.status().ToString();
  auto x86 = EmitObject(SuiteWorkload("softmax", {{"M", 3}, {"N", 5}}), *x86_target);
  ASSERT_TRUE(x86.ok()) << x86.status().ToString();
  expect_refused(*x86, "it is for x86-64, and this process runs on AArch64");
  const std::vector<std::pair<uint32_t, std::string>> crafted = {
      {R_AARCH64_CALL26, "undefined symbol 'tunefarm_no_such_symbol'"},
      {R_AARCH64_TLSDESC_CALL, "relocation R_AARCH64_TLSDESC_CALL (569) at section 1 (.text)+0x8"}};
  for (const auto& [type, words] : crafted) {
    ElfBuilder b(EM_AARCH64);
    uint32_t text = b.AddSection(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::string(16, '\0'));
    uint32_t sym = b.AddSymbol("tunefarm_no_such_symbol", STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
    b.AddRelocation(text, 8, type, sym, 0);
    expect_refused(b.Build(), words);
  }
}

}  // namespace
}  // namespace tunefarm::testing
