// The list of trace instructions (trace_instructions.h) against what the
// schedule records and the replayer replays: every listed instruction is
// recorded by a primitive and replays to the same program and trace; every
// name prints and parses back to its kind, byte for byte; a name off the
// list parses but is not replayed; the workers that predate the list are
// held to the instructions of their version.
#include <set>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"

namespace tunefarm::testing {
namespace {

constexpr std::string_view kRowSum = R"(
workload rowsum(M = 6, K = 40) {
  A = input f32[M, K]
  S[i, j: 1] = sum(k: K) A[i, k] * A[i, k] + f32(j)
  output S
}
)";

constexpr std::string_view kTwoStage = R"(
workload two_stage(M = 12, N = 20) {
  A = input f32[M, N]
  B[i, j] = A[i, j] * 2.0
  C[i, j] = B[i, j] + 1.0
  output C
}
)";

struct Scenario {
  std::string name;
  std::string_view workload;
  Overrides overrides;
  ScheduleSteps steps;
};

// Between them, schedules that record every primitive there is.
std::vector<Scenario> Scenarios() {
  return {
      {"tile", kMatmul, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
         TF_ASSIGN_OR_RETURN(auto t, sch.SamplePerfectTile(l[0], 2, 8));
         TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {t[0], t[1]}));
         TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
         TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
         TF_ASSIGN_OR_RETURN(LoopRV outer, sch.Fuse({i[0], j[0]}));
         TF_RETURN_IF_ERROR(sch.Parallel(outer));
         TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
         TF_RETURN_IF_ERROR(sch.Unroll(i[1]));
         TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical({0, 16, 64}, {0.25, 0.5, 0.25}));
         return sch.Annotate(outer, "pragma_auto_unroll_max_step", sch.Get(unroll));
       }},
      {"cache_read", kMatmul, {{"M", 12}, {"K", 10}},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kLocal));
         TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
         TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 4}));
         return sch.ComputeAt(a_copy, i[0]);
       }},
      {"cache_write", kMatmul, {{"M", 12}, {"N", 20}, {"K", 9}},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
         TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
         TF_ASSIGN_OR_RETURN(auto i, sch.Split(l[0], {-1, 3}));
         TF_ASSIGN_OR_RETURN(auto j, sch.Split(l[1], {-1, 4}));
         TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], l[2], i[1], j[1]}));
         return sch.ReverseComputeAt(write_back, j[0]);
       }},
      {"pack_layout", kMatmul, {{"N", 32}, {"K", 6}},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
         return sch.PackLayout(b_copy, 1, 16, 0);
       }},
      {"pad_axis", kMatmul, {{"N", 13}, {"K", 6}},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_RETURN_IF_ERROR(sch.CacheRead(c, 1, ir::MemoryScope::kGlobal).status());
         TF_RETURN_IF_ERROR(sch.CacheWrite(c, ir::MemoryScope::kLocal).status());
         return sch.PadAxis(c, 1, 16);
       }},
      {"split_phases", kMatmul, {{"K", 6}},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(BlockRV a_copy, sch.CacheRead(c, 0, ir::MemoryScope::kGlobal));
         return sch.SplitPhases(a_copy, 1, 2);
       }},
      {"bind", kMatmul, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
         TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(c));
         return sch.Bind(l[0], "blockIdx.x");
       }},
      {"compute_inline", kBiasRelu, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV t, sch.GetBlock("t"));
         return sch.ComputeInline(t);
       }},
      {"reverse_compute_inline", kBiasRelu, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
         return sch.ReverseComputeInline(out);
       }},
      {"pad_input", kGuardedConv, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("out"));
         return sch.PadInput(b, 0).status();
       }},
      {"rfactor", kRowSum, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV s, sch.GetBlock("S"));
         TF_ASSIGN_OR_RETURN(auto l, sch.GetLoops(s));
         TF_ASSIGN_OR_RETURN(auto k, sch.Split(l[2], {-1, 8}));
         return sch.RFactor(k[1], 2).status();
       }},
      {"storage_align", kTwoStage, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("B"));
         return sch.StorageAlign(b, 0, 32, 1);
       }},
      {"sample_compute_location", kTwoStage, {},
       [](Schedule& sch) -> Status {
         TF_ASSIGN_OR_RETURN(BlockRV b, sch.GetBlock("B"));
         TF_ASSIGN_OR_RETURN(LoopRV at, sch.SampleComputeLocation(b, 1));
         return sch.ComputeAt(b, at);
       }},
  };
}

// Every listed instruction is recorded by its primitive with its kind and
// the kind's name and decision, and the recorded traces replay (through their
// text) to the same trace and program: the replayer has a case for each.
TEST(TraceInstructionsTest, EveryListedInstructionIsRecordedAndReplays) {
  std::set<InstructionKind> recorded;
  for (const Scenario& s : Scenarios()) {
    SCOPED_TRACE(s.name);
    auto base = LowerText(s.workload, s.overrides);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    Schedule sch(*base, 1);
    Status st = s.steps(sch);
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << sch.trace().ToText();
    for (const Instruction& inst : sch.trace().instructions()) {
      ASSERT_TRUE(inst.kind.has_value()) << inst.name;
      EXPECT_EQ(inst.name, InstructionName(*inst.kind));
      EXPECT_EQ(inst.has_decision, IsSamplingInstruction(*inst.kind)) << inst.name;
      recorded.insert(*inst.kind);
    }
    EXPECT_TRUE(ReplaysIdentically(*base, sch));
  }
  for (InstructionKind kind : AllInstructionKinds()) {
    EXPECT_TRUE(recorded.count(kind)) << InstructionName(kind) << " is recorded by no scenario here: add one";
  }
  EXPECT_EQ(recorded.size(), AllInstructionKinds().size());
}

