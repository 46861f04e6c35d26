// LoadObject on the objects the code generator writes for this machine:
// suite workloads at odd and shrunk sizes, default and random schedules from
// the sketch rules, prepack splits called as PreparedCall calls them, objects
// without the whole entry (measurement), several kernels and a sequence in
// one object, libm calls; each kernel run on random inputs and compared with
// the reference interpreter. Also what the mapping looks like: code never
// writable, and gone once the LoadedObject is.
#include <algorithm>
#include <cstdlib>

#include "object_loader_test_util.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::testing {
namespace {

Result<std::unique_ptr<LoadedObject>> EmitAndLoad(const ir::PrimFunc& f, const CodegenOptions& options = {}) {
  TF_ASSIGN_OR_RETURN(std::string bytes, EmitObject(f, Target::Host(), options));
  return LoadObject(bytes);
}

// What the checked programs held, so that each test can say its kernels
// exercised what it meant to.
struct Coverage {
  int parallel = 0, vectorized = 0, split = 0;
};

void CheckSuite(const std::vector<ir::PrimFunc>& suite, int random_schedules, uint64_t seed, Coverage& seen) {
  for (const ir::PrimFunc& base : suite) {
    std::vector<ir::PrimFunc> programs = {base};
    for (ir::PrimFunc& p : RandomSchedules(base, seed, random_schedules)) programs.push_back(std::move(p));
    for (size_t i = 0; i < programs.size(); ++i) {
      SCOPED_TRACE(base.name + ", program " + std::to_string(i));
      const ir::PrimFunc& f = programs[i];
      auto loaded = EmitAndLoad(f);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString() << "\n" << ir::ToString(f);
      EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, base, f, /*whole_entry=*/true, seed + i));
      seen.parallel += HasLoopOfKind(f.body, ir::ForKind::kParallel);
      seen.vectorized += HasLoopOfKind(f.body, ir::ForKind::kVectorized);
      seen.split += SplitPrepack(f).has_value();
    }
  }
}

TEST(ObjectLoaderTest, SuiteKernelsAtOddSizesMatchTheInterpreter) {
  Coverage seen;
  CheckSuite(OddSizedSuite(), 3, 17, seen);
  EXPECT_GT(seen.parallel, 0);
  EXPECT_GT(seen.vectorized, 0);
  EXPECT_GT(seen.split, 0);
}

TEST(ObjectLoaderTest, SuiteKernelsAtShrunkSizesMatchTheInterpreter) {
  std::vector<ir::PrimFunc> suite;
  for (const std::string name : {"gmm_512", "c2d_resnet_3x3", "dep_3x3_c256_28", "softmax", "layer_norm",
                                 "dense_bias_relu"}) {
    std::string path = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf";
    auto w = ShrinkWorkload(ReadTextFile(path), path, {}, 2e5);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto f = LowerToPrimFunc(*w);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    suite.push_back(*f);
  }
  Coverage seen;
  CheckSuite(suite, 1, 29, seen);
  EXPECT_GT(seen.parallel, 0);
}

TEST(ObjectLoaderTest, APrepackSplitRunsThroughBothEntriesAndTheWholeOne) {
  auto f = PackedMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(SplitPrepack(*f).has_value());
  auto loaded = EmitAndLoad(*f);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, *f, *f, /*whole_entry=*/true, 5));
}

TEST(ObjectLoaderTest, AMeasurementObjectHasOnlyTheSplitEntries) {
  auto f = PackedMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  CodegenOptions options;
  options.whole_entry = false;
  auto loaded = EmitAndLoad(*f, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto whole = (*loaded)->Symbol(f->name + "_packed");
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().code(), StatusCode::kNotFound);
  EXPECT_NE(whole.status().message().find(f->name + "_packed"), std::string::npos) << whole.status().message();
  EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, *f, *f, /*whole_entry=*/false, 6));
}

TEST(ObjectLoaderTest, MathThroughTheCLibraryResolvesLibm) {
  CodegenOptions options;
  options.inline_math = false;
  for (const ir::PrimFunc& base : {SuiteWorkload("softmax", {{"M", 5}, {"N", 19}}),
                                   SuiteWorkload("layer_norm", {{"M", 3}, {"N", 21}})}) {
    SCOPED_TRACE(base.name);
    auto bytes = EmitObject(base, Target::Host(), options);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    std::vector<std::string> wanted = base.name == "softmax" ? std::vector<std::string>{"expf"}
                                                             : std::vector<std::string>{};
    for (const std::string& name : wanted) EXPECT_NE(bytes->find(name), std::string::npos) << name;
    std::vector<std::string> asked;
    auto loaded = LoadObject(*bytes, [&asked](const std::string& name) {
      asked.push_back(name);
      return ResolveRuntimeSymbol(name);
    });
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (const std::string& name : wanted) {
      EXPECT_NE(std::find(asked.begin(), asked.end(), name), asked.end()) << name << " was never resolved";
    }
    EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, base, base, true, 8));
  }
}

