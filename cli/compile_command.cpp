// `tunefarm compile`: ahead-of-time object file and C header for a workload.
//
// The object needs only libtunefarm_runtime (parallel loops, big buffers).
// The schedule is the tuning log's best record for the workload and target
// (through the fallback chain: same device, then same architecture), else the
// default schedule; stderr says which and why. --require-tuned turns the
// fallback into an error (exit code 3), for builds that must not ship an
// untuned kernel.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/codegen_llvm.h"
#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/schedule.h"
#include "tunefarm/compiler/trace.h"
#include "tunefarm/compiler/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/tuner/tuning_loop.h"

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

// The folder holding libtunefarm_runtime.so: <prefix>/lib when installed,
// <build>/runtime in a build tree.
std::string RuntimeLibraryDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const char* rel : {"../lib", "../runtime"}) {
    auto dir = (exe.parent_path() / rel).lexically_normal();
    if (std::filesystem::exists(dir / "libtunefarm_runtime.so")) return dir.string();
  }
  return "";
}

// Links an object into a shared library that finds the runtime by rpath.
Status LinkShared(const std::string& object_bytes, const std::string& output) {
  std::string runtime = RuntimeLibraryDir();
  if (runtime.empty()) return Status::NotFound("cannot find libtunefarm_runtime.so next to the tunefarm executable");
  auto tmp = std::filesystem::temp_directory_path() / ("tunefarm_compile_" + std::to_string(::getpid()) + ".o");
  {
    std::ofstream obj(tmp, std::ios::binary);
    obj.write(object_bytes.data(), std::streamsize(object_bytes.size()));
    if (!obj) return Status::IOError("cannot write " + tmp.string());
  }
  std::string cmd = "cc -shared -o '" + output + "' '" + tmp.string() + "' -L'" + runtime + "' -ltunefarm_runtime -Wl,-rpath,'" +
                    runtime + "' -lm";
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(tmp);
  if (rc != 0) return Status::IOError("linking " + output + " failed: " + cmd);
  return Status::OK();
}

constexpr int kExitNotTuned = 3;

// What the object was built from, for the header and stderr.
struct ScheduleSource {
  std::string description = "default (untuned)";
  int64_t record_id = 0;
};

// The log's best schedule for `w` on `target`, applied to the default
// PrimFunc; `source` says what was used. Returns the default PrimFunc when
// there is no usable record.
Result<ir::PrimFunc> ChooseSchedule(const CompileOptions& o, const Workload& w, const Target& target,
                                    const ir::PrimFunc& default_func, ScheduleSource* source) {
  if (o.db.empty()) {
    fmt::print(stderr, "tunefarm compile: {}: no --db given; using the default schedule\n", w.name);
    return default_func;
  }
  database::OpenOptions read_only;
  read_only.read_only = true;
  std::string system = o.system_db.empty() ? database::DefaultSystemDatabasePath() : o.system_db;
  TF_ASSIGN_OR_RETURN(auto db, database::LayeredDatabase::Open(o.db, system, read_only, !o.system_db.empty()));
  TF_ASSIGN_OR_RETURN(database::LayeredBest best, db->GetBest(StructuralHashHex(w), tuner::RecordTarget(target)));
  if (!best.best.record) {
    fmt::print(stderr, "tunefarm compile: {}: warning: no tuning record for this workload and target in {}; "
               "using the default schedule\n", w.name, o.db);
    return default_func;
  }
  const database::TuningRecord& r = *best.best.record;
  TF_ASSIGN_OR_RETURN(Trace trace, Trace::Parse(r.trace));
  Schedule sch(default_func);
  Status applied = trace.ApplyTo(sch);
  if (!applied.ok()) {
    return Status::Corruption("record #" + std::to_string(r.id) + " of " + o.db + " does not replay on " + w.name + ": " +
                              applied.message());
  }
  double mean = r.MeanSec().value_or(0);
  source->record_id = r.id;
  source->description = fmt::format("tuned: record #{} of the {} log ({} match), {:.4f} ms measured", r.id,
                                    database::LayerName(best.layer), database::FallbackLevelName(best.best.level),
                                    mean * 1e3);
  fmt::print(stderr, "tunefarm compile: {}: using record #{} ({} log, {} match, {:.4f} ms measured on {})\n", w.name, r.id,
             database::LayerName(best.layer), database::FallbackLevelName(best.best.level), mean * 1e3,
             r.target.fingerprint.arch);
  return sch.func();
}

