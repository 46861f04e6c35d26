// `tunefarm run`: compile a workload's default schedule, or with --db the
// log's best schedule for it (what `tunefarm compile --db` builds), check it
// against the reference interpreter and time it.
//
// The interpreter is exact but slow (about 10^7 operations per second), so a
// workload too large for it is checked on a shrunk copy (ShrinkWorkload). A
// tuned schedule fits only the full size: it is checked against the default
// schedule at full size, which is checked on the shrunk copy. The output says
// which check ran.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "run_cuda.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/runtime/runtime.h"
#include "tunefarm/worker/cuda_device.h"

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
  std::string db;         // --db: run the log's best schedule
  std::string system_db;  // --system-db
  int gpu = 0;            // --gpu: for a cuda target, this machine's GPU N
};

// The largest difference of `f`'s outputs in `got` from those in `want`;
// `equal` false with a message naming the first output that differs.
CompareResult CompareOutputs(const ir::PrimFunc& f, const std::vector<HostBuffer>& got,
                             const std::vector<HostBuffer>& want) {
  CompareResult total;
  for (size_t i = f.num_inputs; i < f.params.size(); ++i) {
    CompareResult r = CompareBuffers(got[i], want[i], 1e-3, 1e-3);
    total.max_abs_error = std::max(total.max_abs_error, r.max_abs_error);
    if (!r.equal && total.equal) {
      total.equal = false;
      total.message = f.params[i]->name + ": " + r.message;
    }
  }
  return total;
}

// Compiles and runs `f` and the interpreter on the same random inputs.
Result<CompareResult> CheckAgainstInterpreter(const ir::PrimFunc& f, const Target& target, uint64_t seed) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel, JitCompile(f, target));
  std::vector<HostBuffer> compiled = MakeArguments(f, seed);
  std::vector<HostBuffer> reference = MakeArguments(f, seed);
  TF_RETURN_IF_ERROR(kernel->Run(DataPointers(compiled)));
  std::vector<HostBuffer*> ref_ptrs;
  for (HostBuffer& b : reference) ref_ptrs.push_back(&b);
  TF_RETURN_IF_ERROR(Interpret(f, ref_ptrs));
  return CompareOutputs(f, compiled, reference);
}