// Names and kinds are one-to-one, and the replayer's list is the whole list.
TEST(TraceInstructionsTest, NamesAndKindsCorrespond) {
  const std::vector<InstructionKind>& kinds = AllInstructionKinds();
  EXPECT_EQ(kinds.size(), 25u);
  std::set<std::string> names;
  for (InstructionKind kind : kinds) {
    std::string name = InstructionName(kind);
    EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
    EXPECT_EQ(ParseInstructionKind(name), kind) << name;
  }
  EXPECT_EQ(std::set<InstructionKind>(kinds.begin(), kinds.end()).size(), kinds.size());
  std::vector<std::string> in_order;
  for (InstructionKind kind : kinds) in_order.push_back(InstructionName(kind));
  EXPECT_EQ(ReplayedInstructionNames(), in_order);
  EXPECT_FALSE(ParseInstructionKind("no_such_instruction").has_value());
  EXPECT_FALSE(ParseInstructionKind("").has_value());
  EXPECT_FALSE(ParseInstructionKind("Split").has_value());
}

// Each name alone on a line, as recorded and as parsed, prints the same text;
// a sampling instruction's decision prints bare where it is a scalar and in
// brackets where it is a list.
TEST(TraceInstructionsTest, EveryNamePrintsAndParsesBackToItsKind) {
  for (InstructionKind kind : AllInstructionKinds()) {
    const std::string name = InstructionName(kind);
    Instruction inst(kind, {TraceArg::Ref("l0"), TraceArg::Int(4).Named("n")}, {"v1"});
    std::string expected = "tunefarm-trace 1\nv1 = " + name + "(l0, n=4)";
    if (IsSamplingInstruction(kind)) {
      inst.decision = {3};
      inst.has_decision = true;
      expected += DecisionOf(kind) == InstructionDecision::kScalar ? " decision=3" : " decision=[3]";
    }
    expected += "\n";
    Trace trace;
    trace.Append(inst);
    EXPECT_EQ(trace.ToText(), expected);
    auto parsed = Trace::Parse(expected);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    ASSERT_EQ(parsed->size(), 1u);
    const Instruction& back = parsed->instructions()[0];
    EXPECT_EQ(back.kind, kind) << name;
    EXPECT_EQ(back.name, name);
    EXPECT_TRUE(back == inst) << name;
    EXPECT_EQ(parsed->ToText(), expected);
    // Built by name, as a hand-written trace would be, it is the same instruction.
    Instruction by_name(name, inst.args, inst.outputs, inst.decision, inst.has_decision);
    EXPECT_EQ(by_name.kind, kind);
    EXPECT_TRUE(by_name == inst);
  }
}

// A name off the list parses (the text may be another tunefarm's), prints
// back unchanged, and is InvalidArgument naming its line when replayed.
TEST(TraceInstructionsTest, UnknownNameParsesButIsNotReplayed) {
  auto base = LowerText(kMatmul);
  ASSERT_TRUE(base.ok());
  const std::string text = "tunefarm-trace 1\nb0 = get_block(\"C\")\n# next: not an instruction\nfrobnicate(b0, 2)\n";
  auto trace = Trace::Parse(text);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->size(), 2u);
  EXPECT_FALSE(trace->instructions()[1].kind.has_value());
  EXPECT_EQ(trace->ToText(), "tunefarm-trace 1\nb0 = get_block(\"C\")\nfrobnicate(b0, 2)\n");
  Schedule sch(*base);
  EXPECT_TRUE(IsInvalid(trace->ApplyTo(sch), {"trace line 4 (frobnicate)", "unknown instruction 'frobnicate'"}));
  // Built in memory, it counts its line from the header.
  Trace in_memory;
  in_memory.Append(Instruction("frobnicate", {}, {}, {}, false));
  EXPECT_FALSE(in_memory.instructions()[0].kind.has_value());
  Schedule fresh(*base);
  EXPECT_TRUE(IsInvalid(in_memory.ApplyTo(fresh), {"trace line 2 (frobnicate)", "unknown instruction"}));
}

// A worker that joined without listing its instructions is taken to replay
// those of its version, fixed: a later instruction is not among them.
TEST(TraceInstructionsTest, UnlistedWorkersReplayTheFirstVersionsInstructions) {
  const std::set<std::string> kFirstVersion = {
      "get_block",      "get_loops",           "split",         "reorder",     "fuse",
      "parallel",       "vectorize",           "unroll",        "bind",        "annotate",
      "compute_at",     "reverse_compute_at",  "compute_inline", "reverse_compute_inline",
      "cache_read",     "cache_write",         "pack_layout",   "storage_align", "rfactor",
      "sample_compute_location", "sample_perfect_tile", "sample_categorical"};
  EXPECT_EQ(UnlistedWorkerInstructionNames(), kFirstVersion);
  EXPECT_FALSE(UnlistedWorkerInstructionNames().count(InstructionName(InstructionKind::kPadInput)));
  const std::vector<std::string>& replayed = ReplayedInstructionNames();
  for (const std::string& name : UnlistedWorkerInstructionNames()) {
    EXPECT_NE(std::find(replayed.begin(), replayed.end(), name), replayed.end()) << name;
  }
}

}  // namespace
}  // namespace tunefarm::testing