TEST(ObjectLoaderTest, SeveralKernelsAndASequenceInOneObject) {
  ir::PrimFunc softmax = SuiteWorkload("softmax", {{"M", 6}, {"N", 23}});
  ir::PrimFunc norm = SuiteWorkload("layer_norm", {{"M", 4}, {"N", 29}});
  std::vector<ir::PrimFunc> funcs = {RandomSchedules(softmax, 3, 1).at(0), RandomSchedules(norm, 4, 1).at(0)};
  SequenceEntry both{"both", {{softmax.name, {0, 1}}, {norm.name, {2, 3, 4, 5}}}};
  auto bytes = EmitCombinedObject(funcs, {both}, Target::Host());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto loaded = LoadObject(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, softmax, funcs[0], true, 9));
  EXPECT_TRUE(LoadedMatchesInterpreter(**loaded, norm, funcs[1], true, 10));

  std::vector<HostBuffer> a = RandomArgs(softmax, 11), b = RandomArgs(norm, 12);
  std::vector<HostBuffer> expected_a = CopyArgs(a), expected_b = CopyArgs(b);
  ASSERT_TRUE(Interpret(softmax, HostPointers(expected_a)).ok());
  ASSERT_TRUE(Interpret(norm, HostPointers(expected_b)).ok());
  std::vector<void*> slots = Pointers(a);
  for (void* p : Pointers(b)) slots.push_back(p);
  auto sequence = (*loaded)->Symbol("both");
  ASSERT_TRUE(sequence.ok()) << sequence.status().ToString();
  ASSERT_EQ(reinterpret_cast<int32_t (*)(void* const*)>(*sequence)(slots.data()), 0);
  EXPECT_TRUE(OutputsEqual(softmax, a, expected_a, 1e-3, 1e-3));
  EXPECT_TRUE(OutputsEqual(norm, b, expected_b, 1e-3, 1e-3));
}

TEST(ObjectLoaderTest, DataIsPlacedAlignedAndWeakSymbolsMayStayUndefined) {
  // .rodata aligned beyond a page; .data holding the address of a symbol in
  // it, of a weak undefined symbol nothing resolves (null), and of one the
  // resolver gives.
  ElfBuilder b(kHostMachine);
  uint32_t rodata = b.AddSection(".rodata", SHT_PROGBITS, SHF_ALLOC, std::string(40, 'x'), 32768);
  uint32_t data = b.AddSection(".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, std::string(24, '\0'), 8);
  uint32_t table = b.AddSymbol("table", STB_GLOBAL, STT_OBJECT, uint16_t(rodata), 8);
  b.AddSymbol("pointers", STB_GLOBAL, STT_OBJECT, uint16_t(data), 0);
  uint32_t weak = b.AddSymbol("tunefarm_maybe", STB_WEAK, STT_NOTYPE, SHN_UNDEF, 0);
  uint32_t alloc = b.AddSymbol("tunefarm_alloc", STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0);
  b.AddRelocation(data, 0, kAbs64Type, table, 4);
  b.AddRelocation(data, 8, kAbs64Type, weak, 0);
  b.AddRelocation(data, 16, kAbs64Type, alloc, 0);
  auto loaded = LoadObject(b.Build());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto table_at = (*loaded)->Symbol("table");
  auto pointers = (*loaded)->Symbol("pointers");
  ASSERT_TRUE(table_at.ok() && pointers.ok());
  EXPECT_EQ((reinterpret_cast<uintptr_t>(*table_at) - 8) % 32768, 0u);
  const uintptr_t* words = static_cast<const uintptr_t*>(*pointers);
  EXPECT_EQ(words[0], reinterpret_cast<uintptr_t>(*table_at) + 4);
  EXPECT_EQ(words[1], 0u);
  EXPECT_EQ(words[2], reinterpret_cast<uintptr_t>(&tunefarm_alloc));
  EXPECT_EQ(PermissionsAt(*table_at), "r--p");
  EXPECT_EQ(PermissionsAt(*pointers), "rw-p");
}

TEST(ObjectLoaderTest, CodeIsNeverWritableAndTheImageGoesWithTheObject) {
  // A schedule whose object calls the thread pool.
  ir::PrimFunc base = SuiteWorkload("gmm_512", {{"M", 24}, {"N", 16}, {"K", 8}});
  std::string bytes;
  for (const ir::PrimFunc& f : RandomSchedules(base, 2, 8)) {
    auto emitted = EmitObject(f, Target::Host());
    ASSERT_TRUE(emitted.ok()) << emitted.status().ToString();
    if (emitted->find("tunefarm_parallel_for") != std::string::npos) {
      bytes = *emitted;
      break;
    }
  }
  ASSERT_FALSE(bytes.empty()) << "no schedule among 8 calls tunefarm_parallel_for";
  auto loaded = LoadObject(bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto entry = (*loaded)->Symbol(base.name + "_packed");
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(PermissionsAt(*entry), "r-xp");
  // The runtime lies in this executable, the image among the shared
  // libraries' mappings, beyond a call's ±2 GiB: the call takes a stub.
  int64_t distance = reinterpret_cast<int64_t>(&tunefarm_parallel_for) - reinterpret_cast<int64_t>(*entry);
  ASSERT_GT(std::llabs(distance), int64_t(1) << 31) << "the image landed next to this executable";
  EXPECT_GT((*loaded)->stats().stubs, 0u);
  EXPECT_GT((*loaded)->stats().relocations, 0u);
  void* address = *entry;
  loaded->reset();
  EXPECT_EQ(PermissionsAt(address), "");
}

}  // namespace
}  // namespace tunefarm::testing
