// `tunefarm show`: what tunefarm makes of a workload, stage by stage; with
// --db, of the tuned schedule the log holds for it (the record `tunefarm
// compile --db` would build: same lookup, same fallback chain).
#include <fmt/core.h>

#include <optional>

#include "commands.h"
#include "kernel_runner.h"
#include "show_cuda.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"

namespace tunefarm::cli {

namespace {

struct ShowOptions {
  std::string workload_path;
  std::string target = "llvm";
  std::vector<std::string> overrides;
  bool lowered = false;
  bool llvm_ir = false;
  bool assembly = false;
  std::string db;
  std::string system_db;
  int64_t record_id = 0;  // --record: this record of --db instead of the best
};

// Replays a record on `default_func` and prints its header line (where it
// is from, its time or its error) and its trace.
Result<ir::PrimFunc> ReplayRecord(const Workload& w, const database::TuningRecord& r, const std::string& where,
                                  const ir::PrimFunc& default_func) {
  TF_ASSIGN_OR_RETURN(Trace trace, Trace::Parse(r.trace));
  Schedule sch(default_func);
  TF_RETURN_IF_ERROR(trace.ApplyTo(sch));
  if (r.ok() && r.synthetic) {
    // Only --record reaches one: lookups never answer with an invented time.
    fmt::print("\n# {}: record #{} {}: a synthetic time of a test device ({:.4f} ms, invented, nothing was run)\n",
               r.trace.empty() ? "default schedule" : "tuned schedule", r.id, where, *r.TimeSec() * 1e3);
  } else if (r.ok()) {
    // The best record answers for its trace: show the mean it ranks by.
    double ms = *r.RankSec() * 1e3;
    std::string measurements = r.trace_records > 1 ? fmt::format(" (mean of {} measurements)", r.trace_records) : "";
    // A lookup answers with an emulated record only when nothing real is there.
    const char* emulated = r.emulated ? " under emulation (says nothing about a real board)" : "";
    fmt::print("\n# {}: record #{} {}, {:.4f} ms{} measured on {}{}, {:.2f} GFLOP/s\n",
               r.trace.empty() ? "default schedule" : "tuned schedule", r.id, where, ms, measurements,
               r.target.fingerprint.arch, emulated, w.Flops() / (ms * 1e6));
  } else {
    fmt::print("\n# record #{} {}: failed ({}{}{})\n", r.id, where, database::ErrorKindName(r.error_kind),
               r.error_msg.empty() ? "" : ": ", r.error_msg);
  }
  fmt::print("# trace\n{}{}", r.trace, r.trace.empty() || r.trace.back() == '\n' ? "" : "\n");
  return sch.func();
}

// --record: that record of the user log, which must be one of `w`'s.
Result<ir::PrimFunc> RecordFunc(const ShowOptions& o, const Workload& w, const ir::PrimFunc& default_func) {
  database::OpenOptions read_only;
  read_only.read_only = true;
  TF_ASSIGN_OR_RETURN(auto db, database::Database::Open(o.db, read_only));
  std::optional<database::TuningRecord> found;
  database::RecordFilter filter;
  filter.workload_hash = StructuralHashHex(w);
  TF_RETURN_IF_ERROR(db->ForEachRecord(filter, [&](const database::TuningRecord& r) {
    if (r.id == o.record_id) found = r;
    return Status::OK();
  }));
  if (!found) {
    return Status::NotFound("record #" + std::to_string(o.record_id) + " of " + o.db + " is not a record of workload " +
                            w.name + " (tunefarm db top lists a workload's records with their ids)");
  }
  return ReplayRecord(w, *found, "of " + o.db, default_func);
}

// The log's best replaying record for `w` on `target` applied to `default_func`;
// nullopt (and a note on stderr) when the log has none. A log that cannot be
// opened, or whose records for the workload all fail to replay, is an error.
Result<std::optional<ir::PrimFunc>> TunedFunc(const ShowOptions& o, const Workload& w, const Target& target,
                                              const ir::PrimFunc& default_func) {
  TF_ASSIGN_OR_RETURN(std::optional<LoggedSchedule> logged,
                      FindLoggedSchedule(o.db, o.system_db, w, target, default_func));
  if (!logged) {
    fmt::print(stderr, "tunefarm show: {}: no tuning record for {} in {}; showing the default schedule only\n",
               w.name, target.ToString(), o.db);
    return std::optional<ir::PrimFunc>();
  }
  std::string where = "of the " + std::string(database::LayerName(logged->layer)) + " log (" +
                      std::string(database::FallbackLevelName(logged->level)) + " match)";
  TF_ASSIGN_OR_RETURN(ir::PrimFunc tuned, ReplayRecord(w, logged->record, where, default_func));
  return std::optional<ir::PrimFunc>(std::move(tuned));
}

// --lowered and --asm for a cuda target: LowerForCuda's IR, the CUDA C and
// ptxas' report. A program the CUDA path refuses is the user's (their log's
// record, their workload): said, exit 1.
int ShowCuda(const ShowOptions& o, const ir::PrimFunc& shown, bool tuned, const Target& target) {
  if (!o.lowered && !o.llvm_ir && !o.assembly) return kExitOk;
  auto program = GpuProgramToShow(shown, tuned);
  Status printed = program.ok() ? PrintCudaStages(*program, target, o.lowered, o.llvm_ir, o.assembly) : program.status();
  if (!printed.ok()) {
    fmt::print(stderr, "error: {}\n", printed.message());
    return kExitUserError;
  }
  return kExitOk;
}

int Show(const ShowOptions& o) {
  auto w = LoadWorkload(o.workload_path, o.overrides);
  if (!w.ok()) {
    fmt::print(stderr, "error: {}\n", w.status().message());
    return kExitUserError;
  }
  fmt::print("# structural hash {}, {:.4f} GFLOP per run\n", StructuralHashHex(*w), w->Flops() / 1e9);
  fmt::print("{}\n", PrintWorkload(*w));
  auto f = LowerToPrimFunc(*w);
  if (!f.ok()) {
    fmt::print(stderr, "error: {}\n", f.status().message());
    return kExitInternalError;
  }
  fmt::print("# default schedule\n{}", ir::ToString(*f));
  auto target = Target::Parse(o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  // What --lowered, --llvm and --asm print: the tuned loop nest when there is one.
  ir::PrimFunc shown = *f;
  bool tuned = false;  // `shown` is a record's program (GPU-bound for a cuda target)
  if (o.record_id != 0) {
    auto record = RecordFunc(o, *w, *f);
    if (!record.ok()) {
      fmt::print(stderr, "error: {}\n", record.status().message());
      return kExitUserError;
    }
    shown = *record;
    tuned = true;
    fmt::print("# its loop nest\n{}", ir::ToString(shown));
  } else if (!o.db.empty()) {
    auto tuned_func = TunedFunc(o, *w, *target, *f);
    if (!tuned_func.ok()) {
      fmt::print(stderr, "error: {}\n", tuned_func.status().message());
      return kExitUserError;
    }
    if (tuned_func->has_value()) {
      shown = **tuned_func;
      tuned = true;
      fmt::print("# tuned loop nest\n{}", ir::ToString(shown));
    }
  }
  if (target->kind == "cuda") return ShowCuda(o, shown, tuned, *target);
  if (o.lowered) {
    auto lowered = LowerForCodegen(shown);
    if (!lowered.ok()) {
      fmt::print(stderr, "error: {}\n", lowered.status().message());
      return kExitInternalError;
    }
    fmt::print("\n# after lowering for code generation\n{}", ir::ToString(*lowered));
  }
  if (o.llvm_ir || o.assembly) {
    auto text = o.llvm_ir ? EmitLLVMIR(shown, *target) : EmitAssembly(shown, *target);
    if (!text.ok()) {
      fmt::print(stderr, "error: {}\n", text.status().ToString());
      return kExitInternalError;
    }
    fmt::print("\n# {} for {}\n{}", o.llvm_ir ? "LLVM IR" : "assembly", target->ToString(), *text);
  }
  return kExitOk;
}

}  // namespace

void AddShowCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("show", "Print a workload, its hash and its loop IR");
  cmd->footer(
      "Parses WORKLOAD and prints its canonical text, structural hash and FLOP count, then\n"
      "the default loop nest. --lowered, --llvm and --asm go further down the pipeline.\n"
      "With --db, also the log's best record for the workload on --target (the one\n"
      "`tunefarm compile --db` builds): its trace and the tuned loop nest, and --lowered,\n"
      "--llvm and --asm show the tuned kernel. --record ID shows that record of the log\n"
      "instead (ids: tunefarm db top). With a cuda target, --lowered prints the IR after\n"
      "LowerForCuda and --asm the CUDA C, its launches and ptxas' registers and spills\n"
      "(the default GPU program when there is no record).\n\n"
      "Examples:\n"
      "  tunefarm show configs/workloads/gmm_512.tf --db tunefarm.db --lowered\n"
      "  tunefarm show configs/workloads/gmm_512.tf --db tunefarm.db --record 42 --asm\n"
      "  tunefarm show configs/workloads/gmm_1024.tf --target \"cuda -arch=sm_90\" --db gpu.db --asm");
  cmd->add_option("workload", options->workload_path, "Workload file (.tf)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", options->overrides, "Override a shape parameter, e.g. --set M=16");
  cmd->add_option("--target", options->target, "Target for --db, --llvm and --asm")->capture_default_str();
  cmd->add_flag("--lowered", options->lowered, "Also print the IR the code generator receives");
  cmd->add_flag("--llvm", options->llvm_ir, "Also print the optimized LLVM IR");
  cmd->add_flag("--asm", options->assembly, "Also print the assembly (cuda targets: the CUDA C)");
  cmd->add_option("--db", options->db, "Tuning log: also show its best schedule for the workload")
      ->check(CLI::ExistingFile);
  cmd->add_option("--record", options->record_id, "With --db: show this record of the log (its id) instead of the best")
      ->needs("--db")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--system-db", options->system_db,
                  "Read-only system log under the user's (default: the installed one, if any)");
  cmd->callback([options, exit_code] { *exit_code = Show(*options); });
}

}  // namespace tunefarm::cli