const char* CType(ir::DataType t) {
  if (t.is_float()) return t.bits == 16 ? "uint16_t" : (t.bits == 32 ? "float" : "double");
  if (t.is_bool()) return "uint8_t";
  static const char* kInt[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
  static const char* kUInt[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  int i = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : 3;
  return t.is_uint() ? kUInt[i] : kInt[i];
}

std::string HeaderText(const Workload& w, const ir::PrimFunc& f, const Target& t, const ScheduleSource& source) {
  std::string guard = "TUNEFARM_KERNEL_" + f.name + "_H_";
  for (char& c : guard) c = char(std::toupper(static_cast<unsigned char>(c)));
  std::string s = "/* Generated by tunefarm compile. Do not edit.\n";
  s += " * workload: " + w.name + " (structural hash " + StructuralHashHex(w) + ")\n";
  s += " * target:   " + t.ToString() + "\n";
  s += " * schedule: " + source.description + "\n";
  if (source.record_id > 0) s += " * record id: " + std::to_string(source.record_id) + "\n";
  s += " * Buffers are dense, row-major, and should be 64-byte aligned. Link with -ltunefarm_runtime.\n";
  s += " * Returns 0 on success. */\n";
  s += "#ifndef " + guard + "\n#define " + guard + "\n\n#include <stdint.h>\n\n";
  s += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  s += "int32_t " + f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const ir::Buffer& b = f.params[i];
    std::string shape;
    for (size_t d = 0; d < b->shape.size(); ++d) shape += (d ? "][" : "[") + std::to_string(b->shape[d]);
    shape += "]";
    s += std::string(i ? ",\n    " : "\n    ") + (i < f.num_inputs ? "const " : "") + CType(b->dtype) + "* " +
         b->name + (i < f.num_inputs ? "  /* input " : "  /* output ") + b->dtype.ToString() + shape + " */";
  }
  s += ");\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return s;
}

int Compile(const CompileOptions& o) {
  auto w = LoadWorkload(o.workload_path, o.overrides);
  if (!w.ok()) {
    fmt::print(stderr, "error: {}\n", w.status().message());
    return kExitUserError;
  }
  auto target = Target::Parse(o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  auto f = LowerToPrimFunc(*w);
  if (!f.ok()) {
    fmt::print(stderr, "error: {}\n", f.status().message());
    return kExitInternalError;
  }
  ScheduleSource source;
  auto chosen = ChooseSchedule(o, *w, *target, *f, &source);
  if (!chosen.ok()) {
    fmt::print(stderr, "error: {}\n", chosen.status().message());
    return kExitUserError;
  }
  if (o.require_tuned && source.record_id == 0) {
    fmt::print(stderr, "error: {}: --require-tuned and no tuning record matches {} (tune it first: tunefarm tune)\n",
               w->name, target->ToString());
    return kExitNotTuned;
  }
  auto object = EmitObject(*chosen, *target);
  if (!object.ok()) {
    fmt::print(stderr, "error: {}\n", object.status().message());
    return object.status().code() == StatusCode::kInvalidArgument ? kExitUserError : kExitInternalError;
  }
  if (o.shared) {
    if (!target->is_host()) {
      fmt::print(stderr, "error: --shared links with this machine's linker; build an object (-o x.o) for {}\n",
                 target->ToString());
      return kExitUserError;
    }
    Status linked = LinkShared(*object, o.output);
    if (!linked.ok()) {
      fmt::print(stderr, "error: {}\n", linked.message());
      return kExitUserError;
    }
  } else {
    std::ofstream out(o.output, std::ios::binary);
    out.write(object->data(), std::streamsize(object->size()));
    if (!out) {
      fmt::print(stderr, "error: cannot write {}\n", o.output);
      return kExitUserError;
    }
  }
  if (!o.header.empty()) {
    std::ofstream h(o.header);
    h << HeaderText(*w, *chosen, *target, source);
    if (!h) {
      fmt::print(stderr, "error: cannot write {}\n", o.header);
      return kExitUserError;
    }
  }
  fmt::print(stderr, "tunefarm compile: wrote {} ({} bytes) for {}\n", o.output, object->size(), target->ToString());
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
