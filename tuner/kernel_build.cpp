// Building a kernel from the tuning log (kernel_build.h). The order of the
// steps -- lower, look up, replay, require_tuned, codegen, link -- is the
// order `tunefarm compile` has always reported errors in; keep it.
#include "tunefarm/tuner/kernel_build.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/kernel_header.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::tuner {

namespace fs = std::filesystem;

namespace {

// Single-quoted for /bin/sh: the runtime folder comes from configuration.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A temporary directory removed with its contents when this goes out of
// scope. Concurrent builds in one daemon each get their own, so their
// object and library files never collide (a pid-based name would).
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "tunefarm_kernel_XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

// The library needs libtunefarm_runtime.so and looks for it beside itself
// (RUNPATH $ORIGIN) and then where the loader looks (the installed lib
// folder, LD_LIBRARY_PATH). It names no folder of the machine that linked it:
// the daemon's build or install tree means nothing where the library runs.
Result<std::string> LinkSharedLibrary(const std::string& object_bytes, const std::string& runtime_dir) {
  std::string runtime = runtime_dir.empty() ? DefaultRuntimeLibraryDir() : runtime_dir;
  if (runtime.empty() || !fs::exists(fs::path(runtime) / "libtunefarm_runtime.so")) {
    return Status::NotFound(runtime_dir.empty() ? "cannot find libtunefarm_runtime.so next to the tunefarm executable"
                                                : "cannot find libtunefarm_runtime.so in " + runtime_dir);
  }
  ScratchDir dir;
  if (dir.path().empty()) return Status::IOError("cannot create a temporary directory in " + fs::temp_directory_path().string());
  std::string object = dir.path() + "/kernel.o", library = dir.path() + "/kernel.so";
  {
    std::ofstream obj(object, std::ios::binary);
    obj.write(object_bytes.data(), std::streamsize(object_bytes.size()));
    if (!obj) return Status::IOError("cannot write " + object);
  }
  std::string cmd = "cc -shared -o " + ShellQuote(library) + " " + ShellQuote(object) + " -L" + ShellQuote(runtime) +
                    " -ltunefarm_runtime -Wl,-rpath,'$ORIGIN' -lm";
  if (std::system(cmd.c_str()) != 0) return Status::IOError("linking a shared library failed: " + cmd);
  std::ifstream in(library, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!in) return Status::IOError("cannot read the linked library " + library);
  return bytes.str();
}

namespace {

// How a cuda kernel's header and the CLI name the default GPU program.
constexpr char kDefaultGpuProgram[] =
    "default GPU program (untuned): each loop nest one kernel, its leading spatial loops fused and split over "
    "blocks of 256 threads";

// True for the trace of no record (empty) and for one of only the trace
// header: the runner builds both as the default program.
bool ScheduleHasNoInstructions(const std::string& trace_text) {
  if (!TraceTextHasContent(trace_text)) return true;
  auto parsed = Trace::Parse(trace_text);
  return parsed.ok() && parsed->size() == 0;
}

Result<BuiltKernel> Fail(KernelBuildStage stage, Status status, KernelBuildStage* failed_stage) {
  if (failed_stage != nullptr) *failed_stage = stage;
  return status;
}

std::string PassedOverNote(const std::vector<PassedOverRecord>& passed_over) {
  if (passed_over.empty()) return "";
  std::string ids;
  for (const PassedOverRecord& p : passed_over) ids += (ids.empty() ? "#" : ", #") + std::to_string(p.id);
  return "; passed over faster record(s) " + ids + " whose traces no longer replay";
}

// The description of a tuned schedule, as the header and the CLI say it.
std::string TunedDescription(const BuiltKernel& kernel, const std::string& toolchain,
                             const std::vector<PassedOverRecord>& passed_over) {
  // A time taken with other code than this build makes from the trace
  // (an older tunefarm or LLVM) may be off either way: say so.
  const std::string stale = kernel.record_other_toolchain.empty()
                                ? ""
                                : " with code of toolchain '" + kernel.record_other_toolchain + "' (this build: '" +
                                      toolchain + "'; resuming `tunefarm tune` on the log times it again)";
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.4f", kernel.mean_seconds * 1e3);
  // Under emulation the time is qemu's, not a board's: the header says so
  // where it states the time.
  const std::string emulated = kernel.record_emulated
                                   ? " UNDER EMULATION (record uid " + kernel.record_uid + ", device " +
                                         kernel.record_device + "; the only record for this workload and target: "
                                         "its time says nothing about a real board)"
                                   : "";
  return "tuned: record #" + std::to_string(kernel.record_id) + " of the " +
         std::string(database::LayerName(kernel.layer)) + " log (" +
         std::string(database::FallbackLevelName(kernel.level)) + " match), " + ms + " ms measured" + emulated +
         stale + PassedOverNote(passed_over);
}

}  // namespace

std::string EmulatedRecordWarning(const BuiltKernel& kernel) {
  if (!kernel.tuned() || !kernel.record_emulated) return "";
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.4f", kernel.mean_seconds * 1e3);
  return "the only record for " + kernel.workload_name + " on " + kernel.target +
         " was measured under emulation (record uid " + kernel.record_uid + ", device " + kernel.record_device +
         (kernel.record_worker.empty() ? "" : " on worker " + kernel.record_worker) + ", arch " +
         kernel.record_arch + "): its time (" + ms +
         " ms) says nothing about a real board; the kernel uses its schedule for want of a measured one "
         "(tune on a board of this target to replace it)";
}

std::string CudaKernelToolchain() { return "nvrtc lowering-r" + std::to_string(kLoweringRevision); }

database::Target KernelRecordTarget(const Target& target,
                                    const std::optional<database::HardwareFingerprint>& fingerprint) {
  if (!fingerprint && target.kind == "cuda") {
    // Not this host's CPU: the records of a GPU of the target's architecture
    // (the same-architecture rung; the exact part is unknown here).
    database::Target out;
    out.target = target.ToString();
    out.fingerprint.isa = "cuda";
    out.fingerprint.arch = target.arch;
    out.fingerprint.toolchain = CudaKernelToolchain();
    return out;
  }
  if (!fingerprint) return RecordTarget(target);
  database::Target out{target.ToString(), *fingerprint};
  database::CanonicalizeFingerprint(&out.fingerprint);
  return out;
}

std::string DefaultRuntimeLibraryDir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const char* rel : {"../lib", "../runtime"}) {
    auto dir = (exe.parent_path() / rel).lexically_normal();
    if (fs::exists(dir / "libtunefarm_runtime.so")) return dir.string();
  }
  return "";
}

