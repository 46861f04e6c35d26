// PrepareCandidateProgram: the program a measurement request names, as the
// runner and the tuner daemon's builds both start from it. A good request
// gives the replayed program; each bad part gives invalid_candidate with a
// message naming that part.
#include "tunefarm/measure/candidate_program.h"

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "measure_test_util.h"

namespace tunefarm::testing {
namespace {

const std::string kMatmul = MatmulText(32, 64, 32);

TEST(CandidateProgramTest, ReplaysTheTraceOnTheLoweredWorkload) {
  const std::string trace = VectorizedMatmulTrace(kMatmul);
  CandidateProgram p = PrepareCandidateProgram(Candidate("vec", kMatmul, trace));
  ASSERT_TRUE(p.ok()) << p.error_message;
  ASSERT_NE(p.workload, nullptr);
  EXPECT_EQ(p.workload->name, "matmul");
  EXPECT_TRUE(p.target.is_host());

  // The same program a replay by hand gives, and not the default one.
  auto f = LowerToPrimFunc(*p.workload);
  ASSERT_TRUE(f.ok());
  Schedule sch(*f);
  ASSERT_TRUE(Trace::Parse(trace)->ApplyTo(sch).ok());
  EXPECT_EQ(ir::ToString(p.func), ir::ToString(sch.func()));
  EXPECT_NE(ir::ToString(p.func), ir::ToString(*f));
  EXPECT_NE(ir::ToString(p.func).find("vectorized"), std::string::npos);

  // No trace: the default program. Another machine's target is kept, not refused.
  MeasureInput board = Candidate("default", kMatmul);
  board.target = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon";
  CandidateProgram d = PrepareCandidateProgram(board);
  ASSERT_TRUE(d.ok()) << d.error_message;
  EXPECT_EQ(ir::ToString(d.func), ir::ToString(*f));
  EXPECT_FALSE(d.target.is_host());

  // The runner's view: another machine's target is refused before anything
  // else of the candidate is looked at (here, a trace that does not apply).
  board.trace_text = "tunefarm-trace 1\nb0 = get_block(\"no_such_block\")\n";
  CandidateProgram refused = PrepareCandidateProgram(board, /*host_only=*/true);
  EXPECT_EQ(refused.error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(refused.error_message.find("cannot run on this machine"), std::string::npos) << refused.error_message;
}

TEST(CandidateProgramTest, EachBadPartIsAnInvalidCandidateNamingIt) {
  struct Case {
    const char* what;
    MeasureInput input;
    const char* names;  // what the message must contain
  };
  MeasureInput bad_target = Candidate("bad-target", kMatmul);
  bad_target.target = "llvm -mcpu";
  std::vector<Case> cases = {
      {"workload", Candidate("bad-workload", "workload w(N = 4) {\n  A = input f32[N]\n  B[i] = A[j]\n  output B\n}\n"),
       "workload:"},
      {"target", bad_target, "target:"},
      {"trace text", Candidate("bad-trace", kMatmul, "tunefarm-trace 1\nthis is not a trace\n"), "trace:"},
      {"trace that does not apply",
       Candidate("wrong-block", kMatmul, "tunefarm-trace 1\nb0 = get_block(\"no_such_block\")\n"), "no_such_block"},
  };
  for (const Case& c : cases) {
    CandidateProgram p = PrepareCandidateProgram(c.input);
    EXPECT_EQ(p.error, MeasureErrorKind::kInvalidCandidate) << c.what << ": " << p.error_message;
    EXPECT_NE(p.error_message.find(c.names), std::string::npos) << c.what << ": " << p.error_message;
    EXPECT_EQ(p.workload, nullptr) << c.what;
  }
}

TEST(CandidateProgramTest, ABatchLowersEachWorkloadOnceAndReplaysEachTrace) {
  const std::string other = MatmulText(17, 9, 23);
  CandidatePrograms programs;
  const std::string trace = VectorizedMatmulTrace(kMatmul);
  std::vector<MeasureInput> batch = {Candidate("a", kMatmul, trace), Candidate("b", kMatmul),
                                     Candidate("c", other), Candidate("d", kMatmul, trace)};
  std::vector<CandidateProgram> prepared;
  for (const MeasureInput& in : batch) prepared.push_back(programs.Prepare(in));
  EXPECT_EQ(programs.lowered_workloads(), 2);
  for (size_t i = 0; i < batch.size(); ++i) {
    ASSERT_TRUE(prepared[i].ok()) << batch[i].candidate_id << ": " << prepared[i].error_message;
    // The same program a candidate prepared on its own gives.
    CandidateProgram alone = PrepareCandidateProgram(batch[i]);
    EXPECT_EQ(ir::ToString(prepared[i].func), ir::ToString(alone.func)) << batch[i].candidate_id;
  }
  EXPECT_EQ(prepared[0].workload, prepared[1].workload);  // one parsed workload, shared
  EXPECT_NE(prepared[0].workload, prepared[2].workload);
  EXPECT_NE(ir::ToString(prepared[0].func), ir::ToString(prepared[1].func));  // traced vs default

  // A workload that does not parse fails every candidate naming it, alike,
  // without another attempt; another target is another entry.
  const std::string broken = "workload w(N = 4) {\n  A = input f32[N]\n  B[i] = A[j]\n  output B\n}\n";
  CandidateProgram first = programs.Prepare(Candidate("e", broken));
  CandidateProgram second = programs.Prepare(Candidate("f", broken, trace));
  EXPECT_EQ(first.error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_EQ(second.error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_EQ(first.error_message, second.error_message);
  MeasureInput board = Candidate("g", kMatmul);
  board.target = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon";
  EXPECT_TRUE(programs.Prepare(board).ok());
  EXPECT_EQ(programs.lowered_workloads(), 4);

  // An input that carries its trace as an object is replayed from it: the
  // same program as from its text, and its text is not read.
  MeasureInput typed = Candidate("h", kMatmul);
  auto parsed = Trace::Parse(trace);
  ASSERT_TRUE(parsed.ok());
  typed.trace = std::make_shared<const Trace>(std::move(*parsed));
  CandidateProgram from_object = programs.Prepare(typed);
  ASSERT_TRUE(from_object.ok()) << from_object.error_message;
  EXPECT_EQ(ir::ToString(from_object.func), ir::ToString(prepared[0].func));
}

}  // namespace
}  // namespace tunefarm::testing
