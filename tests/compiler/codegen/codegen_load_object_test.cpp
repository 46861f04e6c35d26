// JitLoadObject: an object made by EmitObject and loaded into the JIT computes
// what JitCompile's kernel computes (parallel loops through the runtime,
// vector code, libm calls), and bytes that are no loadable object are clear
// errors, not crashes.
#include <random>

#include "../codegen_test_util.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::testing {
namespace {

// A matmul with an exp epilogue: the outer loops parallel (tunefarm_parallel_for),
// the inner j loop vectorized, exp a libm call (CodegenOptions::inline_math off) or inline.
constexpr const char* kDenseExp = R"(workload dense_exp(M = 48, N = 64, K = 40) {
  A = input f32[M, K]
  W = input f32[N, K]
  acc[i, j] = sum(k: K) A[i, k] * W[j, k]
  out[i, j] = exp(acc[i, j] * 0.05)
  output out
}
)";

ir::PrimFunc ScheduledDenseExp() {
  auto w = ParseWorkload(kDenseExp);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  Schedule sch(*f);
  auto acc = sch.GetBlock("acc");
  EXPECT_TRUE(acc.ok());
  auto loops = sch.GetLoops(*acc);
  EXPECT_TRUE(loops.ok());
  auto j = sch.Split((*loops)[1], {-1, 16});
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_TRUE(sch.Reorder({(*loops)[0], (*j)[0], (*loops)[2], (*j)[1]}).ok());
  EXPECT_TRUE(sch.Vectorize((*j)[1]).ok());
  EXPECT_TRUE(sch.Parallel((*loops)[0]).ok());
  auto out = sch.GetBlock("out");
  EXPECT_TRUE(out.ok());
  auto out_loops = sch.GetLoops(*out);
  EXPECT_TRUE(out_loops.ok());
  EXPECT_TRUE(sch.Parallel((*out_loops)[0]).ok());
  return sch.func();
}

// Runs `kernel` on a copy of `args`; returns the buffers afterwards.
std::vector<HostBuffer> RunOn(const JitKernel& kernel, const std::vector<HostBuffer>& args) {
  std::vector<HostBuffer> bufs = CopyArgs(args);
  Status s = kernel.Run(Pointers(bufs));
  EXPECT_TRUE(s.ok()) << s.ToString();
  return bufs;
}

TEST(JitLoadObjectTest, LoadedObjectComputesWhatJitCompileComputes) {
  ir::PrimFunc f = ScheduledDenseExp();
  Target host = Target::Host();
  // exp as libm's expf (its inline form calls nothing): the object needs the
  // runtime and libm from the loading process.
  CodegenOptions libm_calls;
  libm_calls.inline_math = false;
  auto object = EmitObject(f, host, libm_calls);
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  EXPECT_NE(object->find("tunefarm_parallel_for"), std::string::npos);
  EXPECT_NE(object->find("expf"), std::string::npos);
  auto loaded = JitLoadObject(*object, f, host);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  object->clear();  // the JIT keeps its own copy
  object->shrink_to_fit();
  auto compiled = JitCompile(f, host, libm_calls);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ((*loaded)->name(), f.name);

  for (uint64_t seed : {1u, 2u, 3u}) {
    std::vector<HostBuffer> args = RandomArgs(f, seed);
    std::vector<HostBuffer> from_object = RunOn(**loaded, args);
    std::vector<HostBuffer> from_jit = RunOn(**compiled, args);
    // Same machine code, same inputs: the same bits.
    EXPECT_TRUE(OutputsEqual(f, from_object, from_jit, 0, 0)) << "seed " << seed;
    // And both right, not merely equal.
    EXPECT_TRUE(KernelMatchesInterpreter(**loaded, f, seed, 1e-4, 1e-4)) << "seed " << seed;
  }
  // The parameter count is checked like JitCompile's.
  std::vector<HostBuffer> args = RandomArgs(f, 9);
  std::vector<void*> too_few = Pointers(args);
  too_few.pop_back();
  EXPECT_EQ((*loaded)->Run(too_few).code(), StatusCode::kInvalidArgument);
}

TEST(JitLoadObjectTest, GarbageTruncatedAndEmptyBytesAreInvalid) {
  ir::PrimFunc f = ScheduledDenseExp();
  Target host = Target::Host();
  auto object = EmitObject(f, host);
  ASSERT_TRUE(object.ok()) << object.status().ToString();

  std::string garbage(4096, '\0');
  std::mt19937 rng(5);
  for (char& c : garbage) c = char(rng());
  auto r = JitLoadObject(garbage, f, host);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("not a valid object file"), std::string::npos) << r.status().ToString();

  // An ELF header whose section table lies past the end of the bytes.
  r = JitLoadObject(object->substr(0, 200), f, host);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();

  r = JitLoadObject("", f, host);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

TEST(JitLoadObjectTest, ForeignArchitectureWrongSymbolAndForeignTargetAreRefused) {
  ir::PrimFunc f = ScheduledDenseExp();
  Target host = Target::Host();
  auto arm = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  ASSERT_TRUE(arm.ok()) << arm.status().ToString();
  auto arm_object = EmitObject(f, *arm);
  ASSERT_TRUE(arm_object.ok()) << arm_object.status().ToString();
  auto r = JitLoadObject(*arm_object, f, host);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("aarch64"), std::string::npos) << r.status().ToString();

  auto object = EmitObject(f, host);
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  ir::PrimFunc renamed = f;
  renamed.name = "no_such_kernel";
  r = JitLoadObject(*object, renamed, host);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no_such_kernel"), std::string::npos) << r.status().ToString();

  // Running needs this host as the target, as for JitCompile.
  r = JitLoadObject(*object, f, *arm);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

}  // namespace
}  // namespace tunefarm::testing