Result<ChosenSchedule> ChooseSchedule(database::TuningLog* log, const std::string& log_name,
                                      std::string_view workload_hash, const std::string& workload_name,
                                      const database::Target& record_target, const ir::PrimFunc& default_func) {
  ChosenSchedule chosen;
  chosen.func = default_func;
  if (log == nullptr) return chosen;
  ReplayedRecord replayed;
  TF_ASSIGN_OR_RETURN(chosen.best,
                      log->GetBest(workload_hash, record_target,
                                   TraceReplaysOn(default_func, &chosen.passed_over, &replayed)));
  if (!chosen.best.record) {
    if (!chosen.passed_over.empty()) return NoRecordReplays(chosen.passed_over, log_name, workload_name);
    return chosen;
  }
  // The lookup replayed the record it answers with: its schedule is built,
  // the trace is not parsed again.
  if (replayed.uid != chosen.best.record->uid) {
    return Status::Internal("record #" + std::to_string(chosen.best.record->id) + " of " + log_name +
                            " is not the record the lookup replayed last");
  }
  chosen.func = std::move(replayed.func);
  return chosen;
}

Result<BuiltKernel> DescribeKernel(const Workload& w, const Target& target, const ChosenSchedule& schedule,
                                   const KernelBuildOptions& options, KernelBuildStage* failed_stage) {
  BuiltKernel kernel;
  kernel.workload_name = w.name;
  kernel.workload_hash = StructuralHashHex(w);
  kernel.target = target.ToString();
  kernel.schedule_description = "default (untuned)";
  if (schedule.best.record) {
    const database::TuningRecord& r = *schedule.best.record;
    kernel.trace = r.trace;
    kernel.record_id = r.id;
    kernel.record_uid = r.uid;
    kernel.mean_seconds = r.RankSec().value_or(0);
    kernel.level = schedule.best.level;
    kernel.layer = schedule.best.layer;
    kernel.record_arch = r.target.fingerprint.arch;
    kernel.record_emulated = r.emulated;
    kernel.record_device = r.device;
    kernel.record_worker = r.worker;
    const std::string toolchain = KernelRecordTarget(target, options.fingerprint).fingerprint.toolchain;
    if (r.target.fingerprint.toolchain != toolchain) kernel.record_other_toolchain = r.target.fingerprint.toolchain;
    kernel.schedule_description = TunedDescription(kernel, toolchain, schedule.passed_over);
  }
  // A cuda schedule without instructions (no record, or the tuning loop's
  // baseline record) is the default GPU program, as the cuda runner
  // measured it: unbound loops do not run on a GPU at all.
  const bool default_gpu_program = target.kind == "cuda" && ScheduleHasNoInstructions(kernel.trace);
  if (default_gpu_program && !kernel.tuned()) kernel.schedule_description = kDefaultGpuProgram;
  kernel.symbol = KernelEntrySymbol(schedule.func, target);
  kernel.shared = options.shared;
  if (options.on_schedule_chosen) options.on_schedule_chosen(kernel);
  if (options.require_tuned && !kernel.tuned()) {
    return Fail(KernelBuildStage::kRequireTuned,
                Status::NotFound("no tuning record for workload " + w.name + " (structural hash " +
                                 kernel.workload_hash + ") on target " + kernel.target + " in " + options.log_name),
                failed_stage);
  }
  return kernel;
}

