// `tunefarm compile`: ahead-of-time object file and C header for a workload.
//
// The object needs only libtunefarm_runtime (parallel loops, big buffers).
// The schedule is the tuning log's best record for the workload and target
// (through the fallback chain: same device, then same architecture), else the
// default schedule; stderr says which and why. --require-tuned turns the
// fallback into an error (exit code 3), for builds that must not ship an
// untuned kernel. The building itself is tuner/kernel_build.h's
// ChooseSchedule and BuildKernel, shared with the daemon's Compile service;
// this file is its command line.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::cli {

namespace {

struct CompileOptions {
  std::string workload_path;
  std::string target = "llvm";
  std::vector<std::string> overrides;
  std::string output;
  std::string header;
  std::string db;
  std::string system_db;
  bool require_tuned = false;
  bool shared = false;
};

constexpr int kExitNotTuned = 3;

// The CLI's report of the chosen schedule, on stderr, before code generation.
void ReportSchedule(const CompileOptions& o, const tuner::BuiltKernel& k) {
  if (o.db.empty()) {
    fmt::print(stderr, "tunefarm compile: {}: no --db given; using the default schedule\n", k.workload_name);
  } else if (!k.tuned()) {
    fmt::print(stderr, "tunefarm compile: {}: warning: no tuning record for this workload and target in {}; "
               "using the default schedule\n", k.workload_name, o.db);
  } else {
    fmt::print(stderr, "tunefarm compile: {}: using record #{} ({} log, {} match, {:.4f} ms measured on {})\n",
               k.workload_name, k.record_id, database::LayerName(k.layer), database::FallbackLevelName(k.level),
               k.mean_seconds * 1e3, k.record_arch);
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

int Compile(const CompileOptions& o) {
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
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"-o", o.output}, {"--header", o.header}}) {
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
  std::unique_ptr<database::LayeredDatabase> db;
  if (!o.db.empty()) {
    database::OpenOptions read_only;
    read_only.read_only = true;
    std::string system = o.system_db.empty() ? database::DefaultSystemDatabasePath() : o.system_db;
    auto opened = database::LayeredDatabase::Open(o.db, system, read_only, !o.system_db.empty());
    if (!opened.ok()) {
      fmt::print(stderr, "error: {}\n", opened.status().message());
      return kExitUserError;
    }
    db = std::move(opened).value();
  }
  auto schedule = tuner::ChooseSchedule(db.get(), o.db, StructuralHashHex(*w), w->name,
                                        tuner::KernelRecordTarget(*target, std::nullopt), *default_func);
  if (!schedule.ok()) {
    fmt::print(stderr, "error: {}\n", schedule.status().message());
    return kExitUserError;
  }
  tuner::KernelBuildOptions build;
  build.shared = o.shared;
  build.require_tuned = o.require_tuned;
  build.log_name = o.db;
  build.on_schedule_chosen = [&](const tuner::BuiltKernel& k) { ReportSchedule(o, k); };
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
  if (!o.header.empty()) {
    if (Status written = WriteOutputFile("--header", o.header, kernel->header); !written.ok()) {
      fmt::print(stderr, "error: {}\n", written.message());
      return kExitUserError;
    }
  }
  fmt::print(stderr, "tunefarm compile: wrote {} ({} bytes) for {}\n", o.output, kernel->object_size,
             target->ToString());
  return kExitOk;
}

}  // namespace

void AddCompileCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Build an object file and C header for a workload");
  cmd->footer(
      "Compiles WORKLOAD ahead of time into a relocatable object file exporting\n"
      "  int32_t <workload name>(inputs..., outputs...)\n"
      "and optionally a C header declaring it. Any target triple LLVM supports works,\n"
      "e.g. --target \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\".");
  cmd->add_option("workload", options->workload_path, "Workload file (.tf)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--target", options->target, "Target to compile for")->capture_default_str();
  cmd->add_option("--set", options->overrides, "Override a shape parameter, e.g. --set M=16");
  cmd->add_option("-o,--output", options->output, "Object file (or, with --shared, library) to write")->required();
  cmd->add_flag("--shared", options->shared, "Write a shared library (.so) linked against the runtime instead");
  cmd->add_option("--header", options->header, "C header to write");
  cmd->add_option("--db", options->db, "Tuning log to take the best schedule from");
  cmd->add_option("--system-db", options->system_db, "Read-only system log under the user's (default: the installed one, if any)");
  cmd->add_flag("--require-tuned", options->require_tuned, "Fail (exit code 3) instead of using the default schedule");
  cmd->callback([options, exit_code] { *exit_code = Compile(*options); });
}

}  // namespace tunefarm::cli
