// Trace: the replayable record of a schedule.
//
// Each instruction names a primitive, its inputs (handles "b3"/"l7" or
// integers), its outputs (new handles or sampled values "v9") and, for
// sampling instructions, the decision taken. Text form (version 1):
//
//   tunefarm-trace 1
//   b0 = get_block("C")
//   l1, l2, l3 = get_loops(b0)
//   v4, v5 = sample_perfect_tile(l1, n=2, max_innermost=64) decision=[16, 64]
//   l6, l7 = split(l1, [v4, v5])
//   parallel(l6)
//
// The instructions and their names are listed once, in trace_instructions.h
// (which also declares ReplayedInstructionNames).
//
// Replaying on the same workload gives the same program; replaying with other
// decisions gives another program with the same steps (the search's mutation
// re-runs its sketch instead: Schedule::SetDecisionHints).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"

namespace tunefarm {

class Schedule;

// An argument: a handle or sampled value by name ("l3", "b0", "v5"), an
// integer, a string, or a list of those (split factors, reorder loops).
struct TraceArg {
  enum class Kind { kRef, kInt, kString, kList };
  Kind kind = Kind::kInt;
  std::string ref;             // kRef: "l3"; kString: the text
  int64_t value = 0;           // kInt
  std::vector<TraceArg> list;  // kList
  std::string key;             // keyword arguments: "n", "max_innermost"; empty for positional

  static TraceArg Ref(std::string r) { TraceArg a; a.kind = Kind::kRef; a.ref = std::move(r); return a; }
  static TraceArg Int(int64_t v) { TraceArg a; a.kind = Kind::kInt; a.value = v; return a; }
  static TraceArg Str(std::string s) { TraceArg a; a.kind = Kind::kString; a.ref = std::move(s); return a; }
  static TraceArg List(std::vector<TraceArg> l) { TraceArg a; a.kind = Kind::kList; a.list = std::move(l); return a; }
  TraceArg&& Named(std::string k) && { key = std::move(k); return std::move(*this); }
  friend bool operator==(const TraceArg&, const TraceArg&) = default;
};

// One recorded step. `name` is what the text form prints and parses; `kind`
// is the listed instruction it names (trace_instructions.h), which in-process
// code compares. Both are set together by the constructors and by
// Trace::Parse; `kind` is empty only for a parsed name off the list, which
// Trace::ApplyTo rejects.
struct Instruction {
  Instruction() = default;
  // Recording: the name is the kind's.
  Instruction(InstructionKind k, std::vector<TraceArg> a, std::vector<std::string> outs = {},
              std::vector<int64_t> d = {}, bool has_d = false)
      : name(InstructionName(k)), kind(k), args(std::move(a)), outputs(std::move(outs)), decision(std::move(d)),
        has_decision(has_d) {}
  // By text name (tests, hand-written traces): the kind is the name's, if listed.
  Instruction(std::string n, std::vector<TraceArg> a, std::vector<std::string> outs, std::vector<int64_t> d,
              bool has_d)
      : name(std::move(n)), kind(ParseInstructionKind(name)), args(std::move(a)), outputs(std::move(outs)),
        decision(std::move(d)), has_decision(has_d) {}

  std::string name;                    // "split", "sample_perfect_tile", ...
  std::optional<InstructionKind> kind;  // InstructionKind::kSplit, ...; empty for a name off the list
  std::vector<TraceArg> args;
  std::vector<std::string> outputs;  // names of the handles/values it defines
  std::vector<int64_t> decision;     // sampling instructions only
  bool has_decision = false;
  int source_line = 0;  // 1-based line in the text it was parsed from; 0 when built in memory
  // Equal content; where an instruction came from does not count (the kind
  // follows from the name).
  friend bool operator==(const Instruction& a, const Instruction& b) {
    return a.name == b.name && a.args == b.args && a.outputs == b.outputs && a.decision == b.decision &&
           a.has_decision == b.has_decision;
  }
};

class Trace {
 public:
  static constexpr int kVersion = 1;

  const std::vector<Instruction>& instructions() const { return instructions_; }
  std::vector<Instruction>& mutable_instructions() { return instructions_; }
  void Append(Instruction inst) { instructions_.push_back(std::move(inst)); }
  size_t size() const { return instructions_.size(); }

  std::string ToText() const;
  // Errors name the line and what was expected.
  static Result<Trace> Parse(std::string_view text);

  // Indices of the sampling instructions (what mutators change).
  std::vector<size_t> DecisionIndices() const;

  // Applies every instruction to `sch` (a fresh schedule of the workload the
  // trace was made on). `decisions` overrides the decision of the instruction
  // at that index; an empty override means "sample anew" with sch's random
  // generator. A trace that does not fit the workload gives InvalidArgument
  // naming the instruction's line and the problem.
  Status ApplyTo(Schedule& sch, const std::map<size_t, std::vector<int64_t>>& decisions = {}) const;

  friend bool operator==(const Trace&, const Trace&) = default;

 private:
  std::vector<Instruction> instructions_;
};

// Whether trace text holds an instruction or header, not only comments and
// blank lines. A comment-only text (a test-fault line, say) means the default
// schedule wherever traces are measured.
bool TraceTextHasContent(std::string_view text);

}  // namespace tunefarm
