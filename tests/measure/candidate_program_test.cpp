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
  ASSERT_TRUE(p.workload.has_value());
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
    EXPECT_FALSE(p.workload.has_value()) << c.what;
  }
}

}  // namespace
}  // namespace tunefarm::testing
