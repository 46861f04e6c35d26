// Replay errors name the line of the offending instruction in the text the
// trace was parsed from, comments and blank lines included.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

TEST(TraceLinesTest, ReplayErrorsNameTheSourceLine) {
  auto w = ParseWorkload("workload mm(M = 8, N = 8, K = 8) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  const char* text =
      "tunefarm-trace 1\n"
      "# a comment\n"
      "\n"
      "b0 = get_block(\"C\")\n"
      "l0, l1, l2 = get_loops(b0)\n"
      "\n"
      "# the split below is illegal: a factor of 0\n"
      "l3, l4 = split(l0, [0, 8])\n";
  auto trace = Trace::Parse(text);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->instructions()[2].source_line, 8);
  Schedule sch(*f);
  Status st = trace->ApplyTo(sch);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("trace line 8 (split)"), std::string::npos) << st.message();
  // Where an instruction came from does not make traces differ.
  auto reparsed = Trace::Parse(trace->ToText());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_TRUE(*reparsed == *trace);
}

// The list a worker reports to the tuner daemon is the replayer's own: it is
// the list of instructions (trace_instructions.h), once each, every name on
// it is replayed (a call without arguments fails on its arguments, if at all,
// never as an unknown instruction), and a name off it is unknown. That the
// replayer dispatches on every listed kind is the compiler's check (a switch
// without default); trace_instructions_test.cpp replays each one recorded.
TEST(TraceLinesTest, ReplayedInstructionNamesAreTheOnesTheReplayerKnows) {
  auto w = ParseWorkload("workload mm(M = 8, N = 8, K = 8) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  auto replay = [&](const std::string& name) {
    auto trace = Trace::Parse("tunefarm-trace 1\n" + name + "()\n");
    EXPECT_TRUE(trace.ok()) << name << ": " << trace.status().ToString();
    Schedule sch(*f);
    return trace.ok() ? trace->ApplyTo(sch) : trace.status();
  };
  const std::vector<std::string>& names = ReplayedInstructionNames();
  std::set<std::string> listed;
  for (InstructionKind kind : AllInstructionKinds()) listed.insert(InstructionName(kind));
  EXPECT_GE(listed.size(), 20u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), listed);
  EXPECT_EQ(names.size(), listed.size()) << "a name listed twice";
  for (const std::string& name : names) {
    Status st = replay(name);
    EXPECT_EQ(st.message().find("unknown instruction"), std::string::npos) << name << ": " << st.message();
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "pad_input"), names.end());
  Status unknown = replay("no_such_instruction");
  EXPECT_NE(unknown.message().find("unknown instruction 'no_such_instruction'"), std::string::npos)
      << unknown.message();
}

}  // namespace
}  // namespace tunefarm