Result<BuiltKernel> BuildKernel(const Workload& w, const Target& target, const ChosenSchedule& schedule,
                                const KernelBuildOptions& options, KernelBuildStage* failed_stage) {
  TF_ASSIGN_OR_RETURN(BuiltKernel kernel, DescribeKernel(w, target, schedule, options, failed_stage));
  const bool default_gpu_program = target.kind == "cuda" && ScheduleHasNoInstructions(kernel.trace);
  ir::PrimFunc func = schedule.func;
  if (default_gpu_program) {
    auto bound = DefaultGpuSchedule(func);
    if (!bound.ok()) {
      return Fail(KernelBuildStage::kCodegen,
                  Status(bound.status().code(), "the default GPU program: " + bound.status().message()), failed_stage);
    }
    func = std::move(bound).value();
  }
  // Refused before code generation, which it does not depend on (for a cuda
  // target, NVRTC would compile for nothing).
  if (options.shared && !target.is_host()) {
    return Fail(KernelBuildStage::kLink,
                Status::InvalidArgument(target.kind == "cuda"
                                            ? "a cuda target builds a cubin and a launcher header, not a shared "
                                              "library; build " + kernel.target + " without a shared library"
                                            : "a shared library is linked with this machine's linker; build an object for " +
                                                  kernel.target),
                failed_stage);
  }
  // The target kind's code generator (the registry of codegen.h): a kind
  // without one is InvalidArgument naming the kinds that have one.
  auto generator = CodeGeneratorFor(target);
  if (!generator.ok()) return Fail(KernelBuildStage::kCodegen, generator.status(), failed_stage);
  auto object = (*generator)->EmitObject(func, target, CodegenOptions());
  if (!object.ok()) return Fail(KernelBuildStage::kCodegen, object.status(), failed_stage);
  kernel.object_size = object->size();
  // The header of the target's kind (kernel_header.h), of what was compiled.
  auto header = KernelHeaderFor(w, func, target, *object, kernel.schedule_description, kernel.record_id);
  if (!header.ok()) return Fail(KernelBuildStage::kCodegen, header.status(), failed_stage);
  kernel.header = std::move(header).value();
  if (options.shared) {
    auto library = LinkSharedLibrary(*object, options.runtime_dir);
    if (!library.ok()) return Fail(KernelBuildStage::kLink, library.status(), failed_stage);
    kernel.binary = std::move(library).value();
  } else {
    kernel.binary = std::move(object).value();
  }
  return kernel;
}

Result<BuiltKernel> BuildKernelFromLog(const Workload& workload, const Target& target, database::TuningLog* log,
                                       const KernelBuildOptions& options, KernelBuildStage* failed_stage) {
  auto func = LowerToPrimFunc(workload);
  if (!func.ok()) return Fail(KernelBuildStage::kLower, func.status(), failed_stage);
  auto schedule = ChooseSchedule(log, options.log_name, StructuralHashHex(workload), workload.name,
                                 KernelRecordTarget(target, options.fingerprint), *func);
  if (!schedule.ok()) return Fail(KernelBuildStage::kSchedule, schedule.status(), failed_stage);
  return BuildKernel(workload, target, *schedule, options, failed_stage);
}

database::RecordUsable TraceReplaysOn(const ir::PrimFunc& default_func, std::vector<PassedOverRecord>* passed_over,
                                      ReplayedRecord* accepted) {
  return [&default_func, passed_over, accepted](const database::TuningRecord& record) {
    auto trace = Trace::Parse(record.trace);
    Status replayed = trace.ok() ? Status::OK() : trace.status();
    if (replayed.ok()) {
      Schedule sch(default_func);
      replayed = trace->ApplyTo(sch);
      if (replayed.ok() && accepted != nullptr) *accepted = ReplayedRecord{record.uid, sch.func()};
    }
    // The fallback levels overlap (a same-device record is also same-arch):
    // one entry per record. Row ids are per log, uids are unique.
    bool listed = std::any_of(passed_over->begin(), passed_over->end(),
                              [&](const PassedOverRecord& p) { return p.uid == record.uid; });
    if (!replayed.ok() && !listed) passed_over->push_back({record.id, record.uid, replayed.message()});
    return replayed.ok();
  };
}

Status NoRecordReplays(const std::vector<PassedOverRecord>& passed_over, const std::string& log_name,
                       const std::string& workload_name) {
  const PassedOverRecord& first = passed_over.front();
  std::string others =
      passed_over.size() > 1 ? " (nor do the " + std::to_string(passed_over.size() - 1) + " next fastest)" : "";
  return Status::Corruption("record #" + std::to_string(first.id) + " of " + log_name + " does not replay on " +
                            workload_name + ": " + first.why + others +
                            ". Most likely it was tuned by a tunefarm that lowered or scheduled this workload "
                            "differently; tune the workload again so that a record that fits becomes its best");
}

}  // namespace tunefarm::tuner
