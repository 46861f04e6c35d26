// `tunefarm show`: what tunefarm makes of a workload, stage by stage.
#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/codegen_llvm.h"
#include "tunefarm/compiler/ir_printer.h"
#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/workload_parser.h"

namespace tunefarm::cli {

namespace {

struct ShowOptions {
  std::string workload_path;
  std::string target = "llvm";
  std::vector<std::string> overrides;
  bool lowered = false;
  bool llvm_ir = false;
  bool assembly = false;
};

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
  if (o.lowered) {
    auto lowered = LowerForCodegen(*f);
    if (!lowered.ok()) {
      fmt::print(stderr, "error: {}\n", lowered.status().message());
      return kExitInternalError;
    }
    fmt::print("\n# after lowering for code generation\n{}", ir::ToString(*lowered));
  }
  if (o.llvm_ir || o.assembly) {
    auto target = Target::Parse(o.target);
    if (!target.ok()) {
      fmt::print(stderr, "error: {}\n", target.status().message());
      return kExitUserError;
    }
    auto text = o.llvm_ir ? EmitLLVMIR(*f, *target) : EmitAssembly(*f, *target);
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
      "the default loop nest. --lowered, --llvm and --asm go further down the pipeline.");
  cmd->add_option("workload", options->workload_path, "Workload file (.tf)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", options->overrides, "Override a shape parameter, e.g. --set M=16");
  cmd->add_option("--target", options->target, "Target for --llvm/--asm")->capture_default_str();
  cmd->add_flag("--lowered", options->lowered, "Also print the IR the code generator receives");
  cmd->add_flag("--llvm", options->llvm_ir, "Also print the optimized LLVM IR");
  cmd->add_flag("--asm", options->assembly, "Also print the assembly");
  cmd->callback([options, exit_code] { *exit_code = Show(*options); });
}

}  // namespace tunefarm::cli
