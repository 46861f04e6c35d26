// Masked memory intrinsics of a width that is not a power of two: the code
// generator emits them padded to the next power of two, extra lanes off.
// LLVM 16 itself miscompiles a 9-lane llvm.masked.load once the loop around
// it is unrolled: MobileNet-V2's stride-2 depthwise 3x3, read through its
// padded input split into phases, computed wrong values on a Zen 3 host (the
// CPU the x86 JIT targets there) while the interpreter was right.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../codegen_test_util.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

constexpr const char* kDepthwiseStride2 = R"(
workload dws2(N = 1, C = 16, H = 7, W = 7, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[c, r, s]
  output out
}
)";

// A drawn program: the padded input copied per 8 channels into its two
// phases by a 9-lane vectorized loop (X_pad[.., v3 % 2, v3 / 2]), the
// output computed 4 lanes wide from the phases.
constexpr const char* kPhasedTrace = R"(tunefarm-trace 1
b0 = get_block("out")
v0 = sample_categorical([1, 3], probs_micro=[1000000, 1000000]) decision=1
v1 = sample_categorical([0, 1], probs_micro=[1000000, 1000000]) decision=1
b1 = pad_input(b0, 0)
v2 = sample_categorical([0, 1], probs_micro=[1000000, 1000000]) decision=1
b2 = cache_write(b0, "local")
l0, l1, l2, l3, l4, l5 = get_loops(b0)
v3, v4, v5, v6 = sample_perfect_tile(l0, n=4, max_innermost=16) decision=[1, 1, 1, 1]
l6, l7, l8, l9 = split(l0, [v3, v4, v5, v6])
v7, v8 = sample_perfect_tile(l1, n=2, max_innermost=16) decision=[2, 8]
l10, l11, l12, l13 = split(l1, [v7, v8, 1, 1])
v9, v10, v11, v12 = sample_perfect_tile(l2, n=4, max_innermost=16) decision=[2, 2, 1, 1]
l14, l15, l16, l17 = split(l2, [v9, v10, v11, v12])
v13, v14, v15, v16 = sample_perfect_tile(l3, n=4, max_innermost=64) decision=[1, 1, 1, 4]
l18, l19, l20, l21 = split(l3, [v13, v14, v15, v16])
v17, v18 = sample_perfect_tile(l4, n=2, max_innermost=64) decision=[3, 1]
l22, l23 = split(l4, [v17, v18])
v19, v20 = sample_perfect_tile(l5, n=2, max_innermost=64) decision=[1, 3]
l24, l25 = split(l5, [v19, v20])
reorder(l6, l10, l14, l18, l7, l11, l15, l19, l22, l24, l8, l12, l16, l20, l23, l25, l9, l13, l17, l21)
l26 = fuse(l6, l10, l14, l18)
parallel(l26)
vectorize(l21)
v21 = sample_categorical([0, 16, 64, 512], probs_micro=[1000000, 1000000, 1000000, 1000000]) decision=2
annotate(l26, "pragma_auto_unroll_max_step", 64)
v22 = sample_categorical([0, 1], probs_micro=[1000000, 1000000]) decision=1
reverse_compute_at(b2, l19)
l27, l28, l29, l30, l31, l32, l33, l34, l35 = get_loops(b2)
vectorize(l35)
compute_at(b1, l11)
split_phases(b1, 3, 2)
l36, l37, l38, l39, l40, l41, l42 = get_loops(b1)
vectorize(l42)
)";

ir::PrimFunc PhasedDepthwise() {
  auto w = ParseWorkload(kDepthwiseStride2);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  Schedule sch(*f);
  auto trace = Trace::Parse(kPhasedTrace);
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  Status applied = trace->ApplyTo(sch);
  EXPECT_TRUE(applied.ok()) << applied.ToString();
  return sch.func();
}

Target X86(const std::string& cpu) {
  auto t = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=" + cpu);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// Zen 3 unrolls the channel loop around the copy, which is what exposed the
// miscompile; the other CPUs are the generic AVX2 and SSE2 levels.
TEST(CodegenMaskedWidthTest, ThePhasedStrideTwoCopyComputesRightOnX86Cpus) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "the host runs no AVX2 code";
  const ir::PrimFunc f = PhasedDepthwise();
  for (const char* cpu : {"znver3", "x86-64-v3", "x86-64"}) {
    SCOPED_TRACE(cpu);
    auto kernel = JitCompile(f, X86(cpu));
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    for (uint64_t seed : {3, 7}) EXPECT_TRUE(testing::KernelMatchesInterpreter(**kernel, f, seed, 1e-4, 1e-4));
  }
}

// The 9-lane copy's masked loads and scatters reach LLVM 16 lanes wide.
TEST(CodegenMaskedWidthTest, MaskedIntrinsicsArePowerOfTwoWide) {
  CodegenOptions unoptimized;
  unoptimized.opt_level = 0;
  auto ir = EmitLLVMIR(PhasedDepthwise(), X86("x86-64-v3"), unoptimized);
  ASSERT_TRUE(ir.ok()) << ir.status().ToString();
  EXPECT_EQ(ir->find("masked.load.v9"), std::string::npos) << *ir;
  EXPECT_EQ(ir->find("masked.scatter.v9"), std::string::npos) << *ir;
  EXPECT_NE(ir->find("llvm.masked.load.v16f32"), std::string::npos) << *ir;
  EXPECT_NE(ir->find("llvm.masked.scatter.v16f32"), std::string::npos) << *ir;
}

}  // namespace
}  // namespace tunefarm
