// `tunefarm run`: compile a workload's default schedule, check it against the
// reference interpreter and time it.
//
// The interpreter is exact but slow (about 10^7 operations per second), so a
// workload too large for it is checked on a shrunk copy (ShrinkWorkload). The
// output says which check ran.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/interpreter.h"
#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/workload_parser.h"
#include "tunefarm/compiler/workload_shrink.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::cli {

namespace {

constexpr double kInterpreterFlopBudget = 4e7;

struct RunOptions {
  std::string workload_path;
  std::string target = "llvm";
  std::vector<std::string> overrides;
  int threads = 0;
  int repeat = 5;
  double min_repeat_ms = 100;
  std::string check = "auto";
  uint64_t seed = 42;
};

// Compiles and runs `w` and the interpreter on the same random inputs.
Result<CompareResult> CheckAgainstInterpreter(const Workload& w, const Target& target, uint64_t seed) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel, JitCompile(f, target));
  std::vector<HostBuffer> compiled = MakeArguments(f, seed);
  std::vector<HostBuffer> reference = MakeArguments(f, seed);
  TF_RETURN_IF_ERROR(kernel->Run(DataPointers(compiled)));
  std::vector<HostBuffer*> ref_ptrs;
  for (HostBuffer& b : reference) ref_ptrs.push_back(&b);
  TF_RETURN_IF_ERROR(Interpret(f, ref_ptrs));
  CompareResult total;
  for (size_t i = f.num_inputs; i < f.params.size(); ++i) {
    CompareResult r = CompareBuffers(compiled[i], reference[i], 1e-3, 1e-3);
    total.max_abs_error = std::max(total.max_abs_error, r.max_abs_error);
    if (!r.equal && total.equal) {
      total.equal = false;
      total.message = f.params[i]->name + ": " + r.message;
    }
  }
  return total;
}

std::string ParamsString(const Workload& w) {
  std::string s;
  for (const auto& [name, value] : w.params) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return s;
}

int Run(const RunOptions& o) {
  auto workload = LoadWorkload(o.workload_path, o.overrides);
  if (!workload.ok()) {
    fmt::print(stderr, "error: {}\n", workload.status().message());
    return kExitUserError;
  }
  auto target = Target::Parse(o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  if (!target->is_host()) {
    fmt::print(stderr, "error: target '{}' cannot run on this machine; use `tunefarm compile` to build for it\n",
               o.target);
    return kExitUserError;
  }
  if (o.threads > 0) tunefarm_set_num_threads(o.threads);
  const Workload& w = *workload;
  double flops = w.Flops();
  fmt::print("workload  {} ({})  hash {}  {:.3f} GFLOP per run\n", w.name, ParamsString(w), StructuralHashHex(w),
             flops / 1e9);
  fmt::print("target    {}\n", target->ToString());
  fmt::print("threads   {}\n", tunefarm_get_num_threads());

  auto func = LowerToPrimFunc(w);
  if (!func.ok()) {
    fmt::print(stderr, "error: {}\n", func.status().message());
    return kExitInternalError;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto kernel = JitCompile(*func, *target);
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!kernel.ok()) {
    fmt::print(stderr, "error: compiling {}: {}\n", w.name, kernel.status().ToString());
    return kExitInternalError;
  }
  fmt::print("compile   {:.2f} s (LLVM JIT, default schedule)\n", compile_s);

  if (o.check != "none") {
    bool full = o.check == "full" || (o.check == "auto" && flops <= kInterpreterFlopBudget);
    Result<Workload> checked = w;
    if (!full) {
      std::ifstream in(o.workload_path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto overrides = ParseOverrides(o.overrides);  // valid: LoadWorkload accepted them
      checked = ShrinkWorkload(text, o.workload_path, *overrides, kInterpreterFlopBudget);
    }
    if (!checked.ok()) {
      fmt::print(stderr, "error: {}\n", checked.status().message());
      return kExitInternalError;
    }
    auto cmp = CheckAgainstInterpreter(*checked, *target, o.seed);
    if (!cmp.ok()) {
      fmt::print(stderr, "error: check failed to run: {}\n", cmp.status().ToString());
      return kExitInternalError;
    }
    std::string scope = full ? "full size" : "a shrunk copy (" + ParamsString(*checked) +
                                                 "; the full size is too large for the interpreter)";
    if (!cmp->equal) {
      fmt::print("check     FAIL on {}: {}\n", scope, cmp->message);
      return kExitUserError;
    }
    fmt::print("check     correct: matches the reference interpreter on random inputs, {} (max abs error {:.2e})\n",
               scope, cmp->max_abs_error);
  }

  std::vector<HostBuffer> args = MakeArguments(*func, o.seed);
  auto timing = TimeKernel(**kernel, DataPointers(args), o.repeat, o.min_repeat_ms);
  if (!timing.ok()) {
    fmt::print(stderr, "error: running {}: {}\n", w.name, timing.status().ToString());
    return kExitInternalError;
  }
  fmt::print("time      median {:.3f} ms, best {:.3f} ms over {} repeats\n", timing->median_seconds * 1e3,
             timing->best_seconds * 1e3, o.repeat);
  fmt::print("speed     {:.2f} GFLOP/s (median)\n", flops / timing->median_seconds / 1e9);
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Compile a workload's default schedule, check it, time it");
  cmd->footer(
      "Compiles WORKLOAD (a .tf file in the workload language) with its default, untuned\n"
      "schedule for this machine, checks the result against the reference interpreter on\n"
      "random inputs, and prints its time and GFLOP/s.");
  cmd->add_option("workload", options->workload_path, "Workload file, e.g. configs/workloads/gmm_1024.tf")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--target", options->target, "Target to compile for (must run here)")->capture_default_str();
  cmd->add_option("--set", options->overrides, "Override a shape parameter, e.g. --set M=256 (repeatable)");
  cmd->add_option("--threads", options->threads, "Threads for parallel loops (default: all cores)");
  cmd->add_option("--repeat", options->repeat, "Timed repeat groups")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--min-repeat-ms", options->min_repeat_ms, "Minimum duration of one repeat group")
      ->capture_default_str();
  cmd->add_option("--check", options->check,
                  "auto: interpret full size when small enough, else a shrunk copy; full; none")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "full", "none"}));
  cmd->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

}  // namespace tunefarm::cli
