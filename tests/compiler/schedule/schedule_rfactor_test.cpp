// rfactor, storage_align and sample_compute_location: run the scheduled and
// the default program on random inputs and compare.
#include <gtest/gtest.h>

#include <cstring>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

constexpr const char* kRowSum = R"(
workload rowsum(M = 6, K = 40) {
  A = input f32[M, K]
  S[i, j: 1] = sum(k: K) A[i, k] * A[i, k] + f32(j)
  output S
}
)";

constexpr const char* kTwoStage = R"(
workload two_stage(M = 12, N = 20) {
  A = input f32[M, N]
  B[i, j] = A[i, j] * 2.0
  C[i, j] = B[i, j] + 1.0
  output C
}
)";

ir::PrimFunc Default(const char* text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok());
  return *f;
}

// Interprets `reference` and runs `scheduled` both interpreted and JIT-compiled.
void ExpectSameResults(const ir::PrimFunc& reference, const ir::PrimFunc& scheduled) {
  std::mt19937_64 rng(11);
  std::vector<HostBuffer> ref, interp, jit;
  for (size_t i = 0; i < reference.params.size(); ++i) {
    ref.push_back(HostBuffer::Like(reference.params[i]));
    if (i < reference.num_inputs) ref.back().FillRandom(rng);
    interp.push_back(HostBuffer::Like(reference.params[i]));
    jit.push_back(HostBuffer::Like(reference.params[i]));
    if (i < reference.num_inputs) {
      std::memcpy(interp.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
      std::memcpy(jit.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
    }
  }
  std::vector<HostBuffer*> ref_p, interp_p;
  std::vector<void*> jit_p;
  for (auto& b : ref) ref_p.push_back(&b);
  for (auto& b : interp) interp_p.push_back(&b);
  for (auto& b : jit) jit_p.push_back(b.data());
  ASSERT_TRUE(Interpret(reference, ref_p).ok());
  Status st = Interpret(scheduled, interp_p);
  ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << ir::ToString(scheduled);
  auto kernel = JitCompile(scheduled, Target::Host());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  ASSERT_TRUE((*kernel)->Run(jit_p).ok());
  for (size_t i = reference.num_inputs; i < reference.params.size(); ++i) {
    auto a = CompareBuffers(interp[i], ref[i], 1e-4, 1e-4);
    EXPECT_TRUE(a.equal) << "interpreted: " << a.message << "\n" << ir::ToString(scheduled);
    auto b = CompareBuffers(jit[i], ref[i], 1e-4, 1e-4);
    EXPECT_TRUE(b.equal) << "compiled: " << b.message;
  }
}

TEST(ScheduleRFactorTest, FactoredInnerReductionLoopVectorizes) {
  ir::PrimFunc f = Default(kRowSum);
  Schedule sch(f);
  auto s = sch.GetBlock("S");
  ASSERT_TRUE(s.ok());
  auto loops = sch.GetLoops(*s);
  ASSERT_TRUE(loops.ok());
  auto ks = sch.Split((*loops)[2], {-1, 8});
  ASSERT_TRUE(ks.ok());
  auto rf = sch.RFactor((*ks)[1], 2);
  ASSERT_TRUE(rf.ok()) << rf.status().ToString();
  // The factored loop is now spatial for the rf block: vectorize it.
  auto rf_loops = sch.GetLoops(*rf);
  ASSERT_TRUE(rf_loops.ok());
  ASSERT_TRUE(sch.Reorder({(*rf_loops)[0], (*rf_loops)[1], (*rf_loops)[2], (*rf_loops)[3]}).ok());
  Status v = sch.Vectorize((*rf_loops)[3]);
  ASSERT_TRUE(v.ok()) << v.ToString() << "\n" << ir::ToString(sch.func());
  EXPECT_NE(ir::ToString(sch.func()).find("S_rf"), std::string::npos);
  ExpectSameResults(f, sch.func());
}

TEST(ScheduleRFactorTest, NonDivisibleSplitThenRFactor) {
  ir::PrimFunc f = Default(kRowSum);
  Schedule sch(f);
  auto loops = sch.GetLoops(*sch.GetBlock("S"));
  auto ks = sch.Split((*loops)[2], {-1, 6});  // 40 = 7 * 6 - 2: guarded
  ASSERT_TRUE(ks.ok());
  auto rf = sch.RFactor((*ks)[1], 0);
  ASSERT_TRUE(rf.ok()) << rf.status().ToString();
  ExpectSameResults(f, sch.func());
}

TEST(ScheduleRFactorTest, IllegalRFactorsAreRejectedAndChangeNothing) {
  ir::PrimFunc f = Default(kRowSum);
  Schedule sch(f);
  auto loops = sch.GetLoops(*sch.GetBlock("S"));
  std::string before = ir::ToString(sch.func());
  size_t trace_size = sch.trace().size();
  auto spatial = sch.RFactor((*loops)[0], 0);
  ASSERT_FALSE(spatial.ok());
  EXPECT_NE(spatial.status().message().find("not a reduction loop"), std::string::npos) << spatial.status().message();
  auto axis = sch.RFactor((*loops)[2], 7);
  ASSERT_FALSE(axis.ok());
  EXPECT_NE(axis.status().message().find("factor axis"), std::string::npos);
  EXPECT_EQ(ir::ToString(sch.func()), before);
  EXPECT_EQ(sch.trace().size(), trace_size);
}

TEST(ScheduleStorageAlignTest, PaddedIntermediateKeepsResults) {
  ir::PrimFunc f = Default(kTwoStage);
  Schedule sch(f);
  auto b = sch.GetBlock("B");
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(sch.StorageAlign(*b, 0, 16, 4).ok());
  std::string text = ir::ToString(sch.func());
  EXPECT_NE(text.find("allocate B: f32[12, 20]"), std::string::npos) << text;  // 20 % 16 == 4 already
  Schedule sch2(f);
  ASSERT_TRUE(sch2.StorageAlign(*sch2.GetBlock("B"), 0, 32, 1).ok());
  EXPECT_NE(ir::ToString(sch2.func()).find("allocate B: f32[12, 33]"), std::string::npos) << ir::ToString(sch2.func());
  ExpectSameResults(f, sch2.func());
  auto bad = sch2.StorageAlign(*sch2.GetBlock("C"), 0, 16, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("function parameter"), std::string::npos);
}

TEST(ScheduleComputeLocationTest, EverySampledLocationIsCorrectAndReplays) {
  ir::PrimFunc f = Default(kTwoStage);
  for (int64_t decision = -1; decision < 2; ++decision) {
    Schedule sch(f);
    auto b = sch.GetBlock("B");
    auto loc = sch.SampleComputeLocation(*b, decision);
    ASSERT_TRUE(loc.ok()) << loc.status().ToString();
    Status st = sch.ComputeAt(*b, *loc);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectSameResults(f, sch.func());
    // Replay from text.
    auto trace = Trace::Parse(sch.trace().ToText());
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    Schedule replay(f);
    ASSERT_TRUE(trace->ApplyTo(replay).ok());
    EXPECT_EQ(ir::ToString(replay.func()), ir::ToString(sch.func()));
  }
  Schedule sch(f);
  auto bad = sch.SampleComputeLocation(*sch.GetBlock("B"), 5);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("candidate loops"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm
