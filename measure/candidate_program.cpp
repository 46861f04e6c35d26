// The program a MeasureInput names (candidate_program.h).
#include "tunefarm/measure/candidate_program.h"

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {

CandidateProgram PrepareCandidateProgram(const MeasureInput& in, bool host_only) {
  CandidateProgram out;
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    out.error = kind;
    out.error_message = std::move(message);
    return std::move(out);
  };
  ParseOptions parse_options;
  parse_options.source_name = "workload";  // messages read "workload:3:7: ..."
  auto workload = ParseWorkload(in.workload_text, parse_options);
  if (!workload.ok()) return fail(MeasureErrorKind::kInvalidCandidate, workload.status().message());
  out.target = Target::Host();
  if (!in.target.empty()) {
    auto parsed = Target::Parse(in.target);
    if (!parsed.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "target: " + parsed.status().message());
    out.target = *parsed;
  }
  if (host_only && !out.target.is_host()) {
    return fail(MeasureErrorKind::kInvalidCandidate, "target '" + out.target.ToString() +
                                                         "' cannot run on this machine (host: " +
                                                         Target::Host().ToString() + ")");
  }
  auto func = LowerToPrimFunc(*workload);
  if (!func.ok()) return fail(MeasureErrorKind::kCompileError, "lowering: " + func.status().message());
  out.func = *func;
  if (TraceTextHasContent(in.trace_text)) {
    auto trace = Trace::Parse(in.trace_text);
    if (!trace.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "trace: " + trace.status().message());
    Schedule sch(*func);
    Status s = trace->ApplyTo(sch);
    if (!s.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "trace: " + s.message());
    out.func = sch.func();
  }
  out.workload = std::move(*workload);
  return out;
}

}  // namespace tunefarm
