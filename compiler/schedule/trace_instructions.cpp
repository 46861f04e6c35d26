// The tables derived from TF_TRACE_INSTRUCTIONS (trace_instructions.h).
#include "tunefarm/compiler/schedule/trace_instructions.h"

namespace tunefarm {

const std::vector<InstructionKind>& AllInstructionKinds() {
  static const std::vector<InstructionKind> kKinds = {
#define TF_LIST_INSTRUCTION_KIND(kind, name, decision, unlisted) InstructionKind::k##kind,
      TF_TRACE_INSTRUCTIONS(TF_LIST_INSTRUCTION_KIND)
#undef TF_LIST_INSTRUCTION_KIND
  };
  return kKinds;
}

const char* InstructionName(InstructionKind kind) {
  // No default: a kind without a name does not compile (-Werror=switch).
  switch (kind) {
#define TF_INSTRUCTION_NAME_CASE(kind, name, decision, unlisted) \
  case InstructionKind::k##kind:                                 \
    return name;
    TF_TRACE_INSTRUCTIONS(TF_INSTRUCTION_NAME_CASE)
#undef TF_INSTRUCTION_NAME_CASE
  }
  return "";  // not reached: every enumerator has a case
}

std::optional<InstructionKind> ParseInstructionKind(std::string_view name) {
  // A linear scan: two dozen short names, compared once per parsed line.
#define TF_PARSE_INSTRUCTION_KIND(kind, text, decision, unlisted) \
  if (name == text) return InstructionKind::k##kind;
  TF_TRACE_INSTRUCTIONS(TF_PARSE_INSTRUCTION_KIND)
#undef TF_PARSE_INSTRUCTION_KIND
  return std::nullopt;
}

InstructionDecision DecisionOf(InstructionKind kind) {
  switch (kind) {
#define TF_INSTRUCTION_DECISION_CASE(kind, name, decision, unlisted) \
  case InstructionKind::k##kind:                                     \
    return InstructionDecision::decision;
    TF_TRACE_INSTRUCTIONS(TF_INSTRUCTION_DECISION_CASE)
#undef TF_INSTRUCTION_DECISION_CASE
  }
  return InstructionDecision::kNone;  // not reached
}

const std::vector<std::string>& ReplayedInstructionNames() {
  // The whole list: Trace::ApplyTo has a case for every kind (trace_replay.cpp).
  static const std::vector<std::string> kNames = {
#define TF_REPLAYED_INSTRUCTION_NAME(kind, name, decision, unlisted) name,
      TF_TRACE_INSTRUCTIONS(TF_REPLAYED_INSTRUCTION_NAME)
#undef TF_REPLAYED_INSTRUCTION_NAME
  };
  return kNames;
}

const std::set<std::string>& UnlistedWorkerInstructionNames() {
  static const std::set<std::string> kNames = [] {
    std::set<std::string> names;
#define TF_UNLISTED_WORKER_INSTRUCTION(kind, name, decision, unlisted) \
  if (unlisted) names.insert(name);
    TF_TRACE_INSTRUCTIONS(TF_UNLISTED_WORKER_INSTRUCTION)
#undef TF_UNLISTED_WORKER_INSTRUCTION
    return names;
  }();
  return kNames;
}

}  // namespace tunefarm
