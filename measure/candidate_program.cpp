// The program a MeasureInput names (candidate_program.h).
#include "tunefarm/measure/candidate_program.h"

#include <optional>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {

struct CandidatePrograms::Shared {
  MeasureErrorKind error = MeasureErrorKind::kNone;
  std::string error_message;
  std::shared_ptr<const Workload> workload;
  Target target;
  ir::PrimFunc default_func;
};

namespace {

CandidatePrograms::TargetCheck HostOnly(bool host_only) {
  if (!host_only) return nullptr;
  return [](const Target& target) -> std::string {
    if (target.is_host()) return "";
    return "cannot run on this machine (host: " + Target::Host().ToString() + ")";
  };
}

}  // namespace

CandidatePrograms::CandidatePrograms(bool host_only) : runs_here_(HostOnly(host_only)) {}

// The checks run in the order a candidate's answer names them: the
// workload, then the target (and, for the runner, whether it runs here),
// then lowering.
std::shared_ptr<const CandidatePrograms::Shared> CandidatePrograms::ParseAndLower(const MeasureInput& in,
                                                                                  const TargetCheck& runs_here) {
  auto shared = std::make_shared<Shared>();
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    shared->error = kind;
    shared->error_message = std::move(message);
    return shared;
  };
  ParseOptions parse_options;
  parse_options.source_name = "workload";  // messages read "workload:3:7: ..."
  auto workload = ParseWorkload(in.workload_text, parse_options);
  if (!workload.ok()) return fail(MeasureErrorKind::kInvalidCandidate, workload.status().message());
  shared->target = Target::Host();
  if (!in.target.empty()) {
    auto parsed = Target::Parse(in.target);
    if (!parsed.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "target: " + parsed.status().message());
    shared->target = *parsed;
  }
  if (runs_here) {
    std::string why_not = runs_here(shared->target);
    if (!why_not.empty()) {
      return fail(MeasureErrorKind::kInvalidCandidate, "target '" + shared->target.ToString() + "' " + why_not);
    }
  }
  auto func = LowerToPrimFunc(*workload);
  if (!func.ok()) return fail(MeasureErrorKind::kCompileError, "lowering: " + func.status().message());
  shared->default_func = std::move(*func);
  shared->workload = std::make_shared<const Workload>(std::move(*workload));
  return shared;
}

std::shared_ptr<const CandidatePrograms::Shared> CandidatePrograms::SharedFor(const MeasureInput& in) {
  // Held while lowering: the batch's other candidates of this workload wait
  // for it rather than lower it again.
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(in.workload_text, in.target);
  auto found = shared_.find(key);
  if (found != shared_.end()) return found->second;
  std::shared_ptr<const Shared> shared = ParseAndLower(in, runs_here_);
  ++lowered_workloads_;
  shared_.emplace(std::move(key), shared);
  return shared;
}

int CandidatePrograms::lowered_workloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lowered_workloads_;
}

CandidateProgram CandidatePrograms::Prepare(const MeasureInput& in) {
  CandidateProgram out;
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    out.error = kind;
    out.error_message = std::move(message);
    return std::move(out);
  };
  std::shared_ptr<const Shared> shared = SharedFor(in);
  if (shared->error != MeasureErrorKind::kNone) return fail(shared->error, shared->error_message);
  out.target = shared->target;
  out.func = shared->default_func;
  // The typed trace when the input carries one (same process as its maker),
  // else the text, parsed here.
  std::optional<Trace> parsed;
  const Trace* trace = in.trace.get();
  if (!trace && TraceTextHasContent(in.trace_text)) {
    auto text = Trace::Parse(in.trace_text);
    if (!text.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "trace: " + text.status().message());
    trace = &parsed.emplace(std::move(*text));
  }
  if (trace) {
    Schedule sch(shared->default_func);
    Status s = trace->ApplyTo(sch);
    if (!s.ok()) return fail(MeasureErrorKind::kInvalidCandidate, "trace: " + s.message());
    out.func = sch.func();
  }
  out.workload = shared->workload;
  return out;
}

CandidateProgram PrepareCandidateProgram(const MeasureInput& input, bool host_only) {
  return CandidatePrograms(host_only).Prepare(input);
}

}  // namespace tunefarm
