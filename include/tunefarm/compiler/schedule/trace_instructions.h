// The trace instructions: one X-macro list (TF_TRACE_INSTRUCTIONS) of every
// instruction a Schedule records and Trace::ApplyTo replays, with the facts
// about each that more than one place needs. From it come the kind enum, the
// text names, the replayer's list (what a worker reports to a tuner daemon)
// and the instructions of workers older than that report.
//
// Adding an instruction is adding a row: the replayer's switch over
// InstructionKind has no `default:` and the compiler builds with
// -Werror=switch, so a row without a replay case does not compile.
//
// Invariants: enum names and text names are unique; a text name is what the
// trace text format prints and parses, and never changes once traces with it
// are stored (database records, tuning logs).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tunefarm {

// X(Kind, "text_name", decision, replayed_by_unlisted_workers)
//   Kind      InstructionKind::k<Kind>
//   decision  what a sampling instruction's `decision=` holds: kNone (not a
//             sampling instruction), kScalar (one integer, printed bare) or
//             kList (a list of integers, printed in brackets)
//   replayed_by_unlisted_workers  whether a worker from before Register
//             listed its trace instructions replays it: every instruction of
//             that version, true; any instruction added since, false
#define TF_TRACE_INSTRUCTIONS(X)                                                     \
  X(GetBlock, "get_block", kNone, true)                                              \
  X(GetLoops, "get_loops", kNone, true)                                              \
  X(Split, "split", kNone, true)                                                     \
  X(Reorder, "reorder", kNone, true)                                                 \
  X(Fuse, "fuse", kNone, true)                                                       \
  X(Parallel, "parallel", kNone, true)                                               \
  X(Vectorize, "vectorize", kNone, true)                                             \
  X(Unroll, "unroll", kNone, true)                                                   \
  X(Bind, "bind", kNone, true)                                                       \
  X(Annotate, "annotate", kNone, true)                                               \
  X(ComputeAt, "compute_at", kNone, true)                                            \
  X(ReverseComputeAt, "reverse_compute_at", kNone, true)                             \
  X(ComputeInline, "compute_inline", kNone, true)                                    \
  X(ReverseComputeInline, "reverse_compute_inline", kNone, true)                     \
  X(CacheRead, "cache_read", kNone, true)                                            \
  X(CacheWrite, "cache_write", kNone, true)                                          \
  X(PadInput, "pad_input", kNone, false)                                             \
  X(PackLayout, "pack_layout", kNone, true)                                          \
  X(StorageAlign, "storage_align", kNone, true)                                      \
  X(RFactor, "rfactor", kNone, true)                                                 \
  X(PadAxis, "pad_axis", kNone, false)                                               \
  X(SplitPhases, "split_phases", kNone, false)                                       \
  X(SampleComputeLocation, "sample_compute_location", kScalar, true)                 \
  X(SamplePerfectTile, "sample_perfect_tile", kList, true)                           \
  X(SampleCategorical, "sample_categorical", kScalar, true)

enum class InstructionKind : uint8_t {
#define TF_DECLARE_INSTRUCTION_KIND(kind, name, decision, unlisted) k##kind,
  TF_TRACE_INSTRUCTIONS(TF_DECLARE_INSTRUCTION_KIND)
#undef TF_DECLARE_INSTRUCTION_KIND
};

// What a sampling instruction's decision holds (see the list's columns).
enum class InstructionDecision : uint8_t { kNone, kScalar, kList };

// Every kind, in list order.
const std::vector<InstructionKind>& AllInstructionKinds();

// The text name: "split", "sample_perfect_tile", ...
const char* InstructionName(InstructionKind kind);

// The kind a text name stands for; nullopt for a name off the list (trace
// text of another tunefarm, or a typo: Trace::ApplyTo rejects it).
std::optional<InstructionKind> ParseInstructionKind(std::string_view name);

InstructionDecision DecisionOf(InstructionKind kind);

// Whether the instruction samples and records a decision (mutators change it).
inline bool IsSamplingInstruction(InstructionKind kind) { return DecisionOf(kind) != InstructionDecision::kNone; }

// The instruction names Trace::ApplyTo replays: the whole list, in list
// order. A measurement worker reports them when it joins a tuner daemon, so
// that a candidate goes only to workers that can replay its trace
// (fleet.proto, Register.trace_instructions).
const std::vector<std::string>& ReplayedInstructionNames();

// The instruction names a worker replays that joined without listing them
// (a tunefarm from before Register.trace_instructions): fixed to what that
// version replayed, so that instructions added later are not taken to be
// known to it (every one but pad_input).
const std::set<std::string>& UnlistedWorkerInstructionNames();

}  // namespace tunefarm
