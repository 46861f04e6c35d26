// `tunefarm compile`: ahead-of-time object file and C header for a workload
// (an ONNX model goes to compile_model.cpp).
//
// The object needs only libtunefarm_runtime (parallel loops, big buffers).
// The schedule is the tuning log's best record for the workload and target
// (through the fallback chain: same device, then same architecture), else the
// default schedule; stderr says which and why. --require-tuned turns the
// fallback into an error (exit code 3), for builds that must not ship an
// untuned kernel. A kernel whose only record was measured under emulation
// (qemu) is built from it with a warning on stderr and in the header, since
// its time says nothing about a real board. The building itself is tuner/kernel_build.h's
// ChooseSchedule and BuildKernel, shared with the daemon's Compile service;
// this file is its command line.
//
// A cuda target ("cuda -arch=sm_90") writes the cubin to -o and always a
// header (--header, default: -o's stem with .h) with a host launcher
// (tuner/kernel_header.h); its default is the default GPU program. It needs
// NVRTC on this machine, and no GPU.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/core.h>

#include "commands.h"
#include "compile_command.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/frontend/model.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::cli {

// The CLI's report of the chosen schedule, on stderr, before code generation.
void ReportSchedule(const CompileOptions& o, const Target& target, const tuner::BuiltKernel& k) {
  // For a GPU, the default is a program of its own: say which.
  const std::string default_name =
      target.kind == "cuda" ? "the " + k.schedule_description : std::string("the default schedule");
  if (o.db.empty()) {
    fmt::print(stderr, "tunefarm compile: {}: no --db given; using {}\n", k.workload_name, default_name);
  } else if (!k.tuned()) {
    fmt::print(stderr, "tunefarm compile: {}: warning: no tuning record for this workload and target in {}; "
               "using {}\n", k.workload_name, o.db, default_name);
  } else {
    fmt::print(stderr, "tunefarm compile: {}: using record #{} ({} log, {} match, {:.4f} ms measured on {})\n",
               k.workload_name, k.record_id, database::LayerName(k.layer), database::FallbackLevelName(k.level),
               k.mean_seconds * 1e3, k.record_arch);
    // The log answers with an emulated record only when it has nothing
    // measured on real hardware: the schedule is used, its time is not news.
    if (std::string emulated = tuner::EmulatedRecordWarning(k); !emulated.empty()) {
      fmt::print(stderr, "tunefarm compile: {}: warning: {}\n", k.workload_name, emulated);
    }
    if (!k.record_other_toolchain.empty()) {
      fmt::print(stderr, "tunefarm compile: {}: note: that time was taken with code of toolchain '{}', not this "
                 "build's '{}', and may be off either way; `tunefarm tune` on the log measures its best records again\n",
                 k.workload_name, k.record_other_toolchain, CodegenToolchain());
    }
  }
}

// Why `path` (the file of `flag`) cannot be written, checked before the
// compile so that a mistyped folder costs nothing; OK when it can be.
Status CheckOutputPath(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  fs::path parent = fs::absolute(fs::path(path)).parent_path();
  std::error_code ec;
  if (!fs::exists(parent, ec)) {
    return Status::InvalidArgument("cannot write " + flag + " " + path + ": the folder " + parent.string() +
                                   " does not exist");
  }
  if (!fs::is_directory(parent, ec)) {
    return Status::InvalidArgument("cannot write " + flag + " " + path + ": " + parent.string() + " is not a folder");
  }
  if (fs::is_directory(fs::path(path), ec)) {
    return Status::InvalidArgument("cannot write " + flag + " " + path + ": it is a folder; name a file");
  }
  return Status::OK();
}

// Writes `bytes` to `path`; the error says which file and the system's reason.
Status WriteOutputFile(const std::string& flag, const std::string& path, const std::string& bytes) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) {
    int error = errno;
    return Status::IOError("cannot write " + flag + " " + path + ": " +
                           (error != 0 ? std::strerror(error) : "the write failed"));
  }
  return Status::OK();
}

Result<std::unique_ptr<database::LayeredDatabase>> OpenCompileLog(const CompileOptions& o) {
  if (o.db.empty()) return std::unique_ptr<database::LayeredDatabase>();
  database::OpenOptions read_only;
  read_only.read_only = true;
  std::string system = o.system_db.empty() ? database::DefaultSystemDatabasePath() : o.system_db;
  return database::LayeredDatabase::Open(o.db, system, read_only, !o.system_db.empty());
}