// Runs `tuned` and `default_func` (the same workload) on the same random inputs.
Result<CompareResult> CheckAgainstDefault(const ir::PrimFunc& tuned, const JitKernel& kernel,
                                          const ir::PrimFunc& default_func, const Target& target, uint64_t seed) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> reference_kernel, JitCompile(default_func, target));
  std::vector<HostBuffer> got = MakeArguments(tuned, seed);
  std::vector<HostBuffer> want = MakeArguments(default_func, seed);
  TF_RETURN_IF_ERROR(kernel.Run(DataPointers(got)));
  TF_RETURN_IF_ERROR(reference_kernel->Run(DataPointers(want)));
  return CompareOutputs(tuned, got, want);
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
  const bool on_gpu = target->kind == "cuda";  // run by the runner on a GPU of this machine (run_cuda.h)
  if (!on_gpu && !target->is_host()) {
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
  if (!on_gpu) fmt::print("threads   {}\n", tunefarm_get_num_threads());

  auto default_func = LowerToPrimFunc(w);
  if (!default_func.ok()) {
    fmt::print(stderr, "error: {}\n", default_func.status().message());
    return kExitInternalError;
  }
  ir::PrimFunc func = *default_func;
  std::optional<LoggedSchedule> logged;
  if (!o.db.empty()) {
    auto found = FindLoggedSchedule(o.db, o.system_db, w, *target, *default_func);
    if (!found.ok()) {
      fmt::print(stderr, "error: {}\n", found.status().message());
      return kExitUserError;
    }
    logged = std::move(found).value();
    if (!logged) {
      fmt::print("schedule  default: {} holds no tuning record of this workload for {}\n", o.db, target->ToString());
    } else {
      const database::TuningRecord& r = logged->record;
      func = logged->func;
      const double logged_sec = *r.RankSec();
      std::string measurements = r.trace_records > 1 ? fmt::format(" (mean of {} measurements)", r.trace_records) : "";
      fmt::print("schedule  tuned: record #{} of the {} log ({} match), {:.4f} ms{} measured on {} ({:.2f} GFLOP/s)\n",
                 r.id, database::LayerName(logged->layer), database::FallbackLevelName(logged->level),
                 logged_sec * 1e3, measurements, r.target.fingerprint.arch, flops / logged_sec / 1e9);
      const std::string toolchain = on_gpu ? CudaToolchain() : CodegenToolchain();
      if (r.target.fingerprint.toolchain != toolchain) {
        fmt::print("          timed with code of toolchain '{}'; this build's is '{}'\n", r.target.fingerprint.toolchain,
                   toolchain);
      }
    }
  }
  if (on_gpu) {
    GpuRunOptions gpu_options{o.gpu, o.repeat, o.min_repeat_ms, o.check != "none", o.seed};
    return RunOnGpu(w, *target, logged ? logged->record.trace : std::string(),
                    logged ? std::optional<double>(*logged->record.RankSec()) : std::nullopt, gpu_options);
  }
  const char* which = logged ? "tuned schedule" : "default schedule";
  auto t0 = std::chrono::steady_clock::now();
  auto kernel = JitCompile(func, *target);
  double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!kernel.ok()) {
    fmt::print(stderr, "error: compiling {}: {}\n", w.name, kernel.status().ToString());
    return kExitInternalError;
  }
  fmt::print("compile   {:.2f} s (LLVM JIT, {})\n", compile_s, which);

  if (o.check != "none") {
    bool full = o.check == "full" || (o.check == "auto" && flops <= kInterpreterFlopBudget);
    Result<ir::PrimFunc> checked = func;
    std::string scope = "full size";
    if (!full) {
      std::ifstream in(o.workload_path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto overrides = ParseOverrides(o.overrides);  // valid: LoadWorkload accepted them
      auto shrunk = ShrinkWorkload(text, o.workload_path, *overrides, kInterpreterFlopBudget);
      if (!shrunk.ok()) {
        fmt::print(stderr, "error: {}\n", shrunk.status().message());
        return kExitInternalError;
      }
      checked = LowerToPrimFunc(*shrunk);  // the default schedule: a tuned one fits the full size only
      scope = "a shrunk copy (" + ParamsString(*shrunk) + "; the full size is too large for the interpreter)";
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
    const bool chained = logged && !full;  // the tuned kernel against the default one, which was checked
    if (!cmp->equal) {
      fmt::print("check     FAIL{} on {}: {}\n", chained ? " (default schedule)" : "", scope, cmp->message);
      return kExitUserError;
    }
    fmt::print("check     {}correct: matches the reference interpreter on random inputs, {} (max abs error {:.2e})\n",
               chained ? "default schedule " : "", scope, cmp->max_abs_error);
    if (chained) {
      auto against_default = CheckAgainstDefault(func, **kernel, *default_func, *target, o.seed);
      if (!against_default.ok()) {
        fmt::print(stderr, "error: check failed to run: {}\n", against_default.status().ToString());
        return kExitInternalError;
      }
      if (!against_default->equal) {
        fmt::print("check     FAIL: the tuned kernel differs from the default schedule at full size: {}\n",
                   against_default->message);
        return kExitUserError;
      }
      fmt::print("check     correct: the tuned kernel matches the default schedule on random inputs, full size "
                 "(max abs error {:.2e})\n",
                 against_default->max_abs_error);
    }
  }

  std::vector<HostBuffer> args = MakeArguments(func, o.seed);
  auto call = PreparedCall::Prepare(**kernel, func, DataPointers(args));
  Result<TimingResult> timing = call.ok() ? TimeRun(**call, o.repeat, o.min_repeat_ms)
                                          : Result<TimingResult>(call.status());
  if (!timing.ok()) {
    fmt::print(stderr, "error: running {}: {}\n", w.name, timing.status().ToString());
    return kExitInternalError;
  }
  fmt::print("time      fastest group {:.3f} ms (what a record keeps), median {:.3f} ms, over {} groups{}\n",
             timing->best_seconds * 1e3, timing->median_seconds * 1e3, o.repeat,
             call.ok() && (*call)->prepacked() ? " (constant inputs packed once, before timing)" : "");
  fmt::print("speed     {:.2f} GFLOP/s (fastest group), {:.2f} GFLOP/s (median)\n", flops / timing->best_seconds / 1e9,
             flops / timing->median_seconds / 1e9);
  if (logged) {
    // Both are fastest groups of the same recipe (measure/timing.h), the log's
    // averaged over the record's trace.
    fmt::print("          {:.2f}x the log's time for this record\n", *logged->record.RankSec() / timing->best_seconds);
  }
  return kExitOk;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Compile a workload (default or tuned schedule), check it, time it");
  cmd->footer(
      "Compiles WORKLOAD (a .tf file in the workload language) with its default, untuned\n"
      "schedule for this machine, checks the result against the reference interpreter on\n"
      "random inputs, and prints its time and GFLOP/s.\n\n"
      "With --db, it runs the log's best schedule instead: the record `tunefarm compile --db`\n"
      "builds, with this build's code. It prints the record's logged time next to today's,\n"
      "so a stale time (another toolchain, a slower or faster machine state) shows.\n\n"
      "With --target \"cuda -arch=sm_90\" it runs on this machine's GPU (--gpu N) as a tuning\n"
      "candidate is measured: built with NVRTC, checked against the reference by the runner\n"
      "(--check none skips it), timed in groups; the default is the default GPU program.\n\n"
      "Examples:\n"
      "  tunefarm run configs/workloads/gmm_512.tf\n"
      "  tunefarm run configs/workloads/gmm_512.tf --db tunefarm.db --threads 1\n"
      "  tunefarm run configs/workloads/gmm_1024.tf --target \"cuda -arch=sm_90\" --db gpu.db");
  cmd->add_option("workload", options->workload_path, "Workload file, e.g. configs/workloads/gmm_1024.tf")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--target", options->target, "Target to compile for (must run here: this CPU, or a GPU of this machine)")->capture_default_str();
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
  cmd->add_option("--db", options->db, "Tuning log: run its best schedule for the workload and --target");
  cmd->add_option("--gpu", options->gpu, "For a cuda target: the GPU of this machine that runs it (the driver's ordinal)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--system-db", options->system_db,
                  "Read-only system log under the user's (default: the installed one, if any)");
  cmd->callback([options, exit_code] { *exit_code = Run(*options); });
}

}  // namespace tunefarm::cli