namespace {

// What a cuda target needs before anything is looked up or built: no
// --shared, NVRTC on this machine, and a header path (--header, else -o's
// stem with .h, set in *header_path) that is not -o itself.
Status CheckCudaCompile(const CompileOptions& o, std::string* header_path) {
  if (o.shared) {
    return Status::InvalidArgument("--shared builds a library for this machine's CPU; a cuda target writes a cubin "
                                   "(-o kernel.cubin) and a header with its host launcher: drop --shared");
  }
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) {
    return Status::FailedPrecondition("compiling for a cuda target needs NVRTC, the CUDA runtime compiler (CUDA "
                                      "toolkit 12 or 13; set CUDA_HOME to its folder), and none was found: " + why_not);
  }
  if (header_path->empty()) {
    *header_path = std::filesystem::path(o.output).replace_extension(".h").string();
  }
  auto normal = [](const std::string& path) { return std::filesystem::absolute(path).lexically_normal(); };
  if (normal(*header_path) == normal(o.output)) {
    return Status::InvalidArgument("the cubin -o " + o.output + " and its header " + *header_path +
                                   " are one file; name the cubin kernel.cubin (its header is then kernel.h) "
                                   "or give --header");
  }
  return Status::OK();
}

int Compile(const CompileOptions& o) {
  if (frontend::IsModelPath(o.workload_path)) return CompileModel(o);
  if (o.embed_weights) {
    // A workload file declares its constants' shapes, never their values:
    // saying nothing would leave a user expecting weights in the object.
    fmt::print(stderr, "error: --embed-weights: {} is a workload file, which holds no weight values to embed; the "
               "option is for ONNX models (.onnx), whose weights it puts in the object\n", o.workload_path);
    return kExitUserError;
  }
  auto w = LoadWorkload(o.workload_path, o.overrides);
  if (!w.ok()) {
    fmt::print(stderr, "error: {}\n", w.status().message());
    return kExitUserError;
  }
  auto target = ParseTargetField("--target", o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  std::string header_path = o.header;
  if (target->kind == "cuda") {
    if (Status usable = CheckCudaCompile(o, &header_path); !usable.ok()) {
      fmt::print(stderr, "error: {}\n", usable.message());
      return kExitUserError;
    }
  }
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"-o", o.output}, {"--header", header_path}}) {
    if (path.empty()) continue;
    if (Status writable = CheckOutputPath(flag, path); !writable.ok()) {
      fmt::print(stderr, "error: {}\n", writable.message());
      return kExitUserError;
    }
  }
  // Once each: the workload was parsed above; it is lowered here, and the
  // chosen record's trace is parsed and replayed in the lookup only.
  auto default_func = LowerToPrimFunc(*w);
  if (!default_func.ok()) {
    fmt::print(stderr, "error: {}\n", default_func.status().message());
    return kExitInternalError;
  }
  // The log is opened after lowering, so that errors keep the order they have
  // always had.
  auto db = OpenCompileLog(o);
  if (!db.ok()) {
    fmt::print(stderr, "error: {}\n", db.status().message());
    return kExitUserError;
  }
  auto schedule = tuner::ChooseSchedule(db->get(), o.db, StructuralHashHex(*w), w->name,
                                        tuner::KernelRecordTarget(*target, std::nullopt), *default_func);
  if (!schedule.ok()) {
    fmt::print(stderr, "error: {}\n", schedule.status().message());
    return kExitUserError;
  }
  tuner::KernelBuildOptions build;
  build.shared = o.shared;
  build.require_tuned = o.require_tuned;
  build.log_name = o.db;
  build.on_schedule_chosen = [&](const tuner::BuiltKernel& k) { ReportSchedule(o, *target, k); };
  tuner::KernelBuildStage stage = tuner::KernelBuildStage::kLower;
  auto kernel = tuner::BuildKernel(*w, *target, *schedule, build, &stage);
  if (!kernel.ok()) {
    const Status& s = kernel.status();
    switch (stage) {
      case tuner::KernelBuildStage::kLower:
        fmt::print(stderr, "error: {}\n", s.message());
        return kExitInternalError;
      case tuner::KernelBuildStage::kSchedule:
        fmt::print(stderr, "error: {}\n", s.message());
        return kExitUserError;
      case tuner::KernelBuildStage::kRequireTuned:
        fmt::print(stderr, "error: {}: --require-tuned and no tuning record matches {} (tune it first: tunefarm tune)\n",
                   w->name, target->ToString());
        return kExitNotTuned;
      case tuner::KernelBuildStage::kCodegen:
        fmt::print(stderr, "error: {}\n", s.message());
        return s.code() == StatusCode::kInvalidArgument ? kExitUserError : kExitInternalError;
      case tuner::KernelBuildStage::kLink:
        if (!target->is_host()) {
          fmt::print(stderr, "error: --shared links with this machine's linker; build an object (-o x.o) for {}\n",
                     target->ToString());
        } else {
          fmt::print(stderr, "error: {}\n", s.message());
        }
        return kExitUserError;
    }
    fmt::print(stderr, "error: {}\n", s.message());
    return kExitInternalError;
  }
  if (Status written = WriteOutputFile("-o", o.output, kernel->binary); !written.ok()) {
    fmt::print(stderr, "error: {}\n", written.message());
    return kExitUserError;
  }
  if (o.shared) {
    // As the linker would have made it: a loadable, executable file.
    std::error_code ignored;
    std::filesystem::permissions(o.output,
                                 std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add, ignored);
  }
  if (!header_path.empty()) {
    if (Status written = WriteOutputFile("--header", header_path, kernel->header); !written.ok()) {
      fmt::print(stderr, "error: {}\n", written.message());
      return kExitUserError;
    }
  }
  if (target->kind == "cuda") {
    fmt::print(stderr, "tunefarm compile: wrote {} ({} bytes) for {} and {} (launcher {})\n", o.output,
               kernel->object_size, target->ToString(), header_path, kernel->symbol);
  } else {
    fmt::print(stderr, "tunefarm compile: wrote {} ({} bytes) for {}\n", o.output, kernel->object_size,
               target->ToString());
  }
  return kExitOk;
}

}  // namespace

void AddCompileCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Build an object file and C header for a workload or an ONNX model");
  cmd->footer(
      "Compiles WORKLOAD ahead of time into a relocatable object file exporting\n"
      "  int32_t <workload name>(inputs..., outputs...)\n"
      "and optionally a C header declaring it. Any target triple LLVM supports works,\n"
      "e.g. --target \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\"; for SVE boards name their\n"
      "vector length, --target \"llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -sve-bits=256\":\n"
      "the kernel then runs only where the SVE length is 256 bits.\n"
      "With --target \"cuda -arch=sm_90\" (needs NVRTC, not a GPU) it writes the cubin for that\n"
      "architecture and a header (--header, default: the -o file with .h) holding a copy of it and\n"
      "  CUresult <workload name>_launch(CUstream, inputs..., outputs...)\n"
      "on the CUDA driver API (link with -lcuda); the default is the default GPU program.\n"
      "An ONNX model (.onnx) compiles into one object holding every task's kernel and\n"
      "  int32_t <model>_bind(void** slots, void* workspace),\n"
      "  int32_t <model>_prepack(void* const* slots), int32_t <model>_run(void* const* slots)\n"
      "which run the model on the caller's inputs, weights and outputs, one buffer per slot, and\n"
      "one workspace the intermediates share; constants not in the .onnx (all weights with\n"
      "--embed-weights) are in the object. The header names the slots, their sizes and which\n"
      "the caller fills (llvm targets; docs/models.md, Compile a model).");
  cmd->add_option("workload", options->workload_path, "Workload file (.tf) or ONNX model (.onnx)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--target", options->target, "Target to compile for")->capture_default_str();
  cmd->add_option("--set", options->overrides,
                  "Override a shape parameter, e.g. --set M=16 (a model: a symbolic input dimension, --set batch=1)");
  cmd->add_option("-o,--output", options->output, "Object file (with --shared, library; for a cuda target, the cubin) to write")->required();
  cmd->add_flag("--shared", options->shared, "Write a shared library (.so) linked against the runtime instead");
  cmd->add_option("--header", options->header, "C header to write (cuda targets: default the -o file with .h)");
  cmd->add_option("--db", options->db, "Tuning log to take the best schedule from");
  cmd->add_option("--system-db", options->system_db, "Read-only system log under the user's (default: the installed one, if any)");
  cmd->add_flag("--require-tuned", options->require_tuned, "Fail (exit code 3) instead of using the default schedule");
  cmd->add_flag("--embed-weights", options->embed_weights,
                "An ONNX model: put every weight in the object (constants not in the file always are)");
  cmd->callback([options, exit_code] { *exit_code = Compile(*options); });
}

}  // namespace tunefarm::cli
